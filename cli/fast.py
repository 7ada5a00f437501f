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

TYPE_CHECKING = False  # not typing's: importing typing costs this path ~3 ms
if TYPE_CHECKING:
    import socket

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


class Unproven(Exception):
    """The server at a discovery file's URL did not prove it holds the file's secret."""


def _reply(sock: socket.socket, limit: int = 64 * 1024) -> tuple[int, bytes]:
    """One HTTP reply with a Content-Length (the challenge's), read no further than it."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(4096)
        if not chunk or len(buf) > limit:
            raise ValueError("no reply")
        buf += chunk
    header, _, rest = buf.partition(b"\r\n\r\n")
    lines = header.split(b"\r\n")
    length = -1
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            length = int(value)
    if not 0 <= length <= limit:
        raise ValueError("a reply without a usable length")
    while len(rest) < length:
        chunk = sock.recv(4096)
        if not chunk:
            raise ValueError("the reply ended early")
        rest += chunk
    return int(lines[0].split(b" ", 2)[1]), rest[:length]


def exchange(hostport: str, request: bytes, timeout: float = 30.0,
             secret: str | None = None, url: str = "", vault: str = "") -> bytes:
    """Send `request` as it is to HOST:PORT and read the reply until the server closes.
    With `secret` (a discovery file's), the server must first prove it holds it, on the same
    connection, for `vault` (its real path; compilers/discovery.py); otherwise Unproven, and
    `request` is never sent."""
    import socket

    host, _, port = hostport.rpartition(":")
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
        if secret is not None:
            from compilers.discovery import PROOF_PATH, proof

            nonce = os.urandom(16).hex()
            sock.settimeout(min(timeout, 10.0))  # the loop answers it at once, busy or not
            sock.sendall(f"GET {PROOF_PATH}?nonce={nonce} HTTP/1.1\r\nHost: {hostport}\r\n"
                         "\r\n".encode("latin-1"))
            try:
                status, payload = _reply(sock)
                given = json.loads(payload).get("proof") if status == 200 else None
            except (OSError, ValueError, IndexError, AttributeError):
                given = None
            if not isinstance(given, str) or given != proof(secret, nonce, url, vault):
                raise Unproven(url)
            sock.settimeout(timeout)
        sock.sendall(request)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def _post(url: str, body: bytes, token: str | None, timeout: float = 30.0,
          agent: str | None = None, secret: str | None = None,
          vault: str = "") -> tuple[int, bytes]:
    """POST to the local server over a plain socket: urllib and http.client cost 20–35 ms to
    import, more than the request itself. The request asks the server to close the connection
    after its reply, so the reply ends when the socket closes."""
    rest = url.split("://", 1)[-1]
    hostport = rest.split("/", 1)[0]
    head = (f"POST /recall HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n")
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    if agent:
        head += f"X-Alaya-Agent: {agent}\r\n"
    raw = exchange(hostport, head.encode("latin-1") + b"\r\n" + body, timeout, secret, url,
                   vault)
    header, _, payload = raw.partition(b"\r\n\r\n")
    status = int(header.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in header.lower():
        raise ValueError("chunked replies are not expected from alaya serve")
    return status, payload


def _say(why: str) -> None:
    """One line on stderr: why the resident server was not used."""
    try:
        sys.stderr.write(f"alaya: {why}; answering in-process\n")
    except (OSError, ValueError):
        pass


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
    if b"\\ud" in piped.lower():
        return None  # perhaps a lone surrogate: the full CLI mends it (vault_engine/text/mend)
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
    """The answer of the resident server named by `.alaya/serve.json`, when that file may be
    believed (compilers/discovery.py) and the server answers; None otherwise — having said
    why on stderr when there was a file."""
    parsed = simple_recall(argv, piped)
    if parsed is None:
        return None
    root, query, agent = parsed
    if not os.path.lexists(root / ".alaya" / "serve.json"):
        return None  # no server: the checks are not even imported
    from compilers.discovery import trusted

    info, why = trusted(root / ".alaya")
    if info is None:
        if why:
            _say(f".alaya/serve.json is not used: {why}")
        return None
    url = str(info["url"])
    try:
        status, payload = _post(url, json.dumps(query).encode("utf-8"), info.get("token"),
                                agent=agent, secret=info["secret"],
                                vault=os.path.realpath(root))
        body = json.loads(payload)
    except Unproven:
        _say(f".alaya/serve.json is not used: the server at {url} did not prove it holds the "
             "file's secret for this vault")
        return None
    except (OSError, ValueError, IndexError, KeyError) as exc:
        _say(f"the server at {url} did not answer ({type(exc).__name__}: {exc})")
        return None
    if status >= 300 and not isinstance(body, dict):
        _say(f"the server at {url} answered {status} without a JSON error")
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


def undecodable(argv: list[str]) -> str | None:
    """The error for an argument that is not UTF-8 (the OS hands Python its bytes as lone
    surrogates), or None: alaya's text is UTF-8, and an argument is never guessed at."""
    for number, arg in enumerate(argv, 1):
        at = next((i for i, ch in enumerate(arg) if "\ud800" <= ch <= "\udfff"), None)
        if at is not None:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            return (f"✗ argument {number} ({shown!r}) is not valid UTF-8 (at character "
                    f"{at + 1}) (fix: pass it as UTF-8 text; a file whose name is not UTF-8: "
                    "rename it)\n")
    return None


def main() -> None:
    argv = sys.argv[1:]
    bad = undecodable(argv)
    if bad is not None:
        sys.stderr.write(bad)
        sys.exit(2)
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
