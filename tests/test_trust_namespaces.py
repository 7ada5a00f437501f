"""Agent bob against agent alice's private memory (issue #13): through every command, MCP tool
and digest file bob reads nothing of alice's, and every write of his to her notes is refused
with her files byte-identical afterwards. Real git, real compile, the real `mcp` client."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import git
import pytest
from click.testing import CliRunner, Result

from cli.main import cli

from .test_agents import mcp_session, payload

MARK = "zebracorn"  # in every private note of alice's
MARK_ZH = "斑马独角兽"

ALICE_SESSION = {
    "id": "session-alice-1", "timestamp": 1775000000000, "agent": "alice", "turns": [
        {"role": "user", "content": f"I prefer the {MARK} deploy script over the old one, "
                                    "always use it for the payment service."},
        {"role": "assistant", "content": f"Noted: {MARK} deploy script for payments."},
        {"role": "user", "content": f"The {MARK} cache gotcha: restarting redis drops the "
                                    f"{MARK_ZH} queue unless persistence is on."},
        {"role": "assistant", "content": "Understood, enable persistence before restarting."}]}


def alaya(vault: Path, *args: str, agent: str | None = None, input: str | None = None
          ) -> Result:
    argv = ["--vault", str(vault)] + (["--agent", agent] if agent else []) + list(args)
    return CliRunner().invoke(cli, argv, input=input)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output
    return result


def files_of(vault: Path, namespace: str) -> dict[str, str]:
    """Every file of a namespace (notes and the raw files beside sessions) → its sha256."""
    out = {}
    for p in sorted(vault.rglob("*")):
        if ".git" in p.parts or ".alaya" in p.parts or not p.is_file():
            continue
        text = p.read_text(encoding="utf-8", errors="replace")
        note = p if p.suffix == ".md" else p.with_name(p.name.split(".", 1)[0] + ".md")
        head = note.read_text(encoding="utf-8") if note.exists() else ""
        if f"namespace: {namespace}\n" in head.split("\n---", 1)[0] + "\n" or MARK in text:
            out[p.relative_to(vault).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def two_agents(vault_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    v = vault_path
    src = tmp_path / "alice.json"
    src.write_text(json.dumps(ALICE_SESSION, ensure_ascii=False), encoding="utf-8")
    ok(alaya(v, "ingest", str(src), agent="alice"))
    ok(alaya(v, "distill", agent="alice"))
    ok(alaya(v, "new", "--title", "Gateway restart", "--type", "gotcha", "--claim",
             "Restarting the gateway drops notices"))  # the owner's, shared
    ok(alaya(v, "new", "--title", f"Alice {MARK} runbook", "--type", "fact", "--claim",
             f"The {MARK} runbook lives in alice's wiki", "--alias", "alice-runbook",
             agent="alice"))
    ok(alaya(v, "link", f"Alice {MARK} runbook", "Gateway restart", "--rel", "DEPENDS_ON",
             agent="alice"))
    ok(alaya(v, "compile"))
    return v


def test_bob_reads_nothing_of_alices(two_agents: Path) -> None:
    v = two_agents
    card = next(p for p in (v / "cards").rglob("*.md") if "runbook" in p.name)
    card_id = next(line.split(": ", 1)[1] for line in card.read_text().splitlines()
                   if line.startswith("id: "))
    session = "session-alice-1"
    # alice herself sees her memory (the test would pass vacuously otherwise)
    assert MARK in ok(alaya(v, "show", card_id, agent="alice")).output
    assert MARK in ok(alaya(v, "recall", MARK, "--json", agent="alice")).output
    outputs: list[str] = []
    for args in (["show", card_id], ["show", f"Alice {MARK} runbook"], ["show", "alice-runbook"],
                 ["show", session], ["show", "--raw", card_id], ["trace", card_id],
                 ["traverse", card_id], ["traverse", "Gateway restart"],
                 ["traverse", "Gateway restart", card_id],
                 ["recall", f"{MARK} runbook", "--json"],
                 ["recall", f"{MARK} runbook", "--all-namespaces", "--json"],
                 ["recall", "--from-nodes", card_id, "--json"],
                 ["recall", MARK, "--format", "prompt"],
                 ["context", "--query", f"{MARK} deploy", "--json"],
                 ["lint", "--format", "json", "--no-report"], ["status", "--json"],
                 ["schema", "--json"], ["schema", "--node-types", "--json"],
                 ["doctor", "--json"], ["review", "--json"]):
        result = alaya(v, *args, agent="bob")
        out = result.output
        for arg in args:  # bob's own words echoed back ("no note matches …") are not a leak
            out = out.replace(arg, "<bob's argument>")
        outputs.append(out)
    refused = alaya(v, "recall", "x", "--namespace", "alice", "--json", agent="bob")
    assert refused.exit_code == 1 and "NamespaceError" in refused.output
    ok(alaya(v, "export", "--format", "markdown", "--output", str(v.parent / "md"), agent="bob"))
    ok(alaya(v, "export", "--format", "graphml", "--output", str(v.parent / "g.graphml"),
             agent="bob"))
    outputs += [p.read_text() for p in (v.parent / "md").rglob("*.md")]
    outputs.append((v.parent / "g.graphml").read_text())
    # the digests: shared only; bob's: shared + bob's; alice's has her notes
    shared = (v / ".alaya" / "agent-digest.json").read_text()
    outputs.append(shared)
    assert "Gateway restart" in shared
    digests = v / ".alaya" / "digest"
    assert MARK in (digests / "alice.json").read_text()
    assert not (digests / "bob.json").exists() or MARK not in (digests / "bob.json").read_text()
    # derived notes every agent reads
    for rel in ("persona.md", "MEMORY.md"):
        outputs.append((v / rel).read_text())
    outputs += [p.read_text() for p in (v / "scenes").rglob("*.md")]
    outputs += [p.read_text() for p in (v / "reports").rglob("*.md")]
    for out in outputs:
        assert MARK not in out and MARK_ZH not in out and card_id not in out, out[:400]
    # MCP as bob
    calls = [("get", {"ref": card_id}), ("get", {"ref": session}),
             ("recall", {"query": f"{MARK} runbook", "top_k": 20}),
             ("context", {"query": f"{MARK} deploy", "budget": 4000}),
             ("trace", {"card": card_id}), ("traverse", {"a": "Gateway restart"}),
             ("status", {}), ("schema", {})]
    _, results = mcp_session(v, calls, agent="bob")
    assert results[0].is_error and results[1].is_error
    for (_, arguments), r in zip(calls, results, strict=True):
        text = json.dumps(payload(r) if not r.is_error else r.content[0].text,
                          ensure_ascii=False)
        for arg in arguments.values():
            text = text.replace(json.dumps(arg, ensure_ascii=False).strip('"'), "<bob's>")
        assert MARK not in text and MARK_ZH not in text and card_id not in text, text[:300]


def test_bobs_writes_to_alices_notes_are_refused_and_change_nothing(
        two_agents: Path, tmp_path: Path) -> None:
    v = two_agents
    ok(alaya(v, "feedback", "deprecate", f"Alice {MARK} runbook", agent="alice"))  # archived
    card = next(p for p in (v / "cards").rglob("*.md") if "gotcha" in p.parts)
    ref = card.stem
    before = files_of(v, "alice")
    head = git.Repo(v).head.commit.hexsha
    assert len(before) >= 5, before  # session, its raw file, two cards, the tombstone
    attempts = [
        ["link", ref, "Gateway restart"], ["link", "Gateway restart", ref],
        ["unlink", ref, "Gateway restart"],
        ["feedback", "useful", ref], ["feedback", "not-useful", ref],
        ["feedback", "correct", ref, "--text", "rewritten by bob"],
        ["feedback", "deprecate", ref], ["promote-shared", ref],
        ["restore", f"Alice {MARK} runbook"],
        ["new", "--title", "Planted", "--namespace", "alice"],
        ["distill", "--session", "session-alice-1"],
    ]
    for args in attempts:
        result = alaya(v, *args, agent="bob")
        assert result.exit_code != 0, (args, result.output)
        assert "NamespaceError" in result.output or "belongs to another agent" in \
            result.output or "no note matches" in result.output or \
            "may not" in result.output, (args, result.output)
        echoed = result.output
        for arg in args:
            echoed = echoed.replace(arg, "<bob's argument>")
        assert MARK not in echoed, (args, result.output)
    assert files_of(v, "alice") == before
    assert git.Repo(v).head.commit.hexsha == head  # not one commit
    # ingesting under alice's session id never touches hers: bob gets his own session, as
    # for an id nobody used (issue 25: no "exists" answer, no turn compared)
    src = tmp_path / "again.json"
    grown = dict(ALICE_SESSION, turns=ALICE_SESSION["turns"] + [
        {"role": "user", "content": "bob appends"}])
    src.write_text(json.dumps(grown), encoding="utf-8")
    out = ok(alaya(v, "ingest", str(src), "--json", agent="bob")).output
    assert json.loads(out)["sessions"][0]["action"] == "created"
    assert "@bob" in json.loads(out)["sessions"][0]["path"]
    assert {k: h for k, h in files_of(v, "alice").items() if "@bob" not in k} == before
    # alice's note is not found for bob, with the very message a missing one gets
    msg = alaya(v, "link", ref, "Gateway restart", agent="bob").output
    none = alaya(v, "link", "no-such-note-anywhere", "Gateway restart", agent="bob").output
    assert msg.replace(ref, "REF") == none.replace("no-such-note-anywhere", "REF")
    assert "cards/" not in msg


def test_a_bob_session_is_his_and_bobs_cards_stay_his(two_agents: Path, tmp_path: Path) -> None:
    v = two_agents
    src = tmp_path / "bob.json"
    src.write_text(json.dumps({"id": "session-bob-1", "turns": [
        {"role": "user", "content": "I prefer short answers with the conclusion first, "
                                    "for the quokka project."},
        {"role": "assistant", "content": "Noted."}]}), encoding="utf-8")
    ok(alaya(v, "ingest", str(src), agent="bob"))
    note = next((v / "sessions").rglob("session-bob-1.md")).read_text()
    assert "namespace: bob\n" in note
    ok(alaya(v, "distill", agent="bob"))
    mine = [p for p in (v / "cards").rglob("*.md") if "quokka" in p.read_text()]
    assert mine and all("namespace: bob\n" in p.read_text() for p in mine)
    ok(alaya(v, "compile"))
    assert "quokka" not in (v / ".alaya" / "agent-digest.json").read_text()
    assert "quokka" in (v / ".alaya" / "digest" / "bob.json").read_text()
    assert "quokka" not in (v / ".alaya" / "digest" / "alice.json").read_text()
    found = json.loads(alaya(v, "recall", "quokka", "--json", agent="alice").output)["nodes"]
    assert not any("quokka" in json.dumps(n) for n in found)
    # with sessions_namespace = "shared" a session an agent ingests is everyone's
    toml = v / "alaya.toml"
    toml.write_text(toml.read_text().replace('sessions_namespace = "agent"',
                                             'sessions_namespace = "shared"'))
    src.write_text(json.dumps({"id": "session-bob-2", "turns": [
        {"role": "user", "content": "team note"}]}), encoding="utf-8")
    ok(alaya(v, "ingest", str(src), agent="bob"))
    assert "namespace:" not in next((v / "sessions").rglob("session-bob-2.md")).read_text()


def test_ephemeral_notes_expire_and_are_never_promoted(vault_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    v = vault_path
    monkeypatch.setenv("ALAYA_NOW", "2026-05-01T00:00:00Z")
    ok(alaya(v, "new", "--title", "Scratch state", "--namespace", "bob-ephemeral",
             "--claim", "step 3 of 7 done", agent="bob"))
    ok(alaya(v, "new", "--title", "Lasting", "--claim", "kept", agent="bob"))
    refused = alaya(v, "promote-shared", "Scratch state", agent="bob")
    assert refused.exit_code == 2 and "never promoted" in refused.output
    monkeypatch.setenv("ALAYA_NOW", "2026-05-01T23:00:00Z")
    ok(alaya(v, "introspect", "--phase", "forget", agent="bob"))
    assert list((v / "cards").rglob("Scratch state.md"))  # 23 h: not yet
    monkeypatch.setenv("ALAYA_NOW", "2026-05-02T01:00:00Z")
    ok(alaya(v, "introspect", "--phase", "forget", agent="bob"))
    assert not list((v / "cards").rglob("Scratch state.md"))
    archived = (v / "archive" / "Scratch state.md").read_text()
    assert "ephemeral" in archived and "namespace: bob-ephemeral" in archived
    assert list((v / "cards").rglob("Lasting.md"))
    assert "Scratch state" not in (v / "MEMORY.md").read_text()


def test_review_items_of_another_agent_wait_for_their_owner(vault_path: Path) -> None:
    v = vault_path
    ok(alaya(v, "new", "--title", f"Alice {MARK} plan", "--propose", agent="alice"))
    ok(alaya(v, "new", "--title", "Bob plan", "--propose", agent="bob"))
    listed = ok(alaya(v, "review", "--json", agent="bob")).output
    assert "Bob plan" in listed and MARK not in listed
    refused = alaya(v, "review", "approve", f"Alice {MARK} plan", agent="bob")
    missing = alaya(v, "review", "approve", "No such plan", agent="bob")
    assert refused.exit_code == missing.exit_code == 1  # not found, as a missing one
    assert refused.output.replace(f"Alice {MARK} plan", "X") == \
        missing.output.replace("No such plan", "X")
    ok(alaya(v, "review", "approve", agent="bob"))  # approves his own only
    assert list((v / "cards").rglob("Bob plan.md"))
    assert not list((v / "cards").rglob(f"Alice {MARK} plan.md"))
    assert MARK in ok(alaya(v, "review", "--json")).output  # still pending for the owner
