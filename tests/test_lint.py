"""`alaya lint` on real vaults: planted problems are each reported with the right code, path
and line; a clean vault passes; output formats, severities and selection behave."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine.store.init_vault import init_vault
from vault_engine.store.vault import Vault

CARD = """---
id: {id}
title: {title}
type: {type}
created: 2026-11-01T10:00:00Z
updated: 2026-11-01T10:00:00Z
source_sessions: ['[[session-a]]']
claims:
{claims}
relations:
{relations}
---
{body}
"""


def claim(cid: str, text: str, confidence: float = 0.9, evidence: bool = True) -> str:
    ev = "\n  evidence:\n  - {kind: session, source: '[[session-a#^t1]]', confidence: 0.9}" \
        if evidence else ""
    return f"- id: {cid}\n  text: {text}\n  confidence: {confidence}\n  status: supported{ev}"


def card(vault: Path, name: str, *, id: str, title: str, type: str = "fact",
         claims: list[str] | None = None, relations: list[str] | None = None,
         body: str = "") -> Path:
    path = vault / "cards" / f"{name}.md"
    path.write_text(CARD.format(id=id, title=title, type=type,
                                claims="\n".join(claims or []) or "[]",
                                relations="\n".join(relations or []) or "[]",
                                body=body).replace("claims:\n[]", "claims: []")
                    .replace("relations:\n[]", "relations: []"), encoding="utf-8")
    return path


SESSION = """---
id: session-a
title: Session A
raw: sessions/session-a.json
---
> [!user] t1 · user · Ann · 2026-11-01T10:00:00Z
> The checkout cache TTL is 60 seconds since the last deploy.

