"""The slow-client and malformed-request guards of `alaya serve`, under `alaya mcp --http`.

The MCP SDK hands over a Starlette (ASGI) app, and uvicorn serves it. uvicorn parses HTTP/1.1
with h11, but on its own it sets no deadline for reading a request's head or body (only an
idle keep-alive timeout after a response), its `limit_concurrency` answers 503 to every new
client once slow ones fill it, and through h11 it unfolds obs-fold and accepts
Transfer-Encoding with Content-Length, non-ASCII header bytes and an HTTP/0.9 line (on which it
waits for headers forever). uvicorn takes the HTTP protocol class as configuration
(`uvicorn.Config(http=...)`); `guarded_h11` returns its h11 protocol with, per connection:

- compilers/http_guard.inspect_head over every request's head before h11 reads it: 400 (or
  505) and a close, as `alaya serve` answers;
- a read deadline for each request (its line, headers and body), from the connection or the
  end of the previous response: 408 and a close (nothing at all to a connection that never
  began a request);
- the cap on open connections of http_guard.Slots: past it, the slowest connection still
  sending its request is dropped (503) for the new one. When none may be dropped (every one
  is being answered, or is too young), the new connection is kept: uvicorn accepts every
  connection, so the cap is soft there.

What holds only for `alaya serve`: uvicorn's own refusals (a bad chunk, conflicting lengths)
are its plain-text 400, not JSON; and it closes at once where `serve` lingers.
It relies on uvicorn's H11Protocol keeping `conn` (its h11.Connection), `transport`, `loop`
and calling `on_response_complete` — tests/test_mcp_guard.py runs it against the installed
uvicorn.
"""

from __future__ import annotations

from typing import Any

import h11

from compilers.http_guard import (
    LINGER_S,
    MAX_CONNECTIONS,
    READ_TIMEOUT_S,
    Progress,
    Refusal,
    Slots,
    error_body,
    inspect_head,
    response_bytes,
)


def guarded_h11(read_timeout: float = READ_TIMEOUT_S,
                max_connections: int = MAX_CONNECTIONS) -> type:
    """uvicorn's h11 protocol class with the guards; one connection table per server."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    slots = Slots(max_connections)

    class GuardedH11(H11Protocol):
        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            now = self.loop.time()
            self._head = bytearray()
            self._checked = False
            self._deadline: Any = None
            self._lingering = False
            self._progress = Progress(now, self._drop)
            self._arm()
            slots.open.add(self._progress)
            slots.make_room(now)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            slots.open.discard(self._progress)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._lingering or self.transport.is_closing():
                return  # refused: what still comes is read and dropped (a lingering close)
            if self._progress.reading:
                self._progress.received += len(data)
            if not self._checked:
                self._head += data
                try:
                    checked = inspect_head(self._head)
                except Refusal as refusal:
                    return self._refuse(refusal.status, refusal.message)
                if checked is not None:
                    self._checked, self._head = True, bytearray()
            super().data_received(data)
            if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
                self._progress.reading = False  # the whole request is in
                self._disarm()

        def on_response_complete(self) -> None:
            # the next request begins; what h11 already holds of it (pipelined) is checked
            # before uvicorn reads it
            held = bytes(self.conn.trailing_data[0])
            self._checked, self._head = False, bytearray()
            self._progress.begin(self.loop.time(), len(held))
            if held:
                try:
                    self._checked = inspect_head(held) is not None
                except Refusal as refusal:
                    return self._refuse(refusal.status, refusal.message)
                if not self._checked:
                    self._head = bytearray(held)
            if not self.transport.is_closing():
                self._arm()
            super().on_response_complete()

        # -- the guards ---------------------------------------------------------------------
        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(read_timeout, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if self._lingering or self.transport.is_closing() or not self._progress.reading:
                return
            if self._progress.received:
                self._refuse(408, f"the request was not received within {read_timeout:g} s")
            else:
                self.transport.close()  # it never asked anything

        def _refuse(self, status: int, message: str, linger: bool = True) -> None:
            self._disarm()
            self._progress.reading = False
            if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                self.transport.write(response_bytes(self.conn, status,
                                                    error_body(status, message), True))
            if linger and self.transport.can_write_eof():
                self._lingering = True
                self.transport.write_eof()  # the client may read why before the close
                self.loop.call_later(LINGER_S, self.transport.close)
            else:
                self.transport.close()

        def _drop(self) -> None:
            self._refuse(503, "too many open connections: the slowest one was dropped",
                         linger=False)

    return GuardedH11
