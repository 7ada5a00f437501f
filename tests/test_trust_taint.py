"""Taint follows text (issue 25, builds 1, 2 and 5): alaya itself never carries a private
note's title, an agent's query or a count of what another agent holds into a place other
readers see; the caller is resolved once and never silently becomes the owner; an agent's
context starts with what its own user said about themselves.

Real vaults, real git, the real compile and introspect, through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cli.main import cli

ALAYA = Path(sys.executable).with_name("alaya")
SECRET_TITLE = "Quetzal payroll migration"  # alice's private card
MARK = "quetzal"


def alaya(vault: Path, *args: str, agent: str | None = None, input: str | None = None,
          env: dict[str, str] | None = None) -> Result:
    argv = ["--vault", str(vault)] + (["--agent", agent] if agent is not None else []) + list(args)
    return CliRunner().invoke(cli, argv, input=input, env=env)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def vault(vault_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    v = vault_path
    ok(alaya(v, "new", "--title", "Payroll runbook", "--type", "fact", "--claim",
             "The payroll job runs at 02:00 and retries twice on failure"))  # shared
    ok(alaya(v, "new", "--title", SECRET_TITLE, "--type", "fact", "--claim",
             "The payroll job runs at 02:00 and retries twice on failure, moving to "
             "quetzal cluster", agent="alice"))
    ok(alaya(v, "compile"))
    return v


def shared_texts(v: Path) -> str:
    """Everything every agent may read as files: shared notes, the shared digest."""
    out = []
    for p in sorted(v.rglob("*.md")):
        rel = p.relative_to(v).as_posix()
        if ".git/" in rel or any(part.startswith("@") for part in Path(rel).parts):
            continue
        text = p.read_text(encoding="utf-8")
        head = text.split("\n---", 1)[0]
        if "namespace: " not in head or "namespace: shared" in head:
            out.append(f"== {rel}\n{text}")
    digest = v / ".alaya" / "agent-digest.json"
    if digest.exists():
        out.append(digest.read_text(encoding="utf-8"))
    return "\n".join(out)


# -- 1. the caller, resolved once ------------------------------------------------------------
@pytest.mark.parametrize("name", ["", " ", "\t", "  \n"])
def test_a_blank_agent_name_is_an_error_never_the_owner(vault: Path, name: str) -> None:
    res = alaya(vault, "show", SECRET_TITLE, "--json", agent=name)
    assert res.exit_code == 2, res.output
    assert "agent name is empty" in res.output and MARK not in res.output.lower()
    res = alaya(vault, "show", SECRET_TITLE, env={"ALAYA_AGENT": name})
    assert res.exit_code == 2 and MARK not in res.output.lower()
    proc = subprocess.run([str(ALAYA), "--vault", str(vault), "recall", "payroll", "--json"],
                          env={"PATH": "/usr/bin:/bin", "HOME": str(vault.parent),
                               "ALAYA_AGENT": name, "ALAYA_EMBED_PROVIDER": "hash"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and MARK not in proc.stdout.lower(), proc.stdout + proc.stderr


def test_the_commit_names_the_caller_of_its_transaction(vault: Path) -> None:
    ok(alaya(vault, "new", "--title", "Bob's note", "--type", "fact", agent="bob"))
    log = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=vault, capture_output=True,
                         text=True).stdout
    assert "Alaya-Agent: bob" in log
    ok(alaya(vault, "new", "--title", "Owner's note", "--type", "fact"))
    log = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=vault, capture_output=True,
                         text=True).stdout
    assert "Alaya-Agent: none" in log


# -- 2. taint follows text -----------------------------------------------------------------------
def test_a_shared_card_never_names_a_private_one(vault: Path) -> None:
    before = shared_texts(vault)
    res = alaya(vault, "link", "Payroll runbook", SECRET_TITLE, "--rel", "RELATES_TO")
    assert res.exit_code == 1 and "promote-shared" in res.output  # the owner too: refused
    res = alaya(vault, "link", "Payroll runbook", SECRET_TITLE, "--rel", "RELATES_TO",
                agent="alice")
    assert res.exit_code == 1
    assert shared_texts(vault) == before
    # the other way round is fine: alice's card may name the shared one
    ok(alaya(vault, "link", SECRET_TITLE, "Payroll runbook", "--rel", "RELATES_TO",
             agent="alice"))
    res = alaya(vault, "new", "-", input=json.dumps({
        "title": "Shared with a link", "type": "fact",
        "relations": [{"type": "RELATES_TO", "target": SECRET_TITLE}]}))
    assert res.exit_code == 1, res.output
    assert MARK not in shared_texts(vault).lower()


def test_introspect_links_across_namespaces_only_on_the_private_side(vault: Path) -> None:
    ok(alaya(vault, "introspect"))
    shared = shared_texts(vault)
    assert MARK not in shared.lower(), shared[:2000]
    alices = next(p for p in (vault / "cards").rglob("*.md") if MARK in p.name.lower())
    assert "Payroll runbook" in alices.read_text() or "SIMILAR_TO" not in shared


def test_an_agents_recall_queries_stay_in_its_own_report(vault: Path) -> None:
    for _ in range(4):  # weak recalls of one topic: a knowledge gap
        ok(alaya(vault, "recall", "quetzal vpn password rotation zz9plural", "--json",
                 agent="alice"))
    ok(alaya(vault, "introspect"))
    assert "zz9plural" not in shared_texts(vault)
    own = vault / "reports" / "@alice" / "open-questions.md"
    assert "zz9plural" in own.read_text() and "namespace: alice" in own.read_text()
    assert alaya(vault, "show", "reports/@alice/open-questions.md", agent="bob").exit_code == 1
    log = subprocess.run(["git", "log", "-p", "--", "reports/open-questions.md"], cwd=vault,
                         capture_output=True, text=True).stdout
    assert "zz9plural" not in log


def test_counts_and_file_names_are_per_caller(vault: Path, tmp_path: Path) -> None:
    seen = {}
    for args in (["status", "--json"], ["compile", "--check", "--json"], ["doctor", "--json"],
                 ["compile", "--json"]):
        seen[args[0] + args[1]] = alaya(vault, *args, agent="bob").output
    for out in seen.values():
        assert MARK not in out.lower()
    status = json.loads(seen["status--json"])
    assert status["graph"]["by_kind"].get("card", 0) == 1  # the shared card only
    assert status["telemetry"]["recall_events"] == 0
    # a note of alice's changed since the compile is no news to bob
    alices = next(p for p in (vault / "cards").rglob("*.md") if MARK in p.name.lower())
    alices.write_text(alices.read_text() + "\nedited\n")
    check = json.loads(alaya(vault, "compile", "--check", "--json", agent="bob").output)
    assert check["ok"] is True and check["changed"] == []
    assert json.loads(alaya(vault, "compile", "--check", "--json").output)["ok"] is False


def test_a_new_file_name_never_tells_whether_a_private_title_exists(vault: Path) -> None:
    made = json.loads(ok(alaya(vault, "new", "--title", SECRET_TITLE, "--type", "fact",
                               "--namespace", "shared", "--json", agent="bob")).output)
    assert made["path"] == f"cards/fact/{SECRET_TITLE}.md"  # as if alice had none
    alices = [p for p in (vault / "cards").rglob("*.md") if MARK in p.name.lower()]
    assert len(alices) == 2 and any("@alice" in str(p) for p in alices)


def test_ingesting_another_agents_session_id_is_as_for_a_missing_one(
        vault: Path, tmp_path: Path) -> None:
    src = tmp_path / "s.json"
    src.write_text(json.dumps({"id": "session-x1", "timestamp": 1775000000000, "turns": [
        {"role": "user", "content": "alice's quetzal secret plan"},
        {"role": "user", "content": "second turn of alice"}]}))
    ok(alaya(vault, "ingest", str(src), agent="alice"))
    guess = tmp_path / "guess.json"
    guess.write_text(json.dumps({"id": "session-x1", "timestamp": 1775000000000, "turns": [
        {"role": "user", "content": "alice's quetzal secret plan"},
        {"role": "user", "content": "a guess at the second turn"}]}))
    res = alaya(vault, "ingest", str(guess), "--json", agent="bob")
    assert res.exit_code == 0, res.output
    assert "differs" not in res.output
    assert json.loads(res.output)["sessions"][0]["action"] == "created"
    assert "@bob" in json.loads(res.output)["sessions"][0]["path"]
    alice_note = next(p for p in (vault / "sessions").rglob("session-x1.md") if "@alice" in str(p))
    assert "guess" not in alice_note.read_text()


# -- 5. an agent's own persona -------------------------------------------------------------------
def test_an_agents_context_starts_with_what_its_own_user_said(vault: Path, tmp_path: Path) -> None:
    src = tmp_path / "alice-prefs.json"
    src.write_text(json.dumps({"id": "session-alice-prefs", "timestamp": 1775000000000,
                               "turns": [
                                   {"role": "user", "content": "I prefer tabs over spaces in "
                                    "every Go file, always."},
                                   {"role": "assistant", "content": "Got it: tabs in Go."},
                                   {"role": "user", "content": "我喜欢提交信息用中文写。"},
                                   {"role": "assistant", "content": "好的。"}]},
                              ensure_ascii=False), encoding="utf-8")
    ok(alaya(vault, "ingest", str(src), agent="alice"))
    ok(alaya(vault, "distill", agent="alice"))
    own = json.loads(ok(alaya(vault, "context", "--json", agent="alice")).output)
    about = "\n".join(own["sections"].get("persona", []))
    assert "tabs" in about.lower() and "中文" in about
    bob = json.loads(ok(alaya(vault, "context", "--json", agent="bob")).output)
    assert "tabs" not in json.dumps(bob).lower()
    assert "tabs" not in (vault / "persona.md").read_text().lower()
    persona = vault / "@alice" / "persona.md"
    assert "namespace: alice" in persona.read_text()
    assert alaya(vault, "show", "@alice/persona.md", agent="bob").exit_code == 1


def test_two_sessions_of_one_id_in_two_namespaces_never_share_a_node(
        vault: Path, tmp_path: Path) -> None:
    """bob's session of the id alice's session has is his own note; recall never shows bob
    a turn of hers as the context of his (the compile keys the two apart)."""
    src = tmp_path / "a.json"
    src.write_text(json.dumps({"id": "sess-dup", "timestamp": 1775000000000, "turns": [
        {"role": "user", "content": "quetzal vendor call moved to Monday, alice's secret"}]}))
    ok(alaya(vault, "ingest", str(src), agent="alice"))
    mine = tmp_path / "b.json"
    mine.write_text(json.dumps({"id": "sess-dup", "timestamp": 1775000000000, "turns": [
        {"role": "user", "content": "what did the vendor say about the call?"}]}))
    ok(alaya(vault, "ingest", str(mine), agent="bob"))
    ok(alaya(vault, "compile"))
    out = ok(alaya(vault, "recall", "vendor call", "--json", agent="bob")).output
    assert MARK not in out.lower() and "alice's secret" not in out
