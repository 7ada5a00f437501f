"""The `alaya` entry point. When `alaya serve` runs for the vault, `alaya recall … --json` is
answered by it without importing click, numpy or the engine (one HTTP request, stdlib only);
everything else — and recall without a server — goes to the full CLI in `cli.main`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

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


def try_server(argv: list[str]) -> tuple[int, str] | None:
    vault = os.environ.get("ALAYA_VAULT") or "~/.alaya"
    if argv[:1] == ["--vault"] and len(argv) > 1:
        vault, argv = argv[1], argv[2:]
    elif argv and argv[0].startswith("--vault="):
        vault, argv = argv[0].split("=", 1)[1], argv[1:]
    if argv[:1] != ["recall"]:
        return None
    query = _query(argv[1:])
    if query is None:
        return None
    info = _server(Path(vault).expanduser())
    if info is None:
        return None
    import urllib.error  # only now: urllib costs ~35 ms to import, and most runs need no server
    import urllib.request

    request = urllib.request.Request(
        info["url"] + "/recall", data=json.dumps(query).encode("utf-8"), method="POST",
        headers={"Content-Type": "application/json",
                 **({"Authorization": f"Bearer {info['token']}"} if info.get("token") else {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            body = json.loads(resp.read())
        return 0, json.dumps(body, ensure_ascii=False, indent=2) + "\n"
    except urllib.error.HTTPError as exc:
        try:
            body = json.loads(exc.read())
        except ValueError:
            return None
        return (2 if exc.code == 400 else 1), json.dumps(body, ensure_ascii=False, indent=2) + "\n"
    except (urllib.error.URLError, OSError, ValueError):
        return None  # the server went away: answer in-process


def main() -> None:
    served = try_server(sys.argv[1:])
    if served is not None:
        code, text = served
        sys.stdout.write(text)
        sys.exit(code)
    from .main import main as full_main

    full_main()