^t1
"""
RAW = json.dumps({"id": "session-a", "timestamp": "2026-11-01T10:00:00Z", "turns": [
    {"role": "user", "name": "Ann", "content":
     "The checkout cache TTL is 60 seconds since the last deploy.",
     "timestamp": "2026-11-01T10:00:00Z"}]})


@pytest.fixture()
def planted(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    init_vault(root)
    (root / "sessions" / "session-a.md").write_text(SESSION, encoding="utf-8")
    (root / "sessions" / "session-a.json").write_text(RAW, encoding="utf-8")
    card(root, "cache-ttl", id="card-ttl", title="Checkout cache TTL",
         claims=[claim("c1", "The checkout cache TTL is 60 seconds in production")],
         relations=["- {type: RELATES_TO, target: '[[Checkout cache expiry]]'}"])
    # a near-duplicate of the card above (same words) and a contradiction (300 vs 60)
    card(root, "cache-expiry", id="card-expiry", title="Checkout cache expiry",
         claims=[claim("c1", "The checkout cache TTL is 300 seconds in production")])
    # two near-duplicates of each other
    card(root, "restart-a", id="card-ra", title="Gateway restart needs the telegram plugin",
         claims=[claim("c1", "The gateway restart notice needs the telegram plugin in "
                             "plugins allow")],
         relations=["- {type: RELATES_TO, target: '[[Deploy notes]]'}"])
    card(root, "restart-b", id="card-rb", title="Gateway restart needs telegram plugin",
         claims=[claim("c1", "The gateway restart notice needs the telegram plugin listed in "
                             "plugins allow")],
         relations=["- {type: RELATES_TO, target: '[[Deploy notes]]'}"])
    card(root, "orphan", id="card-orphan", title="Lonely fact", type="fact",
         claims=[claim("c1", "Tabs are wider than spaces", 0.9)])
    card(root, "broken", id="card-broken", title="Deploy notes",
         claims=[claim("c1", "Deploys run from the release branch")],
         body="See [[No such note]] for the rollback plan.\n")
    card(root, "weak", id="card-weak", title="Queue retries",
         claims=[claim("c1", "Retries are capped at five", 0.2, evidence=False)],
         relations=["- {type: DEPENDS_ON, target: '[[Deploy notes]]'}"])
    return root


def lint_json(root: Path, *args: str) -> tuple[int, dict]:
    res = CliRunner().invoke(cli, ["--vault", str(root), "lint", "--format", "json",
                                   "--no-report", *args])
    return res.exit_code, json.loads(res.output)


def codes_at(findings: list[dict]) -> set[tuple[str, str]]:
    return {(f["code"], f["path"]) for f in findings}


def test_planted_problems_each_reported_with_code_and_path(planted: Path) -> None:
    code, doc = lint_json(planted)
    assert code == 1
    found = codes_at(doc["findings"])
    assert ("near-duplicate", "cards/restart-b.md") in found
    assert ("claim-conflict", "cards/cache-expiry.md") in found \
        or ("claim-conflict", "cards/cache-ttl.md") in found
    assert ("orphan-card", "cards/orphan.md") in found
    # a link to a note not created yet is normal Obsidian practice: a warning (issue 14)
    assert ("unresolved-link", "cards/broken.md") in found
    assert ("claim-low-confidence", "cards/weak.md") in found
    assert ("claim-missing-evidence", "cards/weak.md") in found
    broken = next(f for f in doc["findings"] if f["code"] == "unresolved-link")
    lines = (planted / "cards" / "broken.md").read_text().splitlines()
    assert broken["severity"] == "warning"
    assert broken["line"] == next(i for i, x in enumerate(lines, 1) if "[[No such note]]" in x)
    assert "No such note" in broken["message"] and broken["fix"]
    for f in doc["findings"]:
        assert set(f) == {"code", "severity", "path", "line", "message", "fix"}
    # nothing else is wrong in this vault: no false positives on the healthy parts
    assert {f["code"] for f in doc["findings"]} == {
        "near-duplicate", "claim-conflict", "orphan-card", "unresolved-link",
        "claim-low-confidence", "claim-missing-evidence"}
    assert doc["summary"]["errors"] == 1 and doc["summary"]["by_code"]["unresolved-link"] == 1


def test_marked_contradiction_is_a_warning_not_a_conflict(planted: Path) -> None:
    path = planted / "cards" / "cache-expiry.md"
    path.write_text(path.read_text().replace("status: supported", "status: contested"))
    _, doc = lint_json(planted)
    codes = {f["code"] for f in doc["findings"]}
    assert "claim-conflict" not in codes and "contradiction-present" in codes


def test_demo_like_clean_vault_passes_and_report_is_written(tmp_path: Path) -> None:
    root = tmp_path / "v"
    init_vault(root)
    (root / "sessions" / "session-a.md").write_text(SESSION, encoding="utf-8")
    (root / "sessions" / "session-a.json").write_text(RAW, encoding="utf-8")
    card(root, "a", id="card-a", title="Cache TTL", claims=[claim("c1", "The TTL is 60 s")],
         relations=["- {type: CAUSED_BY, target: '[[Deploy config]]'}"])
    card(root, "b", id="card-b", title="Deploy config", type="decision",
         claims=[claim("c1", "Deploy config sets the cache TTL")])
    import git

    head = git.Repo(root).head.commit.hexsha
    # by default lint writes nothing and commits nothing (issue 14)
    res = CliRunner().invoke(cli, ["--vault", str(root), "lint"])
    assert res.exit_code == 0, res.output
    assert "no findings" in res.output
    assert not (root / "reports" / "lint.md").exists()
    assert git.Repo(root).head.commit.hexsha == head
    # --write-report regenerates the report and leaves it uncommitted …
    res = CliRunner().invoke(cli, ["--vault", str(root), "lint", "--write-report"])
    report = (root / "reports" / "lint.md").read_text()
    assert "<!-- alaya:lint:start -->" in report and "No findings." in report
    assert git.Repo(root).head.commit.hexsha == head
    # … and with --commit commits it, once: a second run with nothing new does not
    assert CliRunner().invoke(cli, ["--vault", str(root), "lint", "--write-report",
                                    "--commit"]).exit_code == 0
    assert git.Repo(root).head.commit.message.startswith("lint: 0 error(s)")
    head = git.Repo(root).head.commit.hexsha
    assert CliRunner().invoke(cli, ["--vault", str(root), "lint", "--write-report",
                                    "--commit"]).exit_code == 0
    assert git.Repo(root).head.commit.hexsha == head


def test_every_bad_input_rule(tmp_path: Path) -> None:
    root = tmp_path / "v"
    init_vault(root)
    (root / "sessions" / "session-a.md").write_text(SESSION.replace("60 seconds", "6 seconds"),
                                                    encoding="utf-8")
    (root / "sessions" / "session-a.json").write_text(RAW, encoding="utf-8")
    (root / "cards" / "bad.md").write_text("---\nid: x\ntitle: [unclosed\n---\nbody\n")
    card(root, "one", id="dup", title="One", claims=[claim("c1", "First thing")])
    card(root, "two", id="dup", title="Two", type="factoid", claims=[claim("c1", "Second")],
         relations=["- {type: LED_TOWARDS, target: '[[One]]', weight: 3}",
                    "- {type: SUPERSEDES, target: '[[Three]]'}"])
    card(root, "three", id="three", title="Three", claims=[claim("c1", "Third?")],
         relations=["- {type: SUPERSEDES, target: '[[Two]]'}",
                    "- {type: RELATES_TO, target: '[[Three]]'}"],
         body="## Open questions\n- why is it slow\n\napi_key = sk-abcdefghijklmnopqrstuvwxyz123456\n")
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "x" * 20_000)
    _, doc = lint_json(root)
    found = codes_at(doc["findings"])
    expected = {
        ("malformed-frontmatter", "cards/bad.md"), ("duplicate-id", "cards/one.md"),
        ("duplicate-id", "cards/two.md"), ("type-mismatch", "cards/two.md"),
        ("unknown-relation", "cards/two.md"), ("weight-out-of-range", "cards/two.md"),
        ("self-link", "cards/three.md"),
        ("open-question", "cards/three.md"), ("secret-detected", "cards/three.md"),
        ("memory-budget-exceeded", "MEMORY.md"), ("session-tampered", "sessions/session-a.md"),
    }
    assert expected <= found, expected - found
    cycle = [f for f in doc["findings"] if f["code"] == "supersedes-cycle"]
    assert len(cycle) == 1 and cycle[0]["path"] in ("cards/two.md", "cards/three.md")
    unknown = next(f for f in doc["findings"] if f["code"] == "unknown-relation")
    assert "CAUSES" in unknown["fix"]  # LED_TOWARDS is causal: the nearest known type
    secret = next(f for f in doc["findings"] if f["code"] == "secret-detected")
    assert secret["line"] == (root / "cards" / "three.md").read_text().splitlines().index(
        "api_key = sk-abcdefghijklmnopqrstuvwxyz123456") + 1
    tampered = next(f for f in doc["findings"] if f["code"] == "session-tampered")
    assert tampered["line"] == 6 and "^t1" in tampered["message"]


def test_severity_selection_strict_and_sarif(planted: Path, tmp_path: Path) -> None:
    cfg = planted / "alaya.toml"
    cfg.write_text(cfg.read_text().replace(
        "severity = {}", 'severity = {"broken-wikilink" = "warning", "claim-conflict" = "warning"}'))
    code, doc = lint_json(planted)
    assert code == 0 and doc["summary"]["errors"] == 0  # only warnings left
    code, _ = lint_json(planted, "--strict")
    assert code == 1
    code, doc = lint_json(planted, "--select", "orphan-card")
    assert {f["code"] for f in doc["findings"]} == {"orphan-card"}
    res = CliRunner().invoke(cli, ["--vault", str(planted), "lint", "--select", "nope",
                                   "--no-report"])
    assert res.exit_code == 2 and "nope" in res.output
    out = tmp_path / "lint.sarif"
    res = CliRunner().invoke(cli, ["--vault", str(planted), "lint", "--format", "sarif",
                                   "--output", str(out), "--no-report"])
    sarif = json.loads(out.read_text())
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert results and {r["level"] for r in results} <= {"error", "warning"}
    first = results[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"].startswith("cards/")
    rule_ids = [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]]
    assert all(r["ruleId"] == rule_ids[r["ruleIndex"]] for r in results)


def test_list_rules_covers_the_issue_codes() -> None:
    res = CliRunner().invoke(cli, ["lint", "--list", "--json"])
    codes = {r["code"] for r in json.loads(res.output)["rules"]}
    assert {"missing-id", "duplicate-id", "missing-type", "type-mismatch", "missing-title",
            "missing-source", "broken-wikilink", "ambiguous-wikilink", "contradiction-present",
            "claim-conflict", "open-question", "low-confidence", "claim-low-confidence",
            "claim-missing-evidence", "stale-page", "stale-claim", "malformed-frontmatter",
            "orphan-card", "unknown-relation", "self-link", "weight-out-of-range",
            "supersedes-cycle", "memory-budget-exceeded", "session-tampered",
            "secret-detected"} <= codes


def test_vault_loads_once(planted: Path) -> None:
    # lint reads the vault through the same parser as everything else; a bad note never
    # stops the other rules
    (planted / "cards" / "binary.md").write_bytes(b"\x00\x01\x02")
    _, doc = lint_json(planted)
    assert any(f["path"] == "cards/binary.md" for f in doc["findings"])
    assert any(f["code"] == "orphan-card" for f in doc["findings"])
    assert Vault.open(planted)
