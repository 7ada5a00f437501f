"""What alaya's HTTP servers refuse before they answer, and what a slow client may hold.

Both `alaya serve` (compilers/serve_http.py) and `alaya mcp --http` (cli/mcp_http.py, under
uvicorn) parse HTTP/1.1 with h11, which frames messages as RFC 9112 says: a bad request line
or header line, conflicting or malformed `Content-Length`, bad chunk framing, a missing `Host`
are its errors. `inspect_head` adds what h11 accepts but RFC 9112 lets a server refuse, and
refuses it with 400 (and a close) before anything else reads the request:

- a first line that is not `METHOD TARGET HTTP/1.x` — an HTTP/0.9 request (`GET /`) has no
  version, and h11 would wait for headers that never come; another version is 505;
- a head (request line and header fields) over `MAX_HEAD` bytes, however it arrives;
- a byte outside ASCII anywhere in the head (RFC 9110 §5.5 calls such bytes obs-text: opaque,
  never meaningful to alaya; a non-ASCII `Authorization` cannot be compared as a token);
- obs-fold — a header line continued on the next (RFC 9112 §5.2: reject or replace; h11
  replaces);
- `Transfer-Encoding` together with `Content-Length` (RFC 9112 §6.1: the smuggling case),
  and more than one `Host` (§3.2).

`Slots` is the cap on open connections: when a new one would pass it, the slowest
connection still sending its request — the fewest bytes a second since that request began,
among those older than `GRACE_S` — is dropped first. A read deadline per request (request
line, headers and body together) is each server's own (`READ_TIMEOUT_S`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # h11 is imported where a response is made: the CLI reads the constants
    import h11

MAX_HEAD = 16 * 1024  # request line + header fields: a recall request's are ~200 bytes
MAX_HEADER_LINES = 100
READ_TIMEOUT_S = 10.0  # for one whole request: its line, headers and body
MAX_CONNECTIONS = 256  # open at once; RLIMIT_NOFILE is 1024 by default
GRACE_S = 1.0  # a connection this young is never "the slowest": it has had no time to send
LINGER_S = 2.0  # after a reply that ends a connection, what the client still sends is read

_TOKEN = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_REQUEST_LINE = re.compile(rb"(" + _TOKEN + rb") [\x21-\x7e]+ HTTP/([0-9])\.([0-9])\r?\n")
_HEAD_END = re.compile(rb"\r?\n\r?\n")


class Refusal(Exception):
    """A request answered with `status` and closed, never read further."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def inspect_head(buf: bytes | bytearray) -> int | None:
    """The length of the request head at the start of `buf` once it is complete and
    acceptable; None while it is incomplete and acceptable so far. Raises Refusal."""
    eol = buf.find(b"\n")
    if eol == -1:
        if len(buf) > MAX_HEAD:
            raise Refusal(400, f"the request line is longer than {MAX_HEAD:,} bytes")
        return None
    line = _REQUEST_LINE.fullmatch(buf, 0, eol + 1)
    if line is None:
        shown = bytes(buf[:min(eol, 60)]).decode("ascii", "replace").rstrip("\r")
        raise Refusal(400, f"not an HTTP/1.x request line: {shown!r} (HTTP/0.9 and other "
                           "forms are refused)")
    if line.group(2, 3) != (b"1", b"1") and line.group(2, 3) != (b"1", b"0"):
        raise Refusal(505, "only HTTP/1.0 and HTTP/1.1 are spoken here")
    found = _HEAD_END.search(buf, eol)  # from the request line's own line feed
    if found is None:
        if len(buf) > MAX_HEAD:
            raise Refusal(400, f"the request head is larger than {MAX_HEAD:,} bytes")
        return None
    size = found.end()
    if size > MAX_HEAD:
        raise Refusal(400, f"the request head is larger than {MAX_HEAD:,} bytes")
    head = bytes(buf[:size])
    if not head.isascii():
        raise Refusal(400, "a header holds a byte outside ASCII")
    lines = head[eol + 1:found.start()].split(b"\n") if found.start() > eol else []
    if len(lines) > MAX_HEADER_LINES:
        raise Refusal(400, f"more than {MAX_HEADER_LINES} header fields")
    names: list[bytes] = []
    for raw in lines:
        if raw[:1] in (b" ", b"\t"):
            raise Refusal(400, "a header line is folded onto the next (obs-fold)")
        names.append(raw.split(b":", 1)[0].lower())
    if b"transfer-encoding" in names and b"content-length" in names:
        raise Refusal(400, "Transfer-Encoding and Content-Length together")
    if names.count(b"host") > 1:
        raise Refusal(400, "more than one Host header")
    return size


class Progress:
    """How far one connection is with the request it is sending (for `Slots`)."""

    __slots__ = ("since", "received", "reading", "drop")

    def __init__(self, now: float, drop: Callable[[], None]) -> None:
        self.since = now
        self.received = 0
        self.reading = True  # sending a request (not waiting for its answer)
        self.drop = drop

    def begin(self, now: float, received: int = 0) -> None:
        self.since, self.received, self.reading = now, received, True


class Slots:
    """The open connections of one server, at most `cap` of them."""

    def __init__(self, cap: int = MAX_CONNECTIONS) -> None:
        self.cap = cap
        self.open: set[Progress] = set()

    def slowest(self, now: float) -> Progress | None:
        """The connection to drop for a new one: of those still sending a request and older
        than GRACE_S, the one with the fewest bytes a second since its request began."""
        candidates = [p for p in self.open if p.reading and now - p.since >= GRACE_S]
        if not candidates:
            return None
        return min(candidates, key=lambda p: (p.received / (now - p.since), p.since))

    def make_room(self, now: float) -> bool:
        """Drop the slowest connections while more than `cap` are open; False when none may
        be dropped (all are being answered, or are too young)."""
        while len(self.open) > self.cap:
            victim = self.slowest(now)
            if victim is None:
                return False
            self.open.discard(victim)
            victim.drop()
        return True


def error_body(status: int, message: str) -> dict[str, str]:
    """The JSON of a refusal: {"error": "BadRequest" (400) or "HTTP <status>", "message"}."""
    return {"error": "BadRequest" if status == 400 else f"HTTP {status}", "message": message}


def response_bytes(conn: h11.Connection, status: int, body: Any, close: bool) -> bytes:
    """A JSON response through `conn` (h11 keeps the connection's state); through a fresh
    state machine when `conn` can no longer answer (it already has, or the client broke it)."""
    from http import HTTPStatus

    import h11

    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
    if close:
        headers.append(("Connection", "close"))
    try:
        reason = HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        reason = b""
    response = h11.Response(status_code=status, headers=headers, reason=reason)
    try:
        head = conn.send(response) or b""
    except h11.LocalProtocolError:
        conn = h11.Connection(h11.SERVER)
        head = conn.send(response) or b""
    return head + (conn.send(h11.Data(data=data)) or b"") + (conn.send(h11.EndOfMessage()) or b"")
