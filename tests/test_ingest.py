"""Ingest: each input format from real files, idempotence, growth, and bad input."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from click.testing import CliRunner

from cli.main import cli
from vault_engine.sessions.ingest import ingest, read_inputs
from vault_engine.store.model import Session
from vault_engine.store.vault import Vault

from .conftest import git_log

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "sessions"


def run(vault: Path, *args: str, input: str | bytes | None = None):
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], input=input)


def sessions(vault: Path) -> dict[str, Session]:
    return {n.id: n for n in Vault.open(vault).load().notes if isinstance(n, Session)}


def test_seed_format_every_turn_anchored_and_reingest_makes_no_commit(vault_path: Path) -> None:
    src = EXAMPLES / "session-20260331-062900.json"
    result = run(vault_path, "ingest", str(src), "--json")
    assert result.exit_code == 0, result.output
    s = sessions(vault_path)["session-20260331-062900"]
    raw = json.loads(src.read_text())
    assert [t.anchor for t in s.turns] == [f"t{i}" for i in range(1, len(raw["turns"]) + 1)]
    assert s.turns[0].name == "Alice" and s.turns[1].name == "main"  # named speakers
    assert [t.source_id for t in s.turns] == [t["id"] for t in raw["turns"]]  # turn ids kept
    assert s.channel == "telegram" and s.path == "sessions/2026-03/session-20260331-062900.md"
    text = (vault_path / s.path).read_text("utf-8")
    assert all(f"\n^t{i}\n" in text for i in range(1, len(raw["turns"]) + 1))
    assert (vault_path / s.raw).read_bytes() == src.read_bytes()  # raw kept unchanged
    commits = git_log(vault_path)
    again = run(vault_path, "ingest", str(src))
    assert again.exit_code == 0 and "nothing changed" in again.output
    assert git_log(vault_path) == commits


def test_jsonl_messages_grouped_by_session_key(vault_path: Path, tmp_path: Path) -> None:
    lines = [{"id": f"m{i}", "role": "user" if i % 2 else "assistant",
              "content": f"message {i} about the {key} project", "timestamp": 1775000000000 + i,
              "sessionKey": key} for key in ("alpha", "beta") for i in range(1, 4)]
    src = tmp_path / "capture.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert run(vault_path, "ingest", str(src)).exit_code == 0
    got = sessions(vault_path)
    assert set(got) == {"alpha", "beta"}
    assert [t.text for t in got["alpha"].turns] == [
        "message 1 about the alpha project", "message 2 about the alpha project",
        "message 3 about the alpha project"]
    assert got["alpha"].raw.endswith(".jsonl")


def test_text_transcript_and_stdin(vault_path: Path) -> None:
    transcript = ("Alice: The cron job didn't run last night.\nIt usually runs at 2am.\n"
                  "Assistant: The crontab had a typo in the schedule.\n**Alice**: Fix it please.\n")
    result = run(vault_path, "ingest", "-", "--json", input=transcript.encode())
    assert result.exit_code == 0, result.output
    (session,) = sessions(vault_path).values()
    assert [(t.role, t.name) for t in session.turns] == [("user", "Alice"),
                                                         ("assistant", None), ("user", "Alice")]
    assert session.turns[0].text == "The cron job didn't run last night.\nIt usually runs at 2am."


def test_grown_session_appends_only_new_turns(vault_path: Path, tmp_path: Path) -> None:
    base = json.loads((EXAMPLES / "session-20260331-062900.json").read_text())
    short = dict(base, turns=base["turns"][:3])
    (tmp_path / "s.json").write_text(json.dumps(short))
    assert run(vault_path, "ingest", str(tmp_path / "s.json")).exit_code == 0
    note = vault_path / "sessions/2026-03/session-20260331-062900.md"
    before = note.read_text("utf-8")
    (tmp_path / "s.json").write_text(json.dumps(base))
    result = run(vault_path, "ingest", str(tmp_path / "s.json"), "--json")
    assert json.loads(result.output)["sessions"][0]["action"] == "appended"
    after = note.read_text("utf-8")
    body_before = before.split("\n---\n", 1)[1]
    assert after.split("\n---\n", 1)[1].startswith(body_before)  # old turns untouched
    assert len(sessions(vault_path)["session-20260331-062900"].turns) == len(base["turns"])
    edited = dict(base)
    edited["turns"] = [dict(base["turns"][0], content="rewritten history")] + base["turns"][1:]
    (tmp_path / "s.json").write_text(json.dumps(edited))
    refused = run(vault_path, "ingest", str(tmp_path / "s.json"))
    assert refused.exit_code == 1 and "turn t1 differs" in refused.output


def test_malformed_and_truncated_input_writes_nothing(vault_path: Path, tmp_path: Path) -> None:
    good = EXAMPLES / "session-20260402-091500.json"
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "s1", "turns": [{"role": "user", "content": "hi"}')
    commits = git_log(vault_path)
    result = run(vault_path, "ingest", str(good), str(bad))
    assert result.exit_code == 1 and "invalid JSON at line 1" in result.output
    assert sessions(vault_path) == {} and git_log(vault_path) == commits
    jsonl = tmp_path / "cut.jsonl"
    jsonl.write_text('{"role": "user", "content": "a", "sessionKey": "k"}\n'
                     '{"role": "assistant", "content": "b", "sess')
    result = run(vault_path, "ingest", str(jsonl))
    assert result.exit_code == 1 and "truncated mid-line" in result.output
    assert sessions(vault_path) == {}
    for content, message in (("[1, 2]", "not a transcript format alaya knows"),
                             ('{"id": "x"}', "a JSON object with keys id"),
                             ('{"turns": [{"content": "no role"}]}', "no `role`")):
        (tmp_path / "x.json").write_text(content)
        out = run(vault_path, "ingest", str(tmp_path / "x.json"))
        assert out.exit_code == 1 and message in out.output, out.output
    assert run(vault_path, "ingest", str(tmp_path / "missing-*.json")).exit_code == 2


def test_session_ids_cannot_escape_the_vault(vault_path: Path, tmp_path: Path) -> None:
    src = tmp_path / "evil.json"
    src.write_text(json.dumps({"id": "../../etc/passwd", "timestamp": 1775000000000,
                               "turns": [{"role": "user", "content": "hello there friend"}]}))
    assert run(vault_path, "ingest", str(src)).exit_code == 0
    (session,) = sessions(vault_path).values()
    assert session.path.startswith("sessions/") and ".." not in session.id


def test_fifty_megabyte_session(vault_path: Path, tmp_path: Path) -> None:
    chunk = "x" * (1024 * 1024)
    big = {"id": "session-big", "timestamp": 1775000000000,
           "turns": [{"role": "user" if i % 2 else "assistant", "content": f"turn {i} " + chunk}
                     for i in range(50)]}
    src = tmp_path / "big.json"
    src.write_text(json.dumps(big))
    assert src.stat().st_size > 50 * 1024 * 1024
    result = run(vault_path, "ingest", str(src))
    assert result.exit_code == 0, result.output
    s = sessions(vault_path)["session-big"]
    assert len(s.turns) == 50 and "more characters in the raw file" in s.turns[0].text
    assert (vault_path / s.raw).stat().st_size == src.stat().st_size
    many = {"id": "session-many", "timestamp": 1775000000000,
            "turns": [{"role": "user", "content": "y" * 19000} for _ in range(600)]}
    (tmp_path / "many.json").write_text(json.dumps(many))
    refused = run(vault_path, "ingest", str(tmp_path / "many.json"))
    assert refused.exit_code == 1 and "max_note_bytes" in refused.output


def test_redact_secrets_before_writing(vault_path: Path, tmp_path: Path) -> None:
    src = tmp_path / "s.json"
    src.write_text(json.dumps({"id": "session-keys", "timestamp": 1775000000000, "turns": [
        {"role": "user", "content": "use OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456"}]}))
    assert run(vault_path, "ingest", str(src), "--redact").exit_code == 0
    for path in (vault_path / "sessions").rglob("*"):
        if path.is_file():
            assert "sk-proj-abcdefghijklmnopqrstuvwxyz" not in path.read_text("utf-8")
    assert "[REDACTED:" in sessions(vault_path)["session-keys"].turns[0].text


def _ingest_worker(root: str, path: str, queue) -> None:  # type: ignore[no-untyped-def]
    try:
        ingest(Vault.open(Path(root)), read_inputs([path]))
        queue.put(None)
    except Exception as exc:  # reported to the parent
        queue.put(repr(exc))


def test_concurrent_ingest(vault_path: Path) -> None:
    files = sorted(EXAMPLES.glob("*.json")) + [EXAMPLES / "session-20260331-062900.json"] * 2
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_ingest_worker, args=(str(vault_path), str(f), queue))
             for f in files]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [queue.get(timeout=5) for _ in procs] == [None] * len(procs)
    got = sessions(vault_path)
    assert len(got) == len(list(EXAMPLES.glob("*.json")))
    assert sum(m.startswith("ingest:") for m in git_log(vault_path)) == len(got)
    assert all(len(s.turns) > 0 for s in got.values())
