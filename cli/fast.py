"""The `alaya` entry point. When `alaya serve` runs for the vault, `alaya recall … --json` is
answered by it without importing click, numpy or the engine (one HTTP request, stdlib only).
Without a server, a plain `alaya recall … --json` runs the engine's recall directly, still
without click. Everything else goes to the full CLI in `cli.main`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .locate import find_vault

_LIST = {"--rel": "relations", "--kind": "kind", "--type": "type", "--tag": "tag",
         "--namespace": "namespace"}
_VALUE = {"--top-k": "top_k", "--depth": "depth", "--as-of": "as_of", "--mode": "mode",
          "--concepts": "concepts", "--from-nodes": "from_nodes"}


def _query(args: list[str]) -> dict[str, object] | None:
    """The recall JSON for simple argument lists; None when the full CLI must parse them."""
    query: dict[str, object] = {}
    as_json = False
    text: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--json":
            as_json = True
        elif arg in _LIST and i + 1 < len(args):
            values = [v.strip() for v in args[i + 1].split(",") if v.strip()]
            query.setdefault(_LIST[arg], [])
            query[_LIST[arg]] += values  # type: ignore[operator]
            i += 1
        elif arg in _VALUE and i + 1 < len(args):
            value: object = args[i + 1]
            if arg in ("--top-k", "--depth"):
                if not args[i + 1].isdigit():
                    return None
                value = int(args[i + 1])
            elif arg in ("--concepts", "--from-nodes"):
                value = [v.strip() for v in args[i + 1].split(",") if v.strip()]
            query[_VALUE[arg]] = value
            i += 1
        elif arg.startswith("-"):
            return None  # --save, --format, --json-in, '-', --help …: the full CLI
        else:
            text.append(arg)
        i += 1
    if not as_json or len(text) > 1:
        return None
    if text:
        query["query"] = text[0]
    if "relations" in query:
        query["relations"] = [str(r).upper() for r in query["relations"]]  # type: ignore[attr-defined]
    return query


def _server(vault: Path) -> dict[str, str] | None:
    try:
        info = json.loads((vault / ".alaya" / "serve.json").read_text(encoding="utf-8"))
        os.kill(int(info["pid"]), 0)
        return info
    except (OSError, ValueError, KeyError, TypeError):
        return None


def exchange(hostport: str, request: bytes, timeout: float = 30.0) -> bytes:
    """Send `request` as it is to HOST:PORT and read the reply until the server closes."""
    import socket

    host, _, port = hostport.rpartition(":")
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def _post(url: str, body: bytes, token: str | None, timeout: float = 30.0,
          agent: str | None = None) -> tuple[int, bytes]:
    """POST to the local server over a plain socket: urllib and http.client cost 20–35 ms to
    import, more than the request itself. The server speaks HTTP/1.0-style (one request per
    connection), so the reply ends when the socket closes."""
    rest = url.split("://", 1)[-1]
    hostport = rest.split("/", 1)[0]
    head = (f"POST /recall HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n")
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    if agent:
        head += f"X-Alaya-Agent: {agent}\r\n"
    raw = exchange(hostport, head.encode("latin-1") + b"\r\n" + body, timeout)
    header, _, payload = raw.partition(b"\r\n\r\n")
    status = int(header.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in header.lower():
        raise ValueError("chunked replies are not expected from alaya serve")
    return status, payload


# stdin already read by `main` for a recall with no query, handed to the full CLI if it runs
PIPED: list[bytes] = []
STDIN_WAIT_S = 10.0  # a pipe that stays open and silent this long is not a query


def read_piped(stream: object = None) -> bytes | None:
    """What was piped to stdin (None on a terminal). Waits at most STDIN_WAIT_S for the first
    byte: an agent's exec tool may leave stdin an open pipe nobody writes to."""
    stream = stream if stream is not None else sys.stdin
    if stream is None or getattr(stream, "isatty", lambda: True)():
        return None
    raw = getattr(stream, "buffer", stream)
    try:
        fd = raw.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        fd = None  # an in-memory stream (tests): read it
    if fd is not None and os.name == "posix":
        import select

        ready, _, _ = select.select([fd], [], [], STDIN_WAIT_S)
        if not ready:
            return None
    data = raw.read()  # type: ignore[attr-defined]
    return data if isinstance(data, bytes) else str(data).encode("utf-8")


def asks_nothing(query: dict[str, object]) -> bool:
    """A recall with no text, concepts or nodes: its query comes from stdin."""
    return not (query.get("query") or query.get("concepts") or query.get("from_nodes"))


