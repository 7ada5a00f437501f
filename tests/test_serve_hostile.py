"""`alaya serve` under slow and malformed clients (issue 24), a real server process and raw
sockets: slow clients never hold a normal recall back, a request slower than the read
deadline gets 408 and a close, past the connection cap the slowest is dropped first, and
every malformed request RFC 9112 lets a server refuse gets 400 and a close."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_recall import graph_vault  # noqa: F401  (fixture)
from .test_serve_load import ALAYA, _serve


@pytest.fixture
def served(graph_vault: Path) -> Iterator[str]:  # noqa: F811
    yield from _serve(graph_vault)


def hostport(url: str) -> tuple[str, int]:
    host, _, port = url.split("://", 1)[1].split("/", 1)[0].rpartition(":")
    return host, int(port)


def send(url: str, data: bytes, timeout: float = 10.0) -> tuple[int, dict, bool]:
    """Send bytes as they are; (status, JSON body, whether the server closed the connection
    after its reply)."""
    with socket.create_connection(hostport(url), timeout=timeout) as sock:
        sock.sendall(data)
        got = b""
        closed = False
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    closed = True
                    break
                got += chunk
        except TimeoutError:
            pass
    head, _, body = got.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body), closed


class Drippers:
    """`n` clients that each began a request and send one more byte of it every `every`
    seconds — never finishing — each on its own connection; `bytes_each` bytes at first."""

    def __init__(self, url: str, n: int, every: float, first: bytes = b"POST /recall HTTP/1.1"
                 b"\r\nHost: x\r\nX-Slow: ") -> None:
        self.socks = [socket.create_connection(hostport(url)) for _ in range(n)]
        for s in self.socks:
            s.sendall(first)
        self.every = every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self) -> None:
        while not self.stop.wait(self.every):
            for s in self.socks:
                try:
                    s.sendall(b"a")
                except OSError:
                    pass  # dropped by the server

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        for s in self.socks:
            s.close()


def ends_with(sock: socket.socket, timeout: float) -> tuple[bytes, bool]:
    """What the server sent on `sock` and whether it closed it, within `timeout`."""
    sock.settimeout(timeout)
    got = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return got, True
            got += chunk
    except TimeoutError:
        return got, False
    except ConnectionResetError:  # it closed while we were still sending: closed too
        return got, True


def recall_cli(vault: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash"}
    env.pop("ALAYA_AGENT", None)
    started = time.monotonic()
    result = subprocess.run([ALAYA, "--vault", str(vault), "recall", "checkout outage", "--json",
                             "--top-k", "2"], capture_output=True, text=True, env=env,
                            timeout=120)
    return result, time.monotonic() - started


def test_sixty_slow_clients_never_hold_back_a_normal_recall(graph_vault: Path) -> None:  # noqa: F811
    """On main every worker read one of these clients (each byte restarted its timeout), and
    `alaya recall --json` waited 30 s for the server before answering in-process. The
    deadline is long here, so the slow clients stay connected all along."""
    for served in _serve(graph_vault, "--read-timeout", "300"):
        slow = Drippers(served, 60, every=2.0)
        try:
            time.sleep(2.5)  # every slow client has dripped at least once
            for _ in range(3):
                result, took = recall_cli(graph_vault)
                assert result.returncode == 0 and result.stderr == "", result.stderr  # served
                assert json.loads(result.stdout)["nodes"][0]["id"] == "card-outage"
                # generous for a loaded machine (it takes ~0.2 s); main's took 31 s
                assert took < 10.0, f"a normal recall took {took:.1f} s behind slow clients"
            alive = sum(not ends_with(s, 0.01)[1] for s in slow.socks)
            assert alive == 60  # within the deadline and the cap: nobody was dropped
        finally:
            slow.close()


def test_a_request_slower_than_the_read_deadline_gets_408_and_a_close(graph_vault: Path) -> None:  # noqa: F811
    for url in _serve(graph_vault, "--read-timeout", "1.5"):
        host = f"Host: {url.split('://', 1)[1]}\r\n".encode()
        head = Drippers(url, 1, every=0.3, first=b"POST /recall HTTP/1.1\r\n" + host + b"X: ")
        body = Drippers(url, 1, every=0.3, first=b"POST /recall HTTP/1.1\r\n" + host
                        + b"Content-Length: 500\r\n\r\n{")  # headers done, the body drips
        idle = socket.create_connection(hostport(url))  # connected, never says anything
        try:
            for sock in (*head.socks, *body.socks):
                got, closed = ends_with(sock, 15)
                assert closed and got.startswith(b"HTTP/1.1 408 "), got
                assert json.loads(got.partition(b"\r\n\r\n")[2])["error"] == "HTTP 408"
            assert ends_with(idle, 15) == (b"", True)  # closed without a word: it asked nothing
            result, _ = recall_cli(graph_vault)
            assert result.returncode == 0 and result.stderr == ""
        finally:
            head.close()
            body.close()
            idle.close()


def test_past_the_connection_cap_the_slowest_client_is_dropped(graph_vault: Path) -> None:  # noqa: F811
    for url in _serve(graph_vault, "--max-connections", "10", "--read-timeout", "120"):
        slowest = Drippers(url, 9, every=60)  # 36 bytes, then nothing
        steady = Drippers(url, 1, every=0.1)  # still slow, but ten bytes a second
        try:
            time.sleep(1.5)  # all older than the grace a new connection gets
            result, _ = recall_cli(graph_vault)  # the eleventh connection
            assert result.returncode == 0 and result.stderr == "", result.stderr
            ended = [ends_with(s, 0.5) for s in slowest.socks]
            dropped = [got for got, closed in ended if closed]
            assert len(dropped) == 1 and dropped[0].startswith(b"HTTP/1.1 503 "), ended
            assert "slowest" in json.loads(dropped[0].partition(b"\r\n\r\n")[2])["message"]
            assert ends_with(steady.socks[0], 0.5) == (b"", False)  # the faster one stays
        finally:
            slowest.close()
            steady.close()


def test_a_burst_of_idle_connections_past_the_cap_does_not_hold_the_server(graph_vault: Path) -> None:  # noqa: F811
    """Four times the cap opened at once and left silent: all too young to judge when they
    fill the slots, so accepting pauses — and the slots are judged again once they are old
    enough, the idle ones dropped for the clients waiting behind them. Before, nothing looked
    again until a read deadline (120 s here) closed one, and the recall gave up on the server."""
    for url in _serve(graph_vault, "--max-connections", "20", "--read-timeout", "120"):
        idle = []
        try:
            for _ in range(80):
                with contextlib.suppress(OSError):
                    idle.append(socket.create_connection(hostport(url), timeout=3))
            result, _ = recall_cli(graph_vault)
            assert result.returncode == 0 and result.stderr == "", result.stderr  # served
            assert json.loads(result.stdout)["nodes"][0]["id"] == "card-outage"
            assert sum(ends_with(s, 0.05)[1] for s in idle) > 0  # some were dropped for it
        finally:
            for s in idle:
                s.close()


def test_an_absolute_form_target_is_judged_by_its_own_authority(served: str) -> None:
    """RFC 9112 §3.2.2: a server takes the host from an absolute-form target and ignores Host;
    so does the rebinding check (before, `POST http://evil.example:PORT/recall` with a
    loopback Host was routed as an unknown path, 404, and an absolute loopback one too)."""
    host = served.split("://", 1)[1]
    q = b'{"query": "checkout outage", "mode": "bm25"}'

    def post(target: str) -> tuple[int, dict, bool]:
        return send(served, f"POST {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close"
                            f"\r\nContent-Length: {len(q)}\r\n\r\n".encode() + q)

    port = host.rsplit(":", 1)[1]
    for evil in (f"http://evil.example:{port}/recall", f"http://127.0.0.1.nip.io:{port}/recall",
                 "http:///recall", f"HTTP://localhost.evil.example:{port}/recall"):
        code, body, _ = post(evil)
        assert code == 403 and "not this server" in body["message"], (evil, body)
        assert "card-outage" not in json.dumps(body)
    code, body, _ = post(f"http://{host}/recall")
    assert code == 200 and body["nodes"][0]["id"] == "card-outage"


QUERY = b'{"query": "checkout outage", "mode": "bm25"}'  # a recall main answers 200
MALFORMED = {  # {h}: this server's host:port; {n}: len(QUERY); {q}: QUERY
    "HTTP/0.9 request line": b"GET /health\r\n",
    "no version at all": b"GET /health\r\n\r\n",
    "non-ASCII Authorization": "POST /recall HTTP/1.1\r\nHost: {h}\r\nAuthorization: Bearer "
                               "令牌-ü\r\nContent-Length: {n}\r\n\r\n{q}".encode(),
    "oversized header, at once": b"POST /recall HTTP/1.1\r\nHost: {h}\r\nX-Big: "
                                 + b"a" * 20_000 + b"\r\nContent-Length: {n}\r\n\r\n{q}",
    "conflicting Content-Length": b"POST /recall HTTP/1.1\r\nHost: {h}\r\nContent-Length: {n}"
                                  b"\r\nContent-Length: 99\r\n\r\n{q}",
    "Content-Length list": b"POST /recall HTTP/1.1\r\nHost: {h}\r\nContent-Length: {n}, 99"
                           b"\r\n\r\n{q}",
    "Transfer-Encoding with Content-Length": b"POST /recall HTTP/1.1\r\nHost: {h}\r\n"
                                             b"Content-Length: {n}\r\nTransfer-Encoding: "
                                             b"chunked\r\n\r\n{q}",
    "obs-fold": b"POST /recall HTTP/1.1\r\nHost: {h}\r\nX-Note: one\r\n two\r\n"
                b"Content-Length: {n}\r\n\r\n{q}",
    "bad chunk size": b"POST /recall HTTP/1.1\r\nHost: {h}\r\nTransfer-Encoding: chunked"
                      b"\r\n\r\nzz\r\n{q}\r\n0\r\n\r\n",
    "bad chunk end": b"POST /recall HTTP/1.1\r\nHost: {h}\r\nTransfer-Encoding: chunked"
                     b"\r\n\r\n{x}\r\n{q}XX0\r\n\r\n",
    "two Host headers": b"POST /recall HTTP/1.1\r\nHost: {h}\r\nHost: {h}\r\n"
                        b"Content-Length: {n}\r\n\r\n{q}",
    "no Host in HTTP/1.1": b"POST /recall HTTP/1.1\r\nContent-Length: {n}\r\n\r\n{q}",
}


def malformed(case: str, host: str, post: str = "/recall", get: str = "/health") -> bytes:
    """The bytes of MALFORMED[case] for the server at `host`, its POST and GET paths."""
    return (MALFORMED[case].replace(b"POST /recall", f"POST {post}".encode())
            .replace(b"GET /health", f"GET {get}".encode()).replace(b"{h}", host.encode())
            .replace(b"{n}", str(len(QUERY)).encode()).replace(b"{x}", b"%x" % len(QUERY))
            .replace(b"{q}", QUERY))


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_request_gets_400_and_a_close(served: str, case: str) -> None:
    data = malformed(case, served.split("://", 1)[1])
    status, body, closed = send(served, data)
    assert (status, body["error"], closed) == (400, "BadRequest", True), body
    assert body["message"]


def test_an_oversized_head_sent_slowly_is_refused_before_it_ends(served: str) -> None:
    with socket.create_connection(hostport(served), timeout=10) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        refused = b""
        for _ in range(40):  # 40 × 1 KiB of one header, never ended
            try:
                sock.sendall(b"X-Pad: " + b"p" * 1017 + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.01)
        refused, closed = ends_with(sock, 10)
    assert closed and refused.startswith(b"HTTP/1.1 400 "), refused


def test_well_formed_http11_is_still_spoken(served: str) -> None:
    """Keep-alive and pipelining, a chunked body, `Expect: 100-continue` (curl's way for a
    body over 1 KiB) and HTTP/1.0 are answered."""
    h = served.split("://", 1)[1]
    query = json.dumps({"query": "checkout outage 中文", "mode": "bm25", "top_k": 2},
                       ensure_ascii=False).encode()
    two = (f"GET /health HTTP/1.1\r\nHost: {h}\r\n\r\nPOST /recall HTTP/1.1\r\nHost: {h}\r\n"
           f"Content-Length: {len(query)}\r\nConnection: close\r\n\r\n").encode() + query
    with socket.create_connection(hostport(served), timeout=10) as sock:
        sock.sendall(two)
        got, closed = ends_with(sock, 10)
    assert closed and got.count(b"HTTP/1.1 200 OK") == 2 and b"card-outage" in got
    chunked = (f"POST /recall HTTP/1.1\r\nHost: {h}\r\nTransfer-Encoding: chunked\r\n"
               f"Connection: close\r\n\r\n{len(query):x}\r\n").encode() + query + b"\r\n0\r\n\r\n"
    status, body, _ = send(served, chunked)
    assert status == 200 and body["nodes"][0]["id"] == "card-outage"
    with socket.create_connection(hostport(served), timeout=10) as sock:
        sock.sendall((f"POST /recall HTTP/1.1\r\nHost: {h}\r\nContent-Length: {len(query)}\r\n"
                      "Expect: 100-continue\r\nConnection: close\r\n\r\n").encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 100 ")
        sock.sendall(query)
        got, closed = ends_with(sock, 10)
    assert closed and got.startswith(b"HTTP/1.1 200 ") and b"card-outage" in got
    status, body, closed = send(served, b"GET /health HTTP/1.0\r\n\r\n")
    assert status == 200 and body["ok"] and closed
    status, body, _ = send(served, f"PUT /recall HTTP/1.1\r\nHost: {h}\r\n\r\n".encode())
    assert status == 501 and "PUT" in body["message"]


def test_a_chunked_body_over_the_limit_gets_413(served: str) -> None:
    h = served.split("://", 1)[1]
    chunk = b"8000\r\n" + b" " * 0x8000 + b"\r\n"  # 32 KiB a chunk: 96 KiB over the 64 KiB
    data = (f"POST /recall HTTP/1.1\r\nHost: {h}\r\nTransfer-Encoding: chunked\r\n\r\n"
            .encode() + chunk * 3 + b"0\r\n\r\n")
    status, body, closed = send(served, data)
    assert status == 413 and "limit" in body["message"] and closed


def test_a_client_that_pipelines_and_never_reads_holds_no_one_back(graph_vault: Path) -> None:  # noqa: F811
    """Keep-alive lets a client queue requests without reading a reply: its replies are
    written as it reads them, never blocking the loop or a worker, and past the deadline
    with nothing taken the connection is closed."""
    for url in _serve(graph_vault, "--read-timeout", "1.5"):
        h = url.split("://", 1)[1]
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fills at once
        sock.connect(hostport(url))
        query = json.dumps({"query": "checkout outage gateway merge", "mode": "bm25",
                            "top_k": 50, "all_namespaces": True}).encode()
        one = (f"POST /recall HTTP/1.1\r\nHost: {h}\r\nContent-Length: {len(query)}\r\n\r\n"
               .encode() + query)
        sock.setblocking(False)
        queued = 0
        with contextlib.suppress(BlockingIOError):  # as many as the buffers take
            while queued < 4000:
                sock.send(one)
                queued += 1
        sock.setblocking(True)
        try:
            result, _ = recall_cli(graph_vault)
            assert result.returncode == 0 and result.stderr == "", result.stderr
            time.sleep(5)  # the replies it does not read fill every buffer; the deadline passes
            got, closed = ends_with(sock, 10)
            assert closed and got.count(b"HTTP/1.1 200 OK") < queued, (queued, len(got))
        finally:
            sock.close()
