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
    with ", ", as RFC 9110 §5.3 combines them)."""

    __slots__ = ("method", "target", "path", "query", "headers")

    def __init__(self, event: h11.Request) -> None:
        self.method = event.method.decode("ascii")
        self.target = event.target.decode("ascii")
        self.path, _, self.query = self.target.partition("?")
        headers: dict[str, str] = {}
        for name, value in event.headers:
            key, text = name.decode("ascii"), value.decode("ascii")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        self.headers = headers


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
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._started = threading.Event()

    # -- life cycle -------------------------------------------------------------------------
    def serve_forever(self) -> None:
        asyncio.run(self._run())

    def shutdown(self) -> None:
        self._started.wait(10)
        loop, stopped = self._loop, self._stopped
        if loop is not None and stopped is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stopped.set)
            except RuntimeError:
                pass  # the loop already ended

    async def _run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        self._freed = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self.sock.setblocking(False)
        self._started.set()
        acceptor = asyncio.create_task(self._accept())
        try:
            await self._stopped.wait()
        finally:
            acceptor.cancel()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(acceptor, *self._tasks, return_exceptions=True)
            self.sock.close()
            self.pool.shutdown(wait=False, cancel_futures=True)

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while len(self.slots.open) > self.slots.cap:
                self._freed.clear()  # every slot is busy answering: the backlog waits
                await self._freed.wait()
            try:
                client, _ = await loop.sock_accept(self.sock)
            except OSError:
                await asyncio.sleep(0.05)  # EMFILE and the like: let connections close first
                continue
            client.setblocking(False)
            task = loop.create_task(self._connection(client))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    # -- one connection ---------------------------------------------------------------------
    async def _connection(self, client: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        try:
            reader, writer = await asyncio.open_connection(sock=client, limit=MAX_HEAD)
        except OSError:
            client.close()
            return
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        task = asyncio.current_task()

        def drop() -> None:  # the slowest, for a new connection (http_guard.Slots)
            self._write_now(writer, conn, 503, error_body(503, "too many open connections: the "
                                                           "slowest one was dropped"))
            if task is not None:
                task.cancel()

        progress = Progress(loop.time(), drop)
        self.slots.open.add(progress)
        self.slots.make_room(loop.time())
        try:
            while await self._one(reader, writer, conn, progress):
                conn.start_next_cycle()
            if conn.our_state is h11.MUST_CLOSE:  # we ended it: let the client read why
                progress.begin(loop.time())  # a lingering connection may be dropped
                await self._linger(reader, writer)
        except (OSError, asyncio.CancelledError):
            pass
        except Exception as exc:  # noqa: BLE001 - a bug answers 500; the server goes on
            self._write_now(writer, conn, 500, {"error": type(exc).__name__,
                                                "message": str(exc)})
        finally:
            self.slots.open.discard(progress)
            self._freed.set()
            writer.close()

    @staticmethod
    async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Half-close and read what the client still sends for a moment, then close: closing
        with unread bytes makes the kernel reset the connection, and a reset can destroy the
        reply before the client reads it (RFC 9112 §9.6)."""
        try:
            writer.write_eof()
            async with asyncio.timeout(LINGER_S):
                while await reader.read(65536):
                    pass
        except (OSError, RuntimeError, TimeoutError):
            pass

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   conn: h11.Connection, progress: Progress) -> bool:
        """Read, answer and write one request; whether the connection may carry another."""
        loop = asyncio.get_running_loop()
        held = bytes(conn.trailing_data[0])  # a pipelined request h11 already has
        progress.begin(loop.time(), len(held))
        try:
            async with asyncio.timeout(self.read_timeout):
                got = await self._read(reader, writer, conn, progress, bytearray(held))
        except TimeoutError:
            if progress.received:  # a request begun and not finished in time
                await self._write(writer, conn, 408, error_body(408, "the request was not "
                                  f"received within {self.read_timeout:g} s"), close=True)
            return False
        except Refusal as refusal:
            await self._write(writer, conn, refusal.status, error_body(refusal.status,
                                                                   refusal.message), close=True)
            return False
        if got is None:
            return False
        request, body, early = got
        progress.reading = False
        if early is not None:  # refused before its body was read: the connection ends
            await self._write(writer, conn, *early, close=True)
            return False
        reply = self.app.answer(request, body)
        if callable(reply):
            reply = await loop.run_in_executor(self.pool, reply)
        await self._write(writer, conn, *reply)
        return conn.our_state is h11.DONE and conn.their_state is h11.DONE

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    conn: h11.Connection, progress: Progress, pending: bytearray
                    ) -> tuple[Request, bytes, Reply | None] | None:
        """One whole request: (request, body, None), or (request, b"", a refusal decided
        before the body), or None when the client closed before sending one."""
        checked = False
        request: Request | None = None
        body = bytearray()
        while True:
            if not checked and inspect_head(pending) is not None:
                checked = True
            while checked:
                try:
                    event = conn.next_event()
                except h11.RemoteProtocolError as exc:
                    status = exc.error_status_hint if exc.error_status_hint == 501 else 400
                    raise Refusal(status, str(exc) or "malformed request") from None
                if event is h11.NEED_DATA:
                    break
                if isinstance(event, h11.Request):
                    request = Request(event)
                    early = self.app.before_body(request)
                    if early is not None:
                        return request, b"", early
                    if conn.they_are_waiting_for_100_continue:  # curl, for a body over 1 KiB
                        writer.write(conn.send(h11.InformationalResponse(
                            status_code=100, headers=[], reason=b"Continue")) or b"")
                elif isinstance(event, h11.Data):
                    body += event.data
                    if len(body) > self.app.max_body and request is not None:  # chunked
                        return request, b"", (413, too_large(len(body), self.app.max_body))
                elif isinstance(event, h11.EndOfMessage):
                    assert request is not None
                    return request, bytes(body), None
                elif isinstance(event, h11.ConnectionClosed):
                    if request is None:
                        return None
                    raise Refusal(400, "the request ended early")
                else:  # h11.PAUSED cannot come before our answer
                    break
            data = await reader.read(65536)
            if not data:
                if not progress.received:
                    return None  # closed between requests
                conn.receive_data(b"")
                if not checked:
                    raise Refusal(400, "the request ended early")
                continue
            progress.received += len(data)
            conn.receive_data(data)
            if not checked:
                pending += data

    # -- replies ----------------------------------------------------------------------------
    def _write_now(self, writer: asyncio.StreamWriter, conn: h11.Connection, status: int,
                   body: Any) -> None:
        try:
            writer.write(response_bytes(conn, status, body, True))
        except (OSError, RuntimeError):
            pass

    async def _write(self, writer: asyncio.StreamWriter, conn: h11.Connection, status: int,
                     body: Any, close: bool = False) -> None:
        close = close or conn.their_state is not h11.DONE
        writer.write(response_bytes(conn, status, body, close))
        try:
            async with asyncio.timeout(self.read_timeout):  # a client that never reads
                await writer.drain()
        except TimeoutError:
            writer.transport.abort()


def too_large(size: int, limit: int) -> dict[str, str]:
    """The 413 body: a declared length, or a chunked body that grew past the limit."""
    return {"error": "UsageError", "message": f"the body is {size:,} bytes, over the "
            f"{limit:,}-byte limit", "fix": "send a shorter query"}
