"""The transcripts people have: Claude Code JSONL, ChatGPT and Claude.ai exports, OpenClaw
session files — detected, ingested into session notes with their turns, re-ingested as a
no-op, checked by lint; an unknown format gets the error naming what alaya knows; capture
follows a growing Claude Code transcript without losing or repeating a turn."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine.sessions.capture import capture_file, default_session
from vault_engine.sessions.formats import FORMATS, detect
from vault_engine.store.model import Session
from vault_engine.store.vault import Vault

from .conftest import git_log

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
CLAUDE_CODE = FIXTURES / "8a1b2c3d-4e5f-4a6b-9c7d-0e1f2a3b4c5d.jsonl"
OPENCLAW = FIXTURES / "f3c1a2b4-5d6e-4f70-8a91-b2c3d4e5f607.jsonl"
CHATGPT = FIXTURES / "chatgpt-conversations.json"
CLAUDE_AI = FIXTURES / "claude-ai-conversations.json"


def run(vault: Path, *args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], input=input)


def sessions(vault: Path) -> dict[str, Session]:
    return {n.id: n for n in Vault.open(vault).load().notes if isinstance(n, Session)}


def texts(s: Session) -> list[str]:
    return [t.text for t in s.turns]


def test_every_format_is_detected_by_its_shape() -> None:
    for path, name in ((CLAUDE_CODE, "claude-code"), (OPENCLAW, "openclaw"),
                       (CHATGPT, "chatgpt"), (CLAUDE_AI, "claude-ai")):
        assert detect(path.read_bytes(), path.name) == name
    one = json.loads(CHATGPT.read_text())[0]  # one conversation alone
    assert detect(json.dumps(one).encode(), "c.json") == "chatgpt"
    assert detect(b'[{"role": "user", "content": "hi"}]', "m.json") == "messages"
    assert detect(b"Alice: hi\nBob: hello\n", "t.md") == "transcript"
    assert set(FORMATS) == {"session", "messages", "transcript", "claude-code", "chatgpt",
                            "claude-ai", "openclaw"}


def test_claude_code_transcript_becomes_a_session_note(vault_path: Path) -> None:
    result = run(vault_path, "ingest", str(CLAUDE_CODE), "--json")
    assert result.exit_code == 0, result.output
    s = sessions(vault_path)["claude-code-8a1b2c3d-4e5f-4a6b-9c7d-0e1f2a3b4c5d"]
    got = texts(s)
    assert got[0] == "网关重启之后 Telegram 通知没有发出去，帮我查一下 plugins.allow 的配置。"
    # one reply written as three records (thinking, text, tool_use) is one turn; the thinking
    # is left out; the tool call and its result are one line
    assert got[1].startswith("I'll look at the gateway config.")
    assert "- tool Read: `/home/li/ops-gateway/config/plugins.yaml` → 1→plugins:" in got[1]
    assert "Check the config file first" not in "\n".join(got)
    assert "error: Failed to restart gateway.service: Access denied" in got[7]
    assert "sub-agent scratch work" not in "\n".join(got)  # a sidechain is not this session
    assert "Caveat:" not in "\n".join(got)  # a meta record is not a turn
    assert "/compact keep the plugin findings" in got
    assert [t.role for t in s.turns] == ["user", "assistant", "assistant", "assistant", "user",
                                         "system", "user", "assistant", "assistant"]
    assert s.turns[0].timestamp is not None and s.turns[0].timestamp.isoformat().startswith(
        "2026-11-30T09:00:05")
    assert s.turns[1].source_id == "msg_01A"  # the reply's message id
    assert s.channel == "claude-code"
    assert s.meta["cwd"] == "/home/li/ops-gateway" and s.meta["model"] == "claude-sonnet-4-5"
    assert (vault_path / s.raw).read_bytes() == CLAUDE_CODE.read_bytes()  # raw kept unchanged
    commits = git_log(vault_path)
    again = run(vault_path, "ingest", str(CLAUDE_CODE))
    assert again.exit_code == 0 and "nothing changed" in again.output
    assert git_log(vault_path) == commits


def test_chatgpt_export_follows_the_current_branch_of_each_conversation(vault_path: Path) -> None:
    result = run(vault_path, "ingest", str(CHATGPT), "--json")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)["sessions"]) == 2
    got = sessions(vault_path)
    ttl = got["chatgpt-6740a1b2-0c3d-8000-9e4f-5a6b7c8d9e0f"]
    assert texts(ttl)[0] == "Redis 缓存的 TTL 应该设多少？我们的订单服务现在是 60 秒。"
    assert "Use 300 s for catalog data" in texts(ttl)[1]
    assert "first answer, regenerated" not in "\n".join(texts(ttl))  # the abandoned branch
    assert texts(ttl)[3].startswith("- tool python: `hits = 8412") and "→ 0.924" in texts(ttl)[3]
    assert ttl.meta["topic"] == "Redis TTL for the order service"
    shot = got["chatgpt-6741f3e4-5d6c-8000-8b7a-1c2d3e4f5a6b"]
    assert texts(shot)[2] == "[image]\n这是报错截图，是同一个问题吗？"
    assert [t.role for t in shot.turns] == ["user", "assistant", "user", "assistant"]
    lint = run(vault_path, "lint", "--select", "session-tampered", "--format", "json",
               "--no-report")
    assert json.loads(lint.output)["summary"]["errors"] == 0, lint.output


def test_claude_ai_export_and_openclaw_session(vault_path: Path) -> None:
    assert run(vault_path, "ingest", str(CLAUDE_AI), str(OPENCLAW)).exit_code == 0
    got = sessions(vault_path)
    chat = got["claude-ai-2f1e0d9c-8b7a-4c6d-9e5f-4a3b2c1d0e9f"]
    assert "[attachment: deploy.log, 4,211 bytes]" in texts(chat)[0]
    assert "orders_archive" not in texts(chat)[0]  # an attachment is named, not pasted
    assert "- tool web_search: `deploy script sort migration files as strings` → Lexicographic" \
        in texts(chat)[1]
    assert texts(chat)[3] == "好的：每次上线前都先在 staging 执行 migration dry-run。"  # newest branch
    oc = got["openclaw-f3c1a2b4-5d6e-4f70-8a91-b2c3d4e5f607"]
    assert "- tool bash: `grep -n pool_size config/worker.toml` → 12:pool_size = 200" \
        in texts(oc)[1]
    assert "abandoned branch" not in "\n".join(texts(oc))
    assert texts(oc)[2] == "Tried lowering pool_size alone; the person asked for pgbouncer instead."
    assert texts(oc)[-1] == "Done: the worker now opens at most 20 connections through pgbouncer."
    lint = run(vault_path, "lint", "--select", "session-tampered", "--format", "json",
               "--no-report")
    assert json.loads(lint.output)["summary"]["errors"] == 0, lint.output


def test_unknown_format_names_the_known_ones_and_what_it_looked_like(vault_path: Path,
                                                                     tmp_path: Path) -> None:
    odd = tmp_path / "export.json"
    odd.write_text(json.dumps({"conversations_v9": [], "exported_at": "2026-01-01"}))
    out = run(vault_path, "ingest", str(odd), "--json")
    err = json.loads(out.output)
    assert out.exit_code == 1 and err["error"] == "IngestError"
    assert "a JSON object with keys conversations_v9, exported_at" in err["message"]
    for name in ("claude-code", "chatgpt", "claude-ai", "openclaw", "session", "messages"):
        assert name in err["message"]
    assert "--format" in err["fix"]
    lines = tmp_path / "events.jsonl"
    lines.write_text('{"type": "heartbeat", "ts": 1}\n{"type": "heartbeat", "ts": 2}\n')
    err2 = json.loads(run(vault_path, "ingest", str(lines), "--json").output)
    assert "JSON Lines of records with keys type, ts (type: heartbeat)" in err2["message"]
    prose = tmp_path / "notes.txt"
    prose.write_text("just some notes\nwithout any speakers at all\n")
    assert "no `Speaker: text` lines" in run(vault_path, "ingest", str(prose)).output
    assert sessions(vault_path) == {}


def test_format_flag_overrides_detection(vault_path: Path, tmp_path: Path) -> None:
    wrong = run(vault_path, "ingest", str(CHATGPT), "--format", "claude-ai", "--json")
    assert wrong.exit_code == 1 and "not a Claude.ai conversation" in wrong.output
    bad = run(vault_path, "ingest", str(CHATGPT), "--format", "fuzzy")
    assert bad.exit_code == 2
    copy = tmp_path / "transcript.txt"
    shutil.copy(CLAUDE_CODE, copy)
    assert run(vault_path, "ingest", str(copy), "--format", "claude-code").exit_code == 0
    assert "claude-code-8a1b2c3d-4e5f-4a6b-9c7d-0e1f2a3b4c5d" in sessions(vault_path)


def test_capture_follows_a_growing_claude_code_transcript(vault_path: Path,
                                                         tmp_path: Path) -> None:
    lines = CLAUDE_CODE.read_bytes().splitlines(keepends=True)
    transcript = tmp_path / CLAUDE_CODE.name
    # the reply of msg_01A is being written: its text record is there, its tool_use is not
    transcript.write_bytes(b"".join(lines[:6]))
    vault = Vault.open(vault_path)
    sid = default_session(transcript)
    assert sid == "claude-code-8a1b2c3d-4e5f-4a6b-9c7d-0e1f2a3b4c5d"
    grow = iter([lines[6:12], lines[12:]])
    seen: list[list[str]] = []

    def should_stop() -> bool:
        s = sessions(vault_path).get(sid)
        seen.append(texts(s) if s else [])
        chunk = next(grow, None)
        if chunk is None:
            return True
        with transcript.open("ab") as fh:
            fh.write(b"".join(chunk))
        return False

    stats = capture_file(vault, transcript, sid, follow=True, poll_s=0, should_stop=should_stop)
    # after the first pass only the question is in: the reply still being written waits
    assert seen[0] == ["网关重启之后 Telegram 通知没有发出去，帮我查一下 plugins.allow 的配置。"]
    assert len(seen[1]) < len(seen[2]) < 9
    # the held-back reply landed whole, once: its tool line included
    final = texts(sessions(vault_path)[sid])
    run(vault_path, "ingest", str(CLAUDE_CODE), "--json")  # the whole file: nothing new
    whole = texts(sessions(vault_path)[sid])
    assert final == whole and len(final) == 9 and stats.appended == 9
    assert "- tool Read:" in final[1]


@pytest.mark.parametrize("path", [CLAUDE_CODE, OPENCLAW])
def test_capture_and_ingest_name_a_transcript_the_same(vault_path: Path, path: Path) -> None:
    out = json.loads(run(vault_path, "capture", str(path), "--json").output)
    assert out["session"] == default_session(path) and out["turns"] > 3
    again = run(vault_path, "ingest", str(path))
    assert again.exit_code == 0 and "nothing changed" in again.output


def test_secrets_in_exports_and_claude_code_transcripts_are_redacted(vault_path: Path,
                                                                     tmp_path: Path) -> None:
    """Redaction (on by default) keeps every format parseable: a ChatGPT export is a JSON
    array, a Claude Code transcript JSONL — the secret goes, the turns stay."""
    from .test_trust_secrets import SECRETS

    key, zh = SECRETS["openai"], SECRETS["password-zh"]
    export = json.loads(CHATGPT.read_text())
    parts = export[0]["mapping"]
    node = next(n for n in parts.values() if (n.get("message") or {}).get("author", {})
                .get("role") == "user")
    node["message"]["content"]["parts"] = [f"Our key is {key}，数据库密码是 {zh}"]
    src = tmp_path / "conversations.json"
    src.write_text(json.dumps(export), encoding="utf-8")  # \uXXXX escapes, as exports are
    lines = CLAUDE_CODE.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "网关重启之后" in line)
    record = json.loads(lines[at])
    record["message"]["content"] = f"export OPENAI_API_KEY={key}"
    lines[at] = json.dumps(record, ensure_ascii=False) + "\n"
    cc = tmp_path / "cc.jsonl"
    cc.write_text("".join(lines), encoding="utf-8")
    result = run(vault_path, "ingest", str(src), str(cc), "--json")
    assert result.exit_code == 0, result.output
    for path in (vault_path / "sessions").rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert key not in text and zh not in text, path
            if path.suffix in (".json", ".jsonl"):  # the raw files still parse
                for chunk in ([text] if path.suffix == ".json" else text.splitlines()):
                    json.loads(chunk)
    got = sessions(vault_path)
    redacted = "\n".join(t for s in got.values() for t in texts(s))
    assert "[REDACTED:" in redacted and "网关重启之后" not in redacted  # line 1 was replaced
    assert len(got) == 3
