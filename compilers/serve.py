"""`alaya serve`: recall from a resident process, with the watcher inside.

The compiled artifacts stay open (FAISS HOT index in RAM, the rest memory-mapped), the embedder
stays loaded, and `open_index` picks up a new build as soon as `current.json` changes — which
the watcher thread makes happen on every save. Clients (`alaya recall`, curl, an agent) POST
the recall JSON to `/recall`.

Under load and against slow or malformed clients: compilers/serve_http.py — h11 on an event
loop that holds every connection, a read deadline per request, a cap on open connections that
drops the slowest first, 400 and a close for what RFC 9112 lets a server refuse, a listen
backlog of 1024, and recalls in a bounded pool of worker threads (`workers`).

Security (docs/security.md):
- binds 127.0.0.1 by default; any other address is refused unless `allow_remote` is set, and
  then a token is required. With a token every request must carry
  `Authorization: Bearer <token>`;
- a `Host` and `Origin` allow-list — loopback names on this port only, unless `allow_remote`
  — so a web page cannot reach the server through DNS rebinding (403);
- a request body limit (`max_body`, 413), and a JSON error for every malformed request (400:
  a bad request line or header, a bad Content-Length, invalid JSON or UTF-8, a query of the
  wrong shape) — never a dropped connection;
- the caller: the agent the server was started for (`--agent`), else the one a request names
  in `X-Alaya-Agent`, else the owner; recall answers only from what that caller may read
  (store/namespaces.py). A request naming another agent than the one the server is for: 403.

`.alaya/serve.json` (mode 0600 from its first byte) tells local clients where the server is,
its token and a secret made at start; `GET /challenge?nonce=HEX` answers the proof of that
secret a client checks before it sends a query (compilers/discovery.py). The file is removed
when the server stops.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vault_engine.errors import AlayaError, NamespaceError, UsageError
from vault_engine.providers.embedding import get_embedder
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery, RecallSettings
from vault_engine.store.namespaces import Caller
from vault_engine.store.vault import Vault
from vault_engine.text import mend

from . import discovery
from .http_guard import MAX_CONNECTIONS, READ_TIMEOUT_S
from .serve_http import HttpServer, Reply, Request, too_large

SERVE_FILE = discovery.SERVE_FILE
BACKLOG = 1024
MAX_BODY = 64 * 1024  # a recall query is a few hundred bytes; 64 KiB is generous
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
_NONCE = re.compile(r"nonce=([0-9a-f]{32,128})")


def default_workers() -> int:
    """One recall thread a core. The threads only compute and write their reply (the event
    loop does the reading), so more of them than cores buy little under the GIL and take it
    from the loop more often (one run at 200 clients on 2 cores: p50 704 ms with 2 threads,
    852 ms with 4; runs on that shared machine vary by ±10 %)."""
    return max(2, min(32, os.cpu_count() or 2))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=BACKLOG)


def _client_url(host: str, port: int) -> str:
    """The URL a local client reaches the server at: a wildcard address is reached on
    loopback (the discovery file names only loopback URLs a client will believe)."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class RecallServer:
    def __init__(self, vault: Vault, *, host: str = "127.0.0.1", port: int = 0,
                 token: str | None = None, allow_remote: bool = False,
                 watch: bool = True, agent: str | None = None, max_body: int = MAX_BODY,
                 workers: int | None = None, read_timeout: float = READ_TIMEOUT_S,
                 max_connections: int = MAX_CONNECTIONS) -> None:
        if not is_loopback(host) and not allow_remote:
            raise UsageError(f"refusing to listen on {host}: only loopback by default",
                             fix="use 127.0.0.1, or pass --allow-remote with --token")
        if not is_loopback(host) and not token:
            raise UsageError("a non-loopback address needs a token",
                             fix="pass --token (or set ALAYA_SERVE_TOKEN)")
        self.vault = vault
        self.token = token
        self.secret = secrets.token_hex(32)  # in serve.json and here only: the challenge's key
        self.allow_remote = allow_remote
        self.max_body = max_body
        self.pinned = Caller.of_agent(agent) if agent else None  # a server for one agent
        self.settings = RecallSettings.from_config(vault.config)
        try:
            self.embedder: Any = get_embedder(vault.config)
            self.embedder.embed_query("warm up")  # load the model now, not on the first query
        except AlayaError:
            self.embedder = None
        self.reranker: Any = None
        if vault.config.get("rerank", "provider") != "none":  # optional, off by default
            from vault_engine.providers.rerank import get_reranker

            self.reranker = get_reranker(vault.config)
        self.stop = threading.Event()
        self.watch = watch
        sock = _listen(host, port)
        self.host, self.port = host, int(sock.getsockname()[1])
        self.client_url = _client_url(host, self.port)
        self.http = HttpServer(sock, self, workers=workers or default_workers(),
                               read_timeout=read_timeout, max_connections=max_connections)

    @property
    def url(self) -> str:
        return f"http://[{self.host}]:{self.port}" if ":" in self.host else \
            f"http://{self.host}:{self.port}"

    # -- the application (compilers/serve_http.App) -----------------------------------------
    def _allowed_origin(self, request: Request) -> str | None:
        """Why the Host or Origin is refused (DNS rebinding), or None."""
        if self.allow_remote:
            return None
        names = {f"{n}:{self.port}" for n in LOOPBACK_NAMES} | set(LOOPBACK_NAMES)
        host = request.authority.strip().lower()
        if host and host not in names:
            return f"Host {host!r} is not this server (loopback names only)"
        origin = request.headers.get("origin", "").strip().lower()
        if origin and origin != "null" and origin.split("://", 1)[-1] not in names:
            return f"Origin {origin!r} may not call this server"
        if origin == "null":
            return "a page without an origin may not call this server"
        return None

    def _authorised(self, request: Request) -> bool:
        if not self.token:
            return True
        given = request.headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode())

    def before_body(self, request: Request) -> Reply | None:
        why = self._allowed_origin(request)
        if why:
            return 403, {"error": "Forbidden", "message": why,
                         "fix": "call it as http://127.0.0.1:PORT, or start it with "
                                "--allow-remote --token"}
        if request.method == "GET" and request.path == discovery.PROOF_PATH:
            return None  # the proof needs no token: the client sends it only once proven
        if not self._authorised(request):
            return 401, {"error": "unauthorised"}
        if request.method == "GET":
            return None if request.target == "/health" else (404, {"error": "not found"})
        if request.method != "POST":
            return 501, {"error": "HTTP 501",
                         "message": f"{request.method} is not supported (GET or POST)"}
        if request.target != "/recall":
            return 404, {"error": "not found"}
        raw = request.headers.get("content-length")
        if raw is None:
            if "transfer-encoding" in request.headers:
                return None  # chunked: read up to max_body, then 413
            return 411, {"error": "UsageError", "message": "a POST needs a Content-Length",
                         "fix": "send the JSON body with its length"}
        if int(raw) > self.max_body:  # h11 has checked it is a length
            return 413, too_large(int(raw), self.max_body)
        return None

    def answer(self, request: Request, body: bytes) -> Reply | Callable[[], Reply]:
        if request.method == "GET" and request.path == discovery.PROOF_PATH:
            nonce = _NONCE.fullmatch(request.query)
            if nonce is None:
                return 400, {"error": "UsageError",
                             "message": "GET /challenge?nonce=HEX (32 to 128 hex digits)"}
            return 200, {"proof": discovery.proof(self.secret, nonce.group(1), self.client_url,
                                                  os.path.realpath(self.vault.root))}
        if request.method == "GET":
            return 200, {"ok": True, "vault": str(self.vault.root)}
        agent = request.headers.get("x-alaya-agent")
        return lambda: self._recall(body, agent)

    def _caller(self, named: str | None) -> Caller:
        """The request's caller. A header that names nobody (blank) is a UsageError, never the
        owner, as `--agent ""` is on the command line (Caller.of_agent refuses it)."""
        asked = Caller.of_agent(named.strip()) if named is not None else None
        if self.pinned is not None:
            if asked is not None and asked != self.pinned:
                raise NamespaceError(f"this server answers for agent {self.pinned.agent}, "
                                     f"not {asked.agent}", fix="call the server started for "
                                                               "your agent")
            return self.pinned
        return asked if asked is not None else Caller.owner()

    def _recall(self, data: bytes, agent: str | None) -> Reply:
        """One recall, in a worker thread."""
        try:
            obj = mend.loads(data.decode("utf-8") or "{}")
            query = RecallQuery.from_json(obj)
            return 200, recall(self.vault.state_dir, query, embedder=self.embedder,
                               settings=self.settings, resident=True,
                               reranker=self.reranker, caller=self._caller(agent))
        except UnicodeDecodeError as exc:
            return 400, {"error": "UsageError",
                         "message": f"the body is not UTF-8 ({exc.reason})"}
        except json.JSONDecodeError as exc:
            return 400, {"error": "UsageError", "message": f"invalid JSON: {exc.msg}"}
        except AlayaError as exc:
            status = 400 if exc.exit_code == 2 else 507 if exc.exit_code == 3 else (
                403 if isinstance(exc, NamespaceError) else 422)
            return status, exc.to_dict()
        except Exception as exc:  # noqa: BLE001 - answered, never a dropped connection
            return 500, {"error": type(exc).__name__, "message": str(exc)}

    # -- life cycle -------------------------------------------------------------------------
    def _announce(self) -> None:
        info = {"url": self.client_url, "pid": os.getpid(), "token": self.token,
                "secret": self.secret}
        self.vault.state_dir.mkdir(parents=True, exist_ok=True)
        discovery.write_private(self.vault.state_dir / SERVE_FILE, json.dumps(info).encode())

    def serve_forever(self, on_compile: Any = None, on_error: Any = None,
                      tick: Any = None) -> None:
        """Serve until `stop` is set; the watcher (if on) compiles every change and calls
        `tick` between batches (the introspection schedule)."""
        self._announce()
        watcher = None
        if self.watch:
            from .watch import watch as watch_loop

            watcher = threading.Thread(
                target=watch_loop, args=(self.vault, self.stop),
                kwargs={"on_compile": on_compile or (lambda c, s: None),
                        "on_error": on_error or (lambda c, e: None), "tick": tick},
                daemon=True)
            watcher.start()
        thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        thread.start()
        try:
            while not self.stop.is_set():
                time.sleep(0.1)
        finally:
            self.http.shutdown()
            thread.join(10)
            if watcher is not None:
                watcher.join(10)
            try:
                info = json.loads((self.vault.state_dir / SERVE_FILE).read_text())
                if info.get("pid") == os.getpid():
                    (self.vault.state_dir / SERVE_FILE).unlink()
            except (OSError, ValueError):
                pass


def read_serve_file(state_dir: Path) -> dict[str, Any] | None:
    """Where a running server is, if one is and its discovery file may be believed
    (compilers/discovery.py: a stale file of a dead process, or one alaya did not write here,
    is not)."""
    return discovery.trusted(state_dir)[0]