def merge_piped(query: dict[str, object], piped: bytes) -> dict[str, object] | None:
    """The JSON object piped to stdin with the command line's options on top; None when the
    input is not a JSON object (the full CLI reports it)."""
    try:
        obj = json.loads(piped)
    except ValueError:
        return None
    return {**obj, **query} if isinstance(obj, dict) else None


def agent_of(flag: str | None) -> str | None:
    """The agent this command runs as — `--agent`, else ALAYA_AGENT, else None (the owner) —
    or "" when the name given is blank (the full CLI then reports the usage error)."""
    name = flag if flag is not None else os.environ.get("ALAYA_AGENT")
    if name is not None and not name.strip():
        return ""
    return name


def simple_recall(argv: list[str], piped: bytes | None = None
                  ) -> tuple[Path, dict[str, object], str | None] | None:
    """(vault, recall JSON, agent) for `[--vault V] [--agent A] recall … --json` with simple
    options; None when the full CLI must handle the command (a blank agent name too: it
    reports the error). `piped`: stdin, the query when the command line gives none
    (`echo '{"concepts": […]}' | alaya recall --json`, seed 000 §4.4)."""
    vault = ""
    flag: str | None = None
    while argv and argv[0].split("=", 1)[0] in ("--vault", "--agent"):
        if "=" in argv[0]:
            name, value = argv[0].split("=", 1)
            argv = argv[1:]
        elif len(argv) > 1:
            name, value = argv[0], argv[1]
            argv = argv[2:]
        else:
            return None
        if name == "--vault":
            vault = value
        else:
            flag = value
    agent = agent_of(flag)
    if agent == "" or argv[:1] != ["recall"]:
        return None
    query = _query(argv[1:])
    if query is None:
        return None
    if piped is not None and asks_nothing(query):
        query = merge_piped(query, piped)  # type: ignore[assignment]
        if query is None:
            return None
    return Path(vault or find_vault()).expanduser(), query, agent


def try_server(argv: list[str], piped: bytes | None = None) -> tuple[int, str] | None:
    parsed = simple_recall(argv, piped)
    if parsed is None:
        return None
    root, query, agent = parsed
    info = _server(root)
    if info is None:
        return None
    try:
        status, payload = _post(info["url"], json.dumps(query).encode("utf-8"), info.get("token"),
                                agent=agent)
        body = json.loads(payload)
    except (OSError, ValueError, IndexError, KeyError):
        return None  # the server went away or answered oddly: answer in-process
    if status >= 300 and not isinstance(body, dict):
        return None
    code = 0 if status < 300 else 2 if status == 400 else 1
    return code, json.dumps(body, ensure_ascii=False, indent=2) + "\n"


def run_direct(argv: list[str], piped: bytes | None = None) -> tuple[int, str] | None:
    """`alaya recall … --json` without a server and without click: the engine's recall and
    nothing else (no CLI framework, no note parser). None hands over to the full CLI — for
    anything unusual (an error to report, a misconfigured embedder) it has the proper output."""
    parsed = simple_recall(argv, piped)
    if parsed is None:
        return None
    root, query, agent = parsed
    if not (root / "alaya.toml").is_file():
        return None
    # numpy's BLAS (OpenBLAS) starts a thread per core when numpy is imported — before the
    # embedder bounds OpenMP — and its threads spin after each call. A recall's products are
    # tiny (30 × 384 for MMR); on a busy machine that pool cost a one-shot recall ~50 ms of
    # CPU and wall time. One BLAS thread, unless the environment says otherwise.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from vault_engine.errors import AlayaError
    from vault_engine.recall.pipeline import recall_in_vault
    from vault_engine.store.namespaces import Caller

    try:
        result = recall_in_vault(root, query, caller=Caller.of_agent(agent))
    except AlayaError:
        return None
    return 0, json.dumps(result, ensure_ascii=False, indent=2) + "\n"


def _piped_for(argv: list[str]) -> bytes | None:
    """stdin, read here only for a simple recall that names no query."""
    parsed = simple_recall(argv)
    if parsed is None or not asks_nothing(parsed[1]):
        return None
    return read_piped()


def exit_now(code: int) -> None:
    """Exit once the answer is out, without tearing the interpreter down. All a fast path
    writes is its answer (flushed here) and one telemetry line (one os.write, already
    done); what teardown would add is freeing numpy's, faiss's and the model's modules and
    memory one object at a time — 15–30 ms of a one-shot recall — which the OS does at once."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)  # a closed pipe: the interpreter reports it as it always has
    os._exit(code)


def main() -> None:
    argv = sys.argv[1:]
    piped = _piped_for(argv)
    served = try_server(argv, piped) or run_direct(argv, piped)
    if served is not None:
        code, text = served
        sys.stdout.write(text)
        exit_now(code)
    if piped is not None:
        PIPED.append(piped)
    from .main import main as full_main

    full_main()
