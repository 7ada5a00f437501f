"""The hooks in examples/ run against a real vault: Claude Code's (each event of its
settings.json, with the event JSON on stdin), the generic shell hook, the end-of-session
hook, every command of the OpenClaw skill, and the schedule files (cron.json, crontab)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vault_engine.store.model import Session
from vault_engine.store.vault import Vault

from .test_recall import graph_vault  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BIN = Path(sys.executable).parent
TRANSCRIPT = ROOT / "tests" / "fixtures" / "transcripts" / "8a1b2c3d-4e5f-4a6b-9c7d-0e1f2a3b4c5d.jsonl"
OPENCLAW = ROOT / "tests" / "fixtures" / "transcripts" / "f3c1a2b4-5d6e-4f70-8a91-b2c3d4e5f607.jsonl"
SID = "claude-code-8a1b2c3d-4e5f-4a6b-9c7d-0e1f2a3b4c5d"


@pytest.fixture
def home(graph_vault: Path, tmp_path: Path) -> Path:  # noqa: F811
    """A HOME whose ~/agent-memory is the graph vault, with the Claude Code hook installed
    where settings.json expects it."""
    home = tmp_path / "home"
    (home / ".claude" / "hooks").mkdir(parents=True)
    shutil.copy(EXAMPLES / "hooks" / "claude-code" / "alaya-hook.sh", home / ".claude" / "hooks")
    os.symlink(graph_vault, home / "agent-memory")
    return home


def env(home: Path, **extra: str) -> dict[str, str]:
    out = {"HOME": str(home), "PATH": f"{BIN}:/usr/bin:/bin", "ALAYA_EMBED_PROVIDER": "hash",
           "ALAYA_PYTHON": sys.executable, "ALAYA_HOOK_LOG": str(home / "hook.log"),
           "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
           "NO_COLOR": "1"}
    out.update(extra)
    return out


def sh(command: str, home: Path, stdin: str = "", cwd: Path | None = None,
       **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", command], input=stdin, capture_output=True, text=True,
                          env=env(home, **extra), cwd=cwd or home, timeout=180)


def session(vault: Path, sid: str = SID) -> Session | None:
    note = next((n for n in Vault.open(vault).load().notes if n.id == sid), None)
    return note if isinstance(note, Session) else None


def claude_commands() -> dict[str, str]:
    settings = json.loads((EXAMPLES / "hooks" / "claude-code" / "settings.json").read_text())
    return {event: groups[0]["hooks"][0]["command"]
            for event, groups in settings["hooks"].items()}


def event(name: str, transcript: Path, **fields: str) -> str:
    return json.dumps({"session_id": "8a1b2c3d-4e5f-4a6b-9c7d-0e1f2a3b4c5d",
                       "transcript_path": str(transcript), "cwd": "/home/li/ops-gateway",
                       "hook_event_name": name, **fields})


def test_claude_code_settings_wire_every_event_to_the_hook(home: Path, graph_vault: Path) -> None:  # noqa: F811
    commands = claude_commands()
    assert set(commands) == {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop",
                             "SessionEnd"}
    lines = TRANSCRIPT.read_bytes().splitlines(keepends=True)
    transcript = home / "transcript.jsonl"
    transcript.write_bytes(b"".join(lines[:12]))  # up to the first answer (msg_01C)
    fg = {"ALAYA_HOOK_FOREGROUND": "1"}

    start = sh(commands["SessionStart"], home, event("SessionStart", transcript, source="startup"))
    context = subprocess.run([str(BIN / "alaya"), "--vault", str(graph_vault), "context",
                              "--budget", "3000"], capture_output=True, text=True,
                             env=env(home)).stdout
    assert start.returncode == 0 and start.stdout == context

    prompt = sh(commands["UserPromptSubmit"], home,
                event("UserPromptSubmit", transcript, prompt="why was checkout down?"))
    assert prompt.returncode == 0 and "[[card-outage]]" in prompt.stdout

    stop = sh(commands["Stop"], home, event("Stop", transcript, stop_hook_active="false"), **fg)
    assert stop.returncode == 0 and stop.stdout == ""
    first = session(graph_vault)
    assert first is not None and len(first.turns) == 4
    transcript.write_bytes(b"".join(lines))  # the session went on, then compacted
    assert sh(commands["PreCompact"], home, event("PreCompact", transcript, trigger="auto"),
              **fg).returncode == 0
    grown = session(graph_vault)
    assert grown is not None and len(grown.turns) == 9
    assert [t.text for t in grown.turns[:4]] == [t.text for t in first.turns]

    # the next prompt already recalls what the session said (read your writes)
    again = sh(commands["UserPromptSubmit"], home,
               event("UserPromptSubmit", transcript, prompt="plugin telegram is not allowed"))
    assert f"[[{SID}#^t" in again.stdout

    end = sh(commands["SessionEnd"], home, event("SessionEnd", transcript, reason="exit"), **fg)
    assert end.returncode == 0
    done = session(graph_vault)
    assert done is not None and done.meta.get("distilled")


def test_claude_code_hook_captures_in_the_background_and_never_fails(
        home: Path, graph_vault: Path) -> None:  # noqa: F811
    command = claude_commands()["Stop"]
    began = time.monotonic()
    out = sh(command, home, event("Stop", TRANSCRIPT))
    assert out.returncode == 0 and out.stdout == ""
    deadline = began + 120
    while session(graph_vault) is None and time.monotonic() < deadline:
        time.sleep(0.2)  # the capture runs detached; poll for its note
    note = session(graph_vault)
    assert note is not None and len(note.turns) == 9
    for junk in ("", "not json", json.dumps({"hook_event_name": "Notification"}),
                 event("Stop", home / "missing.jsonl")):
        bad = sh(command, home, junk, ALAYA_HOOK_FOREGROUND="1")
        assert bad.returncode == 0 and bad.stdout == ""
    assert "ignoring event 'Notification'" in (home / "hook.log").read_text()


def test_generic_shell_hook(home: Path, graph_vault: Path, tmp_path: Path) -> None:  # noqa: F811
    hook = f"sh {EXAMPLES / 'hooks' / 'alaya-hook.sh'}"
    vault = {"ALAYA_VAULT": str(graph_vault)}
    assert sh(f"{hook} start", home, **vault).returncode == 0
    turn = sh(f"{hook} turn 'checkout outage 结账故障'", home, **vault)
    assert turn.returncode == 0 and "[[card-outage]]" in turn.stdout
    chat = tmp_path / "chat-0412.jsonl"
    chat.write_text("\n".join(json.dumps(m, ensure_ascii=False) for m in (
        {"role": "user", "content": "备份任务为什么失败？", "id": "m1"},
        {"role": "assistant", "content": "磁盘配额满了：the backup disk quota was exceeded.",
         "id": "m2"})) + "\n")
    assert sh(f"{hook} save {chat}", home, **vault).returncode == 0
    saved = session(graph_vault, "chat-0412")
    assert saved is not None and len(saved.turns) == 2
    assert "[[chat-0412#^t" in sh(f"{hook} turn 'backup disk quota'", home, **vault).stdout
    ended = sh(f"AGENT_TRANSCRIPT={chat} sh {EXAMPLES / 'hooks' / 'end-of-session.sh'}", home,
               **vault)
    assert ended.returncode == 0, ended.stderr
    done = session(graph_vault, "chat-0412")
    assert done is not None and done.meta.get("distilled")
    assert sh(f"{hook} save", home, **vault).returncode == 2
    assert sh(f"{hook} dance", home, **vault).returncode == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    quiet = sh(f"{hook} turn hello", home, ALAYA_VAULT=str(empty))  # no vault: no memory
    assert quiet.returncode == 0 and quiet.stdout == ""


def skill_commands() -> list[str]:
    text = (EXAMPLES / "openclaw" / "skills" / "alaya" / "SKILL.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_every_command_of_the_openclaw_skill_runs(home: Path, graph_vault: Path) -> None:  # noqa: F811
    sessions = home / ".openclaw" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    shutil.copy(OPENCLAW, sessions / "SESSION_ID.jsonl")
    commands = skill_commands()
    assert len(commands) >= 12 and any(c.startswith("echo '{\"concepts\"") for c in commands)
    for command in commands:
        run = command.replace("card-7f3a2c1d", "card-outage")
        out = sh(run, home, cwd=graph_vault)  # the vault found from the working directory
        assert out.returncode == 0, (command, out.stdout, out.stderr)
        json.loads(out.stdout)
    captured = session(graph_vault, "openclaw-f3c1a2b4-5d6e-4f70-8a91-b2c3d4e5f607")
    assert captured is not None and captured.meta.get("distilled")


def test_schedule_files_run_introspect_when_due(home: Path, graph_vault: Path) -> None:  # noqa: F811
    job = json.loads((EXAMPLES / "openclaw" / "cron.json").read_text())["jobs"][0]
    assert job["schedule"] == "0 * * * *"
    first = sh(job["command"].replace("~", "$HOME") + " --json", home,
               ALAYA_NOW="2026-12-01T08:00:00Z")
    assert first.returncode == 0 and json.loads(first.stdout)["ran"] is True
    line = next(ln for ln in (EXAMPLES / "schedule" / "crontab").read_text().splitlines()
                if ln and not ln.startswith("#"))
    command = line.split(None, 5)[5]  # the five time fields, then the command
    assert sh(command, home, ALAYA_NOW="2026-12-01T09:00:00Z").returncode == 0
    assert "Not due" in (home / ".alaya-introspect.log").read_text()
    unit = (EXAMPLES / "schedule" / "alaya-introspect.service").read_text()
    assert "introspect --if-due" in unit and "OnCalendar=hourly" in (
        EXAMPLES / "schedule" / "alaya-introspect.timer").read_text()
