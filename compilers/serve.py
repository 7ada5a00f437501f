"""`alaya serve`: recall from a resident process, with the watcher inside.

The compiled artifacts stay open (FAISS HOT index in RAM, the rest memory-mapped), the embedder
stays loaded, and `open_index` picks up a new build as soon as `current.json` changes — which
the watcher thread makes happen on every save. Clients (`alaya recall`, curl, an agent) POST
the recall JSON to `/recall`.

Under load (the standard library, configured): a listen backlog of 1024, a bounded pool of
worker threads (`workers`) that queues connections instead of spawning a thread each, and a
socket timeout per connection so a client that stops sending frees its worker.

Security (docs/security.md):
- binds 127.0.0.1 by default; any other address is refused unless `allow_remote` is set, and
  then a token is required. With a token every request must carry
  `Authorization: Bearer <token>`;
- a `Host` and `Origin` allow-list — loopback names on this port only, unless `allow_remote`
  — so a web page cannot reach the server through DNS rebinding (403);
- a request body limit (`max_body`, 413), and a JSON error for every malformed request (400:
  a bad Content-Length, invalid JSON or UTF-8, a query of the wrong shape) — never a dropped
  connection;
- the caller: the agent the server was started for (`--agent`), else the one a request names
  in `X-Alaya-Agent`, else the owner; recall answers only from what that caller may read
  (store/namespaces.py). A request naming another agent than the one the server is for: 403.

`.alaya/serve.json` (mode 0600) tells local clients where the server is; it is removed when
the server stops.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

from vault_engine.errors import AlayaError, UsageError
from vault_engine.providers.embedding import get_embedder
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery, RecallSettings
from vault_engine.store.namespaces import Caller
from vault_engine.store.vault import Vault, atomic_write

SERVE_FILE = "serve.json"
BACKLOG = 1024
MAX_BODY = 64 * 1024  # a recall query is a few hundred bytes; 64 KiB is generous
REQUEST_TIMEOUT_S = 10.0
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")


class PooledHTTPServer(HTTPServer):
    """HTTPServer whose connections are handled by a fixed pool of threads (ThreadingMixIn
    starts one thread per connection, without limit) behind a deep listen backlog."""

    request_queue_size = BACKLOG
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any, workers: int) -> None:
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="alaya-serve")
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.pool.submit(self._work, request, client_address)

    def _work(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 - one broken connection never stops the server
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the handler already answered what it could; stderr stays quiet

    def server_close(self) -> None:
        super().server_close()
        self.pool.shutdown(wait=False, cancel_futures=True)


def default_workers() -> int:
    return max(4, min(32, 2 * (os.cpu_count() or 2)))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class RecallServer:
    def __init__(self, vault: Vault, *, host: str = "127.0.0.1", port: int = 0,
                 token: str | None = None, allow_remote: bool = False,
                 watch: bool = True, agent: str | None = None, max_body: int = MAX_BODY,
                 workers: int | None = None) -> None:
        if not is_loopback(host) and not allow_remote:
            raise UsageError(f"refusing to listen on {host}: only loopback by default",
                             fix="use 127.0.0.1, or pass --allow-remote with --token")
        if not is_loopback(host) and not token:
            raise UsageError("a non-loopback address needs a token",
                             fix="pass --token (or set ALAYA_SERVE_TOKEN)")
        self.vault = vault
        self.token = token
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
        server = self

        class Handler(BaseHTTPRequestHandler):
            timeout = REQUEST_TIMEOUT_S  # a client that stops sending frees its worker

            def log_message(self, *args: Any) -> None:
                pass

            def send_error(self, code: int, message: str | None = None,
                           explain: str | None = None) -> None:
                # the stdlib's own refusals (a bad request line, a header too long) as JSON,
                # with a status line even for what parsed as an HTTP/0.9 request
                self.close_connection = True
                if getattr(self, "request_version", "") in ("HTTP/0.9", ""):
                    self.request_version = "HTTP/1.0"
                self._send(code, {"error": "BadRequest" if code == 400 else f"HTTP {code}",
                                  "message": message or explain or ""})

            def _authorised(self) -> bool:
                if not server.token:
                    return True
                given = self.headers.get("Authorization", "")
                return hmac.compare_digest(given, f"Bearer {server.token}")

            def _allowed_origin(self) -> str | None:
                """Why the Host or Origin is refused (DNS rebinding), or None."""
                if server.allow_remote:
                    return None
                names = {f"{n}:{server.port}" for n in LOOPBACK_NAMES} | set(LOOPBACK_NAMES)
                host = (self.headers.get("Host") or "").strip().lower()
                if host and host not in names:
                    return f"Host {host!r} is not this server (loopback names only)"
                origin = (self.headers.get("Origin") or "").strip().lower()
                if origin and origin != "null" and origin.split("://", 1)[-1] not in names:
                    return f"Origin {origin!r} may not call this server"
                if origin == "null":
                    return "a page without an origin may not call this server"
                return None

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body, ensure_ascii=False).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client went away

            def _gate(self) -> bool:
                why = self._allowed_origin()
                if why:
                    self._send(403, {"error": "Forbidden", "message": why,
                                     "fix": "call it as http://127.0.0.1:PORT, or start it "
                                            "with --allow-remote --token"})
                    return False
                if not self._authorised():
                    self._send(401, {"error": "unauthorised"})
                    return False
                return True

            def do_GET(self) -> None:  # noqa: N802
                if not self._gate():
                    return
                if self.path == "/health":
                    return self._send(200, {"ok": True, "vault": str(server.vault.root)})
                self._send(404, {"error": "not found"})

            def _caller(self) -> Caller:
                named = (self.headers.get("X-Alaya-Agent") or "").strip()
                if server.pinned is not None:
                    if named and named != server.pinned.agent:
                        from vault_engine.errors import NamespaceError

                        raise NamespaceError(f"this server answers for agent "
                                             f"{server.pinned.agent}, not {named}",
                                             fix="call the server started for your agent")
                    return server.pinned
                return Caller.of_agent(named) if named else Caller.owner()

            def _body(self) -> bytes | None:
                raw = self.headers.get("Content-Length")
                if raw is None:
                    self._send(411, {"error": "UsageError", "message": "a POST needs a "
                                     "Content-Length", "fix": "send the JSON body with its "
                                     "length"})
                    return None
                try:
                    length = int(raw)
                    if length < 0:
                        raise ValueError
                except ValueError:
                    self._send(400, {"error": "UsageError",
                                     "message": f"Content-Length {raw!r} is not a length"})
                    return None
                if length > server.max_body:
                    self.close_connection = True
                    self._send(413, {"error": "UsageError", "message":
                                     f"the body is {length:,} bytes, over the "
                                     f"{server.max_body:,}-byte limit",
                                     "fix": "send a shorter query"})
                    return None
                data = self.rfile.read(length)
                if len(data) < length:
                    self._send(400, {"error": "UsageError", "message": "the body ended early"})
                    return None
                return data

            def do_POST(self) -> None:  # noqa: N802
                if not self._gate():
                    return
                if self.path != "/recall":
                    return self._send(404, {"error": "not found"})
                data = self._body()
                if data is None:
                    return
                try:
                    obj = json.loads(data.decode("utf-8") or "{}")
                    query = RecallQuery.from_json(obj)
                    result = recall(server.vault.state_dir, query, embedder=server.embedder,
                                    settings=server.settings, resident=True,
                                    reranker=server.reranker,
                                    caller=self._caller())
                except UnicodeDecodeError as exc:
                    return self._send(400, {"error": "UsageError",
                                            "message": f"the body is not UTF-8 ({exc.reason})"})
                except json.JSONDecodeError as exc:
                    return self._send(400, {"error": "UsageError",
                                            "message": f"invalid JSON: {exc.msg}"})
                except AlayaError as exc:
                    status = 400 if exc.exit_code == 2 else 507 if exc.exit_code == 3 else (
                        403 if type(exc).__name__ == "NamespaceError" else 422)
                    return self._send(status, exc.to_dict())
                except Exception as exc:  # noqa: BLE001 - answered, never a dropped connection
                    return self._send(500, {"error": type(exc).__name__, "message": str(exc)})
                self._send(200, result)

        self.httpd = PooledHTTPServer((host, port), Handler, workers or default_workers())
        self.host, self.port = host, int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _announce(self) -> None:
        info = {"url": self.url, "pid": os.getpid(), "token": self.token}
        path = self.vault.state_dir / SERVE_FILE
        atomic_write(path, json.dumps(info).encode("utf-8"))
        os.chmod(path, 0o600)

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
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            while not self.stop.is_set():
                time.sleep(0.1)
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()
            if watcher is not None:
                watcher.join(10)
            try:
                info = json.loads((self.vault.state_dir / SERVE_FILE).read_text())
                if info.get("pid") == os.getpid():
                    (self.vault.state_dir / SERVE_FILE).unlink()
            except (OSError, ValueError):
                pass


def read_serve_file(state_dir: Path) -> dict[str, Any] | None:
    """Where a running server is, if one is (a stale file of a dead process is ignored)."""
    try:
        info = json.loads((state_dir / SERVE_FILE).read_text(encoding="utf-8"))
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info
