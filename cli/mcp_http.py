"""`alaya mcp --http`: the same MCP server over streamable HTTP, on loopback only, every
request carrying `Authorization: Bearer <token>` (the SDK's bearer-token middleware).

The token comes from --token / ALAYA_MCP_TOKEN, or is made up at start and printed once;
`.alaya/mcp.json` (mode 0600, removed at exit) tells local clients the URL and the token,
as `.alaya/serve.json` does for `alaya serve` (nothing in alaya reads it; a client that does
should believe it only as compilers/discovery.py believes serve.json). The SDK also turns on
its DNS-rebinding protection for a loopback host (Host and Origin must be loopback). Slow and
malformed clients meet `alaya serve`'s guards, as far as uvicorn lets them (cli/mcp_guard.py).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import signal
import socket
from pathlib import Path
from typing import Any

from compilers.discovery import write_private
from compilers.http_guard import MAX_CONNECTIONS, READ_TIMEOUT_S
from vault_engine.errors import UsageError

MCP_FILE = "mcp.json"  # under .alaya/
PATH = "/mcp"


class StaticToken:
    """The SDK's TokenVerifier for one shared secret."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        if not hmac.compare_digest(token.encode(), self.token.encode()):
            return None
        return AccessToken(token=token, client_id="alaya-local", scopes=[])


def auth_for(token: str, host: str, port: int) -> dict[str, Any]:
    """The MCPServer keyword arguments that require the bearer token."""
    from mcp.server.auth.settings import AuthSettings
    from pydantic import AnyHttpUrl

    return {"token_verifier": StaticToken(token),
            "auth": AuthSettings(issuer_url=AnyHttpUrl(f"http://{_url_host(host)}:{port}"),
                                 resource_server_url=None)}


def choose_token(given: str | None) -> tuple[str, bool]:
    """(token, made up here)."""
    if given:
        if len(given) < 16:
            raise UsageError("the MCP token is too short to guard a memory",
                             fix="use at least 16 characters, or leave it out and one is made")
        return given, False
    return secrets.token_urlsafe(24), True


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on a loopback address (port 0: any free port)."""
    from compilers.serve import is_loopback

    if not is_loopback(host):
        raise UsageError(f"refusing to serve MCP on {host}: loopback only",
                         fix="use --host 127.0.0.1 (or ::1); reach it from elsewhere through "
                             "an SSH tunnel")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}",
                         fix="choose another --port (0 picks a free one)") from None
    sock.listen(128)
    return sock


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def run_http(server: Any, sock: socket.socket, host: str, token: str, state_dir: Path,
             on_ready: Any = None, agent: str | None = None,
             read_timeout: float = READ_TIMEOUT_S,
             max_connections: int = MAX_CONNECTIONS) -> None:
    """Serve until interrupted; `.alaya/mcp.json` exists while it does. One server answers
    as one caller: `agent` (the namespace policy's, store/namespaces.py), else the owner —
    whoever holds the token is that caller."""
    import anyio
    import uvicorn

    from .mcp_guard import guarded_h11

    port = int(sock.getsockname()[1])
    url = f"http://{_url_host(host)}:{port}{PATH}"
    app = server.streamable_http_app(streamable_http_path=PATH, host=host)
    # uvicorn's h11 protocol with serve's guards: a read deadline, a connection cap that
    # drops the slowest, RFC 9112 refusals (cli/mcp_guard.py)
    config = uvicorn.Config(app, log_level="warning", lifespan="on",
                            http=guarded_h11(read_timeout, max_connections))
    http = uvicorn.Server(config)
    info = state_dir / MCP_FILE
    state_dir.mkdir(parents=True, exist_ok=True)
    write_private(info, json.dumps({"url": url, "pid": os.getpid(), "token": token,
                                      "agent": agent}).encode())
    if on_ready:
        on_ready(url)

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # uvicorn stops gracefully, then re-raises the signal here

    signal.signal(signal.SIGTERM, stop)
    try:
        anyio.run(lambda: http.serve(sockets=[sock]))
    finally:
        try:
            if json.loads(info.read_text()).get("pid") == os.getpid():
                info.unlink()
        except (OSError, ValueError):
            pass
