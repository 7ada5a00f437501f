"""`alaya mcp --http` under slow and malformed clients (issue 24): serve's guards inside
uvicorn (cli/mcp_guard.py), against a real `alaya mcp --http` process and raw sockets."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .test_agents import payload
from .test_mcp import wait_for
from .test_recall import graph_vault  # noqa: F401  (fixture)
from .test_serve_hostile import MALFORMED, Drippers, ends_with, hostport, malformed, send

ALAYA = str(Path(sys.executable).parent / "alaya")
TOKEN = "t0ken-of-twenty-chars"


def _mcp(vault: Path, *extra: str) -> Iterator[dict[str, Any]]:
    env = dict(os.environ, ALAYA_EMBED_PROVIDER="hash")
    env.pop("ALAYA_AGENT", None)
    proc = subprocess.Popen([ALAYA, "--vault", str(vault), "mcp", "--http", "--port", "0",
                             "--token", TOKEN, *extra], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        yield wait_for(vault / ".alaya" / "mcp.json", proc)
    finally:
        proc.terminate()
        proc.wait(20)


@pytest.fixture
def mcp_http(graph_vault: Path) -> Iterator[dict[str, Any]]:  # noqa: F811
    yield from _mcp(graph_vault)


def recall_over_mcp(url: str) -> tuple[str, float]:
    """One real MCP session (initialize, list, a recall): the first node, and the time."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def work() -> str:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            found = payload(await client.call_tool("recall", {"query": "checkout outage"}))
            return str(found["nodes"][0]["id"])

    started = time.monotonic()
    first = asyncio.run(work())
    return first, time.monotonic() - started


def test_forty_slow_clients_never_hold_back_a_normal_call(graph_vault: Path) -> None:  # noqa: F811
    for info in _mcp(graph_vault, "--read-timeout", "300"):
        slow = Drippers(info["url"], 40, every=2.0,
                        first=b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        try:
            time.sleep(2.5)
            first, took = recall_over_mcp(info["url"])
            assert first == "card-outage" and took < 10.0, took
            assert not any(ends_with(s, 0.01)[1] for s in slow.socks)  # all still connected
        finally:
            slow.close()


def test_a_request_slower_than_the_read_deadline_gets_408_and_a_close(graph_vault: Path) -> None:  # noqa: F811
    for info in _mcp(graph_vault, "--read-timeout", "1.5"):
        host = info["url"].split("://", 1)[1].split("/", 1)[0]
        head = Drippers(info["url"], 1, every=0.3, first=f"POST /mcp HTTP/1.1\r\nHost: {host}"
                        "\r\nX: ".encode())
        body = Drippers(info["url"], 1, every=0.3, first=f"POST /mcp HTTP/1.1\r\nHost: {host}"
                        f"\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 500\r\n\r\n{{"
                        .encode())
        try:
            for sock in (*head.socks, *body.socks):
                got, closed = ends_with(sock, 15)
                assert closed and got.startswith(b"HTTP/1.1 408 "), got
            first, _ = recall_over_mcp(info["url"])  # and the server still works
            assert first == "card-outage"
        finally:
            head.close()
            body.close()


def test_past_the_connection_cap_the_slowest_client_is_dropped(graph_vault: Path) -> None:  # noqa: F811
    for info in _mcp(graph_vault, "--max-connections", "6", "--read-timeout", "120"):
        slowest = Drippers(info["url"], 5, every=60)
        steady = Drippers(info["url"], 1, every=0.1)
        try:
            time.sleep(1.5)
            host = info["url"].split("://", 1)[1].split("/", 1)[0]
            status, _, _ = send(info["url"], f"GET /mcp HTTP/1.1\r\nHost: {host}\r\n"
                                "Connection: close\r\n\r\n".encode())
            assert status == 401  # answered: no token (a whole request, promptly)
            ended = [ends_with(s, 0.5) for s in slowest.socks]
            dropped = [got for got, closed in ended if closed]
            assert len(dropped) == 1 and dropped[0].startswith(b"HTTP/1.1 503 "), ended
            assert ends_with(steady.socks[0], 0.5) == (b"", False)
        finally:
            slowest.close()
            steady.close()


OURS = {"HTTP/0.9 request line", "no version at all", "non-ASCII Authorization",
        "oversized header, at once", "Transfer-Encoding with Content-Length", "obs-fold",
        "two Host headers"}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_request_gets_400_and_a_close(mcp_http: dict[str, Any], case: str) -> None:
    url = mcp_http["url"]
    host = url.split("://", 1)[1].split("/", 1)[0]
    data = malformed(case, host, post="/mcp", get="/mcp")
    with socket.create_connection(hostport(url), timeout=10) as sock:
        sock.sendall(data)
        got, closed = ends_with(sock, 10)
    assert closed and got.startswith(b"HTTP/1.1 400 "), got
    if case in OURS:  # refused by the guard, in serve's words
        assert json.loads(got.partition(b"\r\n\r\n")[2])["error"] == "BadRequest"
