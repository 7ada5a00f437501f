"""`alaya capture`: killed mid-stream and started again, every turn lands exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from cli.main import cli
from vault_engine.store.vault import Vault

ROOT = Path(__file__).resolve().parent.parent


def message(i: int) -> bytes:
    role = "user" if i % 2 else "assistant"
    return (json.dumps({"role": role, "content": f"message number {i} about the gateway",
                        "timestamp": f"2026-11-30T10:{i % 60:02d}:00Z", "id": f"m{i}"})
            + "\n").encode()


def turns(vault: Path, session: str) -> list[str]:
    index = Vault.open(vault).load()
    note = index.find(session)
    return [t.text for t in note.turns]  # type: ignore[attr-defined]


def test_kill_mid_stream_and_restart_yields_every_turn_once(vault_path: Path,
                                                             tmp_path: Path) -> None:
    transcript = tmp_path / "chat-0412.jsonl"
    transcript.write_bytes(b"".join(message(i) for i in range(1, 4)) + message(4)[:20])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", "from cli.main import main; main()",
                             "--vault", str(vault_path), "capture", str(transcript),
                             "--follow", "--poll", "0.05"], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # wait until the first 3 turns are in
            if (vault_path / ".alaya" / "capture" / "chat-0412.json").exists() and \
                    json.loads((vault_path / ".alaya" / "capture" / "chat-0412.json")
                               .read_text())["turns"] == 3:
                break
            time.sleep(0.05)
        with transcript.open("ab") as fh:  # finish the half-written line, keep writing
            fh.write(message(4)[20:])
            for i in range(5, 9):
                fh.write(message(i))
                fh.flush()
                time.sleep(0.03)
        time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)  # no chance to clean up
    finally:
        proc.wait(10)
    with transcript.open("ab") as fh:
        for i in range(9, 12):
            fh.write(message(i))
    res = CliRunner().invoke(cli, ["--vault", str(vault_path), "capture", str(transcript),
                                   "--json"])
    assert res.exit_code == 0, res.output
    assert turns(vault_path, "chat-0412") == [
        f"message number {i} about the gateway" for i in range(1, 12)]
    again = json.loads(CliRunner().invoke(cli, ["--vault", str(vault_path), "capture",
                                                str(transcript), "--json"]).output)
    assert again["appended"] == 0 and again["turns"] == 11  # nothing twice


def test_stdin_spools_skips_seen_ids_and_cut_lines(vault_path: Path) -> None:
    first = b"".join(message(i) for i in range(1, 4))
    res = CliRunner().invoke(cli, ["--vault", str(vault_path), "capture", "-", "--session",
                                   "s-stdin", "--batch", "2", "--json"], input=first)
    assert res.exit_code == 0, res.output
    # the producer restarts and sends everything again, plus new lines and a cut-off one
    again = first + message(4) + message(5) + b'{"role": "user", "content": "cut'
    res = CliRunner().invoke(cli, ["--vault", str(vault_path), "capture", "-", "--session",
                                   "s-stdin", "--json"], input=again)
    out = json.loads(res.output)
    assert out["appended"] == 2 and out["turns"] == 5
    assert any("cut off" in s for s in out["skipped"])
    assert len(turns(vault_path, "s-stdin")) == 5
    bad = CliRunner().invoke(cli, ["--vault", str(vault_path), "capture", "-"], input=first)
    assert bad.exit_code == 2 and "--session" in bad.output


def test_malformed_line_is_reported_and_skipped(vault_path: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(message(1) + b"{oops\n" + message(2))
    out = json.loads(CliRunner().invoke(cli, ["--vault", str(vault_path), "capture",
                                              str(transcript), "--json"]).output)
    assert out["turns"] == 2 and out["skipped"][0].startswith("line 2: not JSON")
