"""`alaya serve`: recall from a resident process, with the watcher inside.

The compiled artifacts stay open (FAISS HOT index in RAM, the rest memory-mapped), the embedder
stays loaded, and `open_index` picks up a new build as soon as `current.json` changes — which
the watcher thread makes happen on every save. Clients (`alaya recall`, curl, an agent) POST
the recall JSON to `/recall`.

Security: binds 127.0.0.1 by default; any other address is refused unless `allow_remote` is
set, and then a token is required. With a token every request must carry
`Authorization: Bearer <token>`. `.alaya/serve.json` (mode 0600) tells local clients where the
server is; it is removed when the server stops.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from vault_engine.errors import AlayaError, UsageError
from vault_engine.providers.embedding import get_embedder
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery, RecallSettings
from vault_engine.store.vault import Vault, atomic_write

SERVE_FILE = "serve.json"


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
                 watch: bool = True) -> None:
        if not is_loopback(host) and not allow_remote:
            raise UsageError(f"refusing to listen on {host}: only loopback by default",
                             fix="use 127.0.0.1, or pass --allow-remote with --token")
        if not is_loopback(host) and not token:
            raise UsageError("a non-loopback address needs a token",
                             fix="pass --token (or set ALAYA_SERVE_TOKEN)")
        self.vault = vault
        self.token = token
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
            def log_message(self, *args: Any) -> None:
                pass

            def _authorised(self) -> bool:
                if not server.token:
                    return True
                given = self.headers.get("Authorization", "")
                return hmac.compare_digest(given, f"Bearer {server.token}")

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if not self._authorised():
                    return self._send(401, {"error": "unauthorised"})
                if self.path == "/health":
                    return self._send(200, {"ok": True, "vault": str(server.vault.root)})
                self._send(404, {"error": "not found"})

            def do_POST(self) -> None:  # noqa: N802
                if not self._authorised():
                    return self._send(401, {"error": "unauthorised"})
                if self.path != "/recall":
                    return self._send(404, {"error": "not found"})
                try:
                    length = int(self.headers.get("Content-Length", 0))
                    obj = json.loads(self.rfile.read(length) or b"{}")
                    query = RecallQuery.from_json(obj)
                    result = recall(server.vault.state_dir, query, embedder=server.embedder,
                                    settings=server.settings, resident=True,
                                    reranker=server.reranker)
                except json.JSONDecodeError as exc:
                    return self._send(400, {"error": "UsageError",
                                            "message": f"invalid JSON: {exc.msg}"})
                except AlayaError as exc:
                    return self._send(400 if exc.exit_code == 2 else 422, exc.to_dict())
                self._send(200, result)

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.host, self.port = host, int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _announce(self) -> None:
        info = {"url": self.url, "pid": os.getpid(), "token": self.token}
        path = self.vault.state_dir / SERVE_FILE
        atomic_write(path, json.dumps(info).encode("utf-8"))
        os.chmod(path, 0o600)

    def serve_forever(self, on_compile: Any = None, on_error: Any = None) -> None:
        self._announce()
        watcher = None
        if self.watch:
            from .watch import watch as watch_loop

            watcher = threading.Thread(
                target=watch_loop, args=(self.vault, self.stop),
                kwargs={"on_compile": on_compile or (lambda c, s: None),
                        "on_error": on_error or (lambda c, e: None)}, daemon=True)
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
