"""`alaya serve` as a real process under hostile and heavy clients (issue #13): 200 clients
at once, a body limit, a Host/Origin allow-list against DNS rebinding, an answer for every
malformed request, and namespaces per request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.fast import exchange

from .test_recall import graph_vault  # noqa: F401  (fixture)

ALAYA = str(Path(sys.executable).parent / "alaya")


def _serve(vault: Path, *extra: str) -> Iterator[str]:
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash"}
    env.pop("ALAYA_AGENT", None)
    proc = subprocess.Popen([ALAYA, "--vault", str(vault), "serve", "--no-watch", *extra],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    info = vault / ".alaya" / "serve.json"
    try:
        for _ in range(300):
            if info.exists():
                try:
                    data = json.loads(info.read_text())
                    if data.get("pid") == proc.pid:
                        break
                except ValueError:
                    pass
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read().decode() if proc.stderr else "died")
            time.sleep(0.05)
        yield json.loads(info.read_text())["url"]
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def served(graph_vault: Path) -> Iterator[str]:  # noqa: F811
    yield from _serve(graph_vault)


def raw(url: str, request: bytes, timeout: float = 20.0) -> tuple[int, dict]:
    """Send bytes as they are; return the status and the JSON body of the reply."""
    data = exchange(url.split("://", 1)[1], request, timeout)
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body or b"null")


def post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    headers = {"Host": url.split("://", 1)[1], **(headers or {})}
    lines = ["POST /recall HTTP/1.1", f"Content-Length: {len(body)}", "Connection: close",
             *(f"{k}: {v}" for k, v in headers.items())]
    return raw(url, ("\r\n".join(lines) + "\r\n\r\n").encode() + body)


def ids(reply: dict) -> set[str]:
    return {n["id"] for n in reply["nodes"]}


def test_two_hundred_clients_at_once_are_all_answered(served: str) -> None:
    barrier = threading.Barrier(200)
    statuses: list[int] = []
    lock = threading.Lock()

    def client(i: int) -> None:
        body = json.dumps({"query": ["checkout outage", "gateway", "bad merge"][i % 3],
                           "mode": "bm25", "top_k": 3}).encode()
        barrier.wait()
        try:
            code, _ = post(served, body)
        except OSError as exc:  # a reset or refused connection: the failure on main
            code = -1
            print(exc)
        with lock:
            statuses.append(code)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses.count(200) == 200, sorted(set(statuses))


def test_limits_allow_list_and_malformed_requests_get_answers(served: str) -> None:
    hostport = served.split("://", 1)[1]
    port = hostport.rsplit(":", 1)[1]
    ok = json.dumps({"query": "outage", "mode": "bm25"}).encode()
    assert post(served, ok)[0] == 200
    assert post(served, ok, {"Host": f"localhost:{port}"})[0] == 200
    # a body over the limit: 413 without reading it
    code, body = raw(served, f"POST /recall HTTP/1.1\r\nHost: {hostport}\r\nContent-Length: "
                             f"5000000\r\n\r\n".encode() + b"{")
    assert code == 413 and "limit" in body["message"]
    # DNS rebinding: a page on evil.example resolving to 127.0.0.1
    code, body = raw(served, b"POST /recall HTTP/1.1\r\nHost: evil.example:" + port.encode()
                     + b"\r\nContent-Length: 2\r\n\r\n{}")
    assert code == 403 and "Host" in body["message"]
    code, body = post(served, ok, {"Origin": "http://evil.example"})
    assert code == 403 and "Origin" in body["message"]
    assert post(served, ok, {"Origin": f"http://127.0.0.1:{port}"})[0] == 200
    # malformed: every one answered with a JSON error, none dropped
    assert post(served, b"\xff\xfe{}")[0] == 400
    assert post(served, b"{not json")[0] == 400
    assert post(served, b'["a list"]')[0] == 400
    code, _ = raw(served, f"POST /recall HTTP/1.1\r\nHost: {hostport}\r\nContent-Length: "
                          "abc\r\n\r\n{}".encode())
    assert code == 400
    code, body = raw(served, b"GARBAGE\r\n\r\n")
    assert code == 400 and body["error"] == "BadRequest"
    code, _ = raw(served, f"POST /recall HTTP/1.1\r\nHost: {hostport}\r\n\r\n".encode())
    assert code == 411


def test_each_request_sees_its_agent_namespaces(served: str) -> None:
    query = json.dumps({"query": "checkout outage private notes", "mode": "bm25",
                        "top_k": 20, "all_namespaces": True}).encode()
    assert "card-private" in ids(post(served, query)[1])  # the owner sees everything
    assert "card-private" in ids(post(served, query, {"X-Alaya-Agent": "bob"})[1])
    assert "card-private" not in ids(post(served, query, {"X-Alaya-Agent": "alice"})[1])
    code, body = post(served, json.dumps({"query": "outage", "namespace": "bob-main"}).encode(),
                      {"X-Alaya-Agent": "alice"})
    assert code == 403 and body["error"] == "NamespaceError"
    assert post(served, query, {"X-Alaya-Agent": "../etc"})[0] == 400
    for blank in ("", " ", "\t"):  # a header naming nobody is an error, never the owner
        code, body = post(served, query, {"X-Alaya-Agent": blank})
        assert code == 400 and body["error"] == "UsageError", (blank, body)


def test_a_server_for_one_agent_answers_only_for_it(graph_vault: Path) -> None:  # noqa: F811
    for url in _serve(graph_vault, "--agent", "alice"):
        query = json.dumps({"query": "checkout outage private notes", "mode": "bm25",
                            "top_k": 20, "all_namespaces": True}).encode()
        code, reply = post(url, query)
        assert code == 200 and "card-private" not in ids(reply)
        code, body = post(url, query, {"X-Alaya-Agent": "bob"})
        assert code == 403 and "alice" in body["message"]
