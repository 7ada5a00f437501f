"""Text that is not Unicode at every door: a lone surrogate (JSON's `"\\ud800"`, which no UTF-8
can hold) is mended to U+FFFD wherever data comes in — a session, a card sent as JSON, a
query on stdin, a request to `serve`, an MCP tool's arguments — and a command-line argument
that is not UTF-8 (the OS hands Python its bytes as lone surrogates) is one error line, exit 2.
Each of these ended in a traceback (UnicodeEncodeError) before."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from vault_engine.text.mend import mended, unpaired

from .test_recall import graph_vault  # noqa: F401  (fixture)
from .test_serve_hostile import send
from .test_serve_load import ALAYA, _serve

LONE = '"\\ud800"'  # as JSON writes it


def run(vault: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash"}
    env.pop("ALAYA_AGENT", None)
    return subprocess.run([ALAYA, "--vault", str(vault), *args], input=stdin,
                          capture_output=True, env=env, timeout=120)


def test_mended_replaces_only_lone_surrogates() -> None:
    text = "密码 \ud800 ok 😀 \udfff"
    assert unpaired(text) == 3 and unpaired("😀 中文") is None
    assert mended({"k\udc80": [text, 3, None]}) == {"k\ufffd": ["密码 \ufffd ok 😀 \ufffd", 3, None]}
    same = "plain"
    assert mended(same) is same


def test_an_argument_that_is_not_utf8_is_one_error_line(graph_vault: Path) -> None:  # noqa: F811
    for args in (["recall", b"\xff\xfe checkout".decode("utf-8", "surrogateescape"), "--json"],
                 ["new", "--title", b"bad \xff".decode("utf-8", "surrogateescape"),
                  "--type", "fact"]):
        env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash"}
        result = subprocess.run([os.fsencode(ALAYA), b"--vault", os.fsencode(graph_vault),
                                 *[a.encode("utf-8", "surrogateescape") for a in args]],
                                capture_output=True, env=env, timeout=120)
        err = result.stderr.decode("utf-8", "replace")
        assert result.returncode == 2, err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert "is not valid UTF-8" in err and "fix:" in err, err
    assert "bad" not in "".join(p.name for p in (graph_vault / "cards").rglob("*.md"))


def test_a_session_with_a_lone_surrogate_is_ingested_mended(graph_vault: Path, tmp_path: Path) -> None:  # noqa: F811
    src = tmp_path / "s.json"
    src.write_text('{"id": "sess-lone", "turns": [{"role": "user", "content": "我更喜欢用 tabs '
                   + LONE[1:-1] + ' 缩进"}, {"role": "assistant", "name": "bot' + LONE[1:-1]
                   + '", "content": "noted"}]}', encoding="utf-8")
    result = run(graph_vault, "ingest", str(src), "--json")
    assert result.returncode == 0, result.stderr.decode()
    note = next(graph_vault.rglob("sess-lone.md")).read_text(encoding="utf-8")
    assert "我更喜欢用 tabs \ufffd 缩进" in note
    assert (tmp_path / "s.json").read_bytes() in b"".join(
        p.read_bytes() for p in graph_vault.rglob("sess-lone.json"))  # the raw file as it came


def test_a_card_and_a_query_as_json_on_stdin(graph_vault: Path) -> None:  # noqa: F811
    card = ('{"title": "Lone ' + LONE[1:-1] + ' title", "type": "fact", '
            '"claims": ["备份在凌晨 ' + LONE[1:-1] + ' 执行"]}').encode()
    made = run(graph_vault, "new", "-", "--json", stdin=card)
    assert made.returncode == 0, made.stderr.decode()
    assert any("Lone \ufffd title" in p.name for p in (graph_vault / "cards").rglob("*.md"))
    asked = run(graph_vault, "recall", "--json", stdin=('{"query": "checkout ' + LONE[1:-1]
                                                        + ' outage"}').encode())
    assert asked.returncode == 0, asked.stderr.decode()
    assert json.loads(asked.stdout)["query"]["text"] == "checkout \ufffd outage"


def test_serve_and_mcp_answer_a_lone_surrogate(graph_vault: Path) -> None:  # noqa: F811
    for url in _serve(graph_vault):
        body = ('{"query": "checkout ' + LONE[1:-1] + ' outage"}').encode()
        host = url.split("://", 1)[1]
        code, reply, _ = send(url, f"POST /recall HTTP/1.1\r\nHost: {host}\r\nConnection: "
                              f"close\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        assert code == 200, reply
        assert reply["query"]["text"] == "checkout \ufffd outage"

    # the mcp client cannot even send one (pydantic refuses to encode it): JSON-RPC by hand
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "recall", "arguments": {"query": "checkout @LONE@ outage"}}}]
    data = "".join(json.dumps(m) + "\n" for m in lines).replace("@LONE@", LONE[1:-1])
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash"}
    env.pop("ALAYA_AGENT", None)
    proc = subprocess.Popen([ALAYA, "--vault", str(graph_vault), "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(data.encode())
    proc.stdin.flush()
    answer: dict[str, Any] = {}
    for raw in proc.stdout:
        message = json.loads(raw)
        if message.get("id") == 2:
            answer = message
            break
    proc.stdin.close()
    proc.wait(30)
    text = json.dumps(answer, ensure_ascii=False)
    assert "result" in answer and not answer["result"].get("isError"), text
    assert "checkout \ufffd outage" in text, text
