"""`alaya mcp` over stdio, each line mended before the SDK parses it.

The SDK's JSON parser refuses a string holding a lone UTF-16 surrogate escape (`"\\ud800"`)
and answers nothing, so the client waits for ever. Every other door mends such text to
U+FFFD (vault_engine/text/mend.py); here the line is mended before the SDK sees it, and the
tool then answers. Like the SDK, the transport claims fd 0: it reads from a private
duplicate and points fd 0 at the null device while it serves, so no child process alaya
starts (git) reads the wire; fd 0 is restored on exit. fd 1 is claimed by the SDK itself.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from collections.abc import AsyncIterator
from typing import Any

from vault_engine.text import mend

_ESCAPED = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # a surrogate, as JSON escapes it


def mended_line(line: str) -> str:
    """One JSON-RPC line with every lone surrogate escape mended to U+FFFD (a proper pair
    stays one character); any other line as it is."""
    if "\\u" not in line or not _ESCAPED.search(line):
        return line
    try:
        value = json.loads(line)
    except ValueError:
        return line  # the SDK answers a line that is not JSON itself
    return json.dumps(mend.mended(value), ensure_ascii=False) + "\n"


class _Lines:
    """The lines of an anyio text file, mended."""

    def __init__(self, file: Any) -> None:
        self._file = file

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._file.readline()
        if not line:
            raise StopAsyncIteration
        return mended_line(line)


@contextlib.asynccontextmanager
async def _stdin() -> AsyncIterator[_Lines]:
    import anyio

    private = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    text = io.TextIOWrapper(os.fdopen(private, "rb", closefd=False), encoding="utf-8",
                            errors="replace")
    try:
        yield _Lines(anyio.wrap_file(text))
    finally:
        os.dup2(private, 0)


async def serve(lowlevel: Any) -> None:
    """Run the SDK's low-level server over stdio with mended input lines."""
    from mcp.server.stdio import stdio_server

    async with _stdin() as lines, stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
