"""The HTTP/1.1 server under `alaya serve`: h11 (python-hyper's HTTP/1.1 state machine) on an
asyncio event loop, answers computed in a bounded pool of worker threads.

Why not the standard library's server: a worker thread per connection in reading, so 40
clients that each send a byte every 5 s hold every worker (the socket timeout restarts with
each byte) and a normal recall waits behind them. Why not uvicorn: no deadline for reading a
request's head or body (only an idle keep-alive timeout), and its connection limit answers
every new client 503 once slow ones fill it. Here:

- one event loop holds every connection; reading a request costs a worker nothing;
- a read deadline per request — its line, headers and body together (`read_timeout`): past
  it, 408 and a close, however the bytes trickle in;
- at most `max_connections` open: past it, the slowest connection still sending its request
  is dropped (503) for the new one (compilers/http_guard.Slots); when none may be dropped, no
  more are accepted until one closes (they wait in the listen backlog);
- malformed requests are refused with 400 and a close — h11's errors and
  http_guard.inspect_head's (HTTP/0.9, oversized or non-ASCII heads, obs-fold,
  Transfer-Encoding with Content-Length, bad chunking, conflicting lengths);
- the application (`App`) answers cheap things on the loop and returns a callable for work
  (a recall), which runs in the pool; the loop keeps serving other connections meanwhile.
  Keep-alive and pipelining follow HTTP/1.1 (h11).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import h11

from .http_guard import (
    GRACE_S,
    LINGER_S,
    MAX_CONNECTIONS,
    MAX_HEAD,
    READ_TIMEOUT_S,
    Progress,
    Refusal,
    Slots,
    error_body,
    inspect_head,
    response_bytes,
)

Reply = tuple[int, Any]  # (status, a JSON-able body)


class Request:
    """One request's line and headers (names lower-case; a repeated header's values joined
    with ", ", as RFC 9110 §5.3 combines them). A target in absolute form
    (`POST http://host:port/recall`) is split, as RFC 9112 §3.2.2 says a server must: its
    authority is the request's host (`authority`; the Host header is ignored) and `target`
    the path and query; otherwise `authority` is the Host header."""

    __slots__ = ("method", "target", "path", "query", "headers", "authority")

    def __init__(self, event: h11.Request) -> None:
        self.method = event.method.decode("ascii")
        self.target = event.target.decode("ascii")
        headers: dict[str, str] = {}
        for name, value in event.headers:
            key, text = name.decode("ascii"), value.decode("ascii")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        self.headers = headers
        self.authority = headers.get("host", "")
        scheme, sep, rest = self.target.partition("://")
        if sep and scheme.lower() in ("http", "https") and "/" not in scheme:
            authority, slash, path = rest.partition("/")
            self.authority = authority or "(none)"  # `http:///x` names no host: not ours
            self.target = slash + path if slash else "/"
        self.path, _, self.query = self.target.partition("?")


class App(Protocol):
    max_body: int

    def before_body(self, request: Request) -> Reply | None:
        """A refusal decided from the line and headers alone (on the loop), or None."""

    def answer(self, request: Request, body: bytes) -> Reply | Callable[[], Reply]:
        """The reply, or a callable that computes it in the worker pool."""


class HttpServer:
    """Serve `app` on the listening socket `sock` until `shutdown()` (from any thread)."""

    def __init__(self, sock: socket.socket, app: App, *, workers: int,
                 read_timeout: float = READ_TIMEOUT_S,
                 max_connections: int = MAX_CONNECTIONS) -> None:
        self.sock = sock
        self.app = app
        self.read_timeout = read_timeout
        self.slots = Slots(max_connections)
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="alaya-serve")
        self.loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._started = threading.Event()
        self._accepting = False
        self._judging = False  # a later look at the slots is due (`_judge`)
        self.connections: set[_Connection] = set()

    def serve_forever(self) -> None:
        asyncio.run(self._run())

    def shutdown(self) -> None:
        self._started.wait(10)
        loop, stopped = self.loop, self._stopped
        if loop is not None and stopped is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stopped.set)
            except RuntimeError:
                pass  # the loop already ended

    async def _run(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        self.sock.setblocking(False)
        self._resume()
        self._started.set()
        try:
            await self._stopped.wait()
        finally:
            self._pause()
            for connection in list(self.connections):
                connection.close()
            self.sock.close()
            self.pool.shutdown(wait=False, cancel_futures=True)

    # -- accepting, within the cap ------------------------------------------------------------
    def _resume(self) -> None:
        if not self._accepting and self.loop is not None and self.sock.fileno() != -1:
            self.loop.add_reader(self.sock, self._accept)
            self._accepting = True

    def _pause(self) -> None:
        if self._accepting and self.loop is not None:
            self.loop.remove_reader(self.sock)
            self._accepting = False

    def _accept(self) -> None:
        assert self.loop is not None
        for _ in range(64):  # a burst, then the loop's other work
            if len(self.slots.open) > self.slots.cap:
                # no connection may be dropped yet (all being answered, or too young to judge):
                # the listen backlog waits, and the slots are judged again once the young
                # ones are old enough — idle connections opened in a burst never hold the
                # server until their read deadline
                self._pause()
                self._judge_later()
                return
            try:
                client, _ = self.sock.accept()
            except BlockingIOError:
                return
            except OSError:  # EMFILE and the like: let connections close first
                self._pause()
                self.loop.call_later(0.1, self._resume)
                return
            _Connection(self, client)

    def freed(self) -> None:
        if len(self.slots.open) <= self.slots.cap:
            self._resume()

    def _judge_later(self) -> None:
        if not self._judging and self.loop is not None:
            self._judging = True
            self.loop.call_later(GRACE_S, self._judge)

    def _judge(self) -> None:
        assert self.loop is not None
        self._judging = False
        if self.slots.make_room(self.loop.time()):
            self.freed()
        elif not self._accepting:
            self._judge_later()


class _Connection:
    """One client on a plain non-blocking socket the loop watches for reading (no asyncio
    transport): its requests read under a deadline and checked, answered one at a time
    (pipelined ones wait in h11), then closed — lingering after a reply that ends it.

    A recall's reply is written by the worker thread that computed it, straight to the socket
    (the loop stops watching it meanwhile): on two cores the loop thread waits for the GIL
    behind the recall threads, and a reply that needed it to be written waited with it."""

    def __init__(self, server: HttpServer, sock: socket.socket) -> None:
        self.server = server
        self.app = server.app
        assert server.loop is not None
        self.loop = server.loop
        self.sock = sock
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        self.pending = bytearray()  # the current request's head, until inspect_head passes it
        self.checked = False
        self.request: Request | None = None
        self.body = bytearray()
        self.busy = False  # a reply is being made: the socket is not watched meanwhile
        self.closing = False  # lingering or closed
        self.closed = False
        self.watched = False
        self.out: memoryview | None = None  # what is left of a reply the socket did not take
        self.out_close = False
        self.deadline: asyncio.TimerHandle | None = None
        self.progress = Progress(self.loop.time(), self.drop)
        sock.setblocking(False)
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            # no Nagle: a reply the socket takes in two writes would wait for the client's
            # delayed ACK (40 ms) before its second part
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # room for a whole reply in one write (a recall's is 5–50 KB; the kernel starts a
        # socket at 16 KiB): the worker's send takes it all, no wake-up of the loop to finish
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 256 * 1024)
        server.connections.add(self)
        server.slots.open.add(self.progress)
        server.slots.make_room(self.loop.time())
        self._watch()
        self._arm()

    # -- reading ------------------------------------------------------------------------------
    def _watch(self) -> None:
        if not self.watched and not self.closed:
            self.loop.add_reader(self.sock, self._readable)
            self.watched = True

    def _unwatch(self) -> None:
        if self.watched:
            self.loop.remove_reader(self.sock)
            self.watched = False

    def _readable(self) -> None:
        try:
            data = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return self.close()
        if self.closing:  # lingering: read and dropped, until the client is done
            if not data:
                self.close()
            return
        if not data:
            return self._ended()
        if self.progress.reading:
            self.progress.received += len(data)
        self.conn.receive_data(data)
        if not self.checked:
            self.pending += data
        self._advance()

    def _ended(self) -> None:
        """The client sent its last byte."""
        if self.progress.received == 0 and not self.conn.trailing_data[0]:
            return self.close()  # closed between requests
        self.conn.receive_data(b"")
        self._advance()

    def _advance(self) -> None:
        if self.busy or self.closing:
            return
        try:
            if not self.checked:
                if inspect_head(self.pending) is None:
                    if self.conn.trailing_data[1]:  # the client closed mid-head
                        raise Refusal(400, "the request ended early")
                    return
                self.checked = True
            while self.checked and not self.busy and not self.closing:
                event = self.conn.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    return
                self._take(event)
        except h11.RemoteProtocolError as exc:
            status = 501 if exc.error_status_hint == 501 else 400
            self._refuse(status, str(exc) or "malformed request")
        except Refusal as refusal:
            self._refuse(refusal.status, refusal.message)

    def _take(self, event: Any) -> None:
        if isinstance(event, h11.Request):
            self.request = Request(event)
            early = self.app.before_body(self.request)
            if early is not None:  # refused before its body was read: the connection ends
                self._reply(*early, close=True)
            elif self.conn.they_are_waiting_for_100_continue:  # curl, for a body over 1 KiB
                self._try_send(self.conn.send(h11.InformationalResponse(
                    status_code=100, headers=[], reason=b"Continue")) or b"")
        elif isinstance(event, h11.Data):
            self.body += event.data
            if len(self.body) > self.app.max_body:  # chunked, past the limit
                self._reply(413, too_large(len(self.body), self.app.max_body), close=True)
        elif isinstance(event, h11.EndOfMessage):
            assert self.request is not None
            self._answer(self.request, bytes(self.body))
        elif isinstance(event, h11.ConnectionClosed):
            if self.request is not None:
                raise Refusal(400, "the request ended early")
            self.close()

    # -- answering ----------------------------------------------------------------------------
    def _answer(self, request: Request, body: bytes) -> None:
        self._disarm()
        self.progress.reading = False
        reply = self.app.answer(request, body)
        if not callable(reply):
            return self._reply(*reply)
        self.busy = True
        self._unwatch()  # the worker writes the reply; what comes meanwhile waits in the kernel
        self.server.pool.submit(self._work, reply)

    def _response(self, status: int, body: Any, close: bool) -> tuple[bytes, bool]:
        close = close or self.conn.their_state is not h11.DONE
        data = response_bytes(self.conn, status, body, close)
        return data, close or self.conn.our_state is not h11.DONE

    def _work(self, reply: Callable[[], Reply]) -> None:
        """In a worker thread: compute, write what the socket takes now, hand the rest and the
        connection back to the loop."""
        try:
            status, body = reply()
        except Exception as exc:  # noqa: BLE001 - a bug answers 500; the server goes on
            status, body = 500, {"error": type(exc).__name__, "message": str(exc)}
        data, close = self._response(status, body, False)
        sent = self._try_send(data)
        if sent == len(data) and close:
            self._half_close()  # the client sees the end at once
        try:
            self.loop.call_soon_threadsafe(self._flush, data[sent:], close)
        except RuntimeError:
            pass  # the loop has ended

    def _reply(self, status: int, body: Any, close: bool = False) -> None:
        """A reply made on the loop (a refusal, the proof, /health)."""
        data, close = self._response(status, body, close)
        sent = self._try_send(data)
        if sent == len(data) and close:
            self._half_close()
        self._flush(data[sent:], close)

    def _try_send(self, data: bytes) -> int:
        """How much of `data` the socket takes now, without waiting."""
        try:
            return self.sock.send(data)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError:
            return len(data)  # the client is gone: nothing more to write

    def _half_close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def _flush(self, rest: bytes, close: bool) -> None:
        """On the loop: write what is left of a reply as the client reads it (never blocking
        the loop or a worker), within the deadline; then `_written`."""
        if self.closed:
            return
        if not rest:
            return self._written(close)
        self.busy = True
        self._unwatch()
        self.out, self.out_close = memoryview(rest), close
        self._disarm()
        self.deadline = self.loop.call_later(self.server.read_timeout, self.close)
        self.loop.add_writer(self.sock, self._writable)

    def _writable(self) -> None:
        out = self.out
        assert out is not None
        self.out = out = out[self._try_send(bytes(out[:65536])):]
        if len(out):
            return
        self.loop.remove_writer(self.sock)
        self._disarm()
        if self.out_close:
            self._half_close()
        self._written(self.out_close)

    def _written(self, close: bool) -> None:
        """On the loop, once a reply is out: linger, or wait for the next request."""
        self.busy, self.out = False, None
        if self.closed:
            return
        if close:
            return self._linger()
        self.conn.start_next_cycle()  # keep-alive: the next request, maybe already here
        self.checked, self.request, self.body = False, None, bytearray()
        self.pending = bytearray(self.conn.trailing_data[0])
        self.progress.begin(self.loop.time(), len(self.pending))
        self._watch()
        self._arm()
        if self.pending:
            self.loop.call_soon(self._advance)  # a pipelined request, checked like any

    def _refuse(self, status: int, message: str) -> None:
        self._reply(status, error_body(status, message), close=True)

    # -- ending -------------------------------------------------------------------------------
    def _linger(self) -> None:
        """After the reply and our half-close, read what the client still sends for a moment,
        then close: closing with unread bytes makes the kernel reset the connection, and a
        reset can destroy the reply before the client reads it (RFC 9112 §9.6)."""
        self._disarm()
        self.closing = True
        self.progress.begin(self.loop.time())  # a lingering connection may be dropped
        self._watch()
        self.deadline = self.loop.call_later(LINGER_S, self.close)

    def close(self) -> None:
        if self.closed:
            return
        self._disarm()
        self._unwatch()
        if self.out is not None:
            self.loop.remove_writer(self.sock)
        self.closing = self.closed = True
        self.server.connections.discard(self)
        self.server.slots.open.discard(self.progress)
        try:
            self.sock.close()
        except OSError:
            pass
        self.server.freed()

    def drop(self) -> None:
        """Dropped as the slowest, for a new connection (http_guard.Slots)."""
        if not self.closing and self.conn.our_state is h11.IDLE:
            self._try_send(response_bytes(self.conn, 503, error_body(
                503, "too many open connections: the slowest one was dropped"), True))
        self.close()

    def _arm(self) -> None:
        self._disarm()
        self.deadline = self.loop.call_later(self.server.read_timeout, self._expired)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _expired(self) -> None:
        self.deadline = None
        if self.closing or self.busy:
            return
        if self.progress.received:  # a request begun and not finished in time
            self._refuse(408, "the request was not received within "
                              f"{self.server.read_timeout:g} s")
        else:
            self.close()  # it never asked anything


def too_large(size: int, limit: int) -> dict[str, str]:
    """The 413 body: a declared length, or a chunked body that grew past the limit."""
    return {"error": "UsageError", "message": f"the body is {size:,} bytes, over the "
            f"{limit:,}-byte limit", "fix": "send a shorter query"}
