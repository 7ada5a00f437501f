"""Managed blocks: the only part of a human's file that a tool may rewrite.

```
<!-- alaya:memory:start -->
tool-owned text
<!-- alaya:memory:end -->
```
`replace_block` swaps the inside of one block and leaves every other byte as it was. Missing,
duplicated or out-of-order markers are errors naming the line, never guesses.
"""

from __future__ import annotations

import re

from vault_engine.errors import ManagedBlockError

_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]*$")


def _markers(name: str) -> tuple[str, str]:
    if not _NAME_RE.match(name):
        raise ValueError(f"bad managed block name {name!r}")
    return f"<!-- alaya:{name}:start -->", f"<!-- alaya:{name}:end -->"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def find_block(text: str, name: str, path: str | None = None) -> tuple[int, int] | None:
    """(start, end) offsets of the block's inside, or None when the block is absent."""
    start_m, end_m = _markers(name)
    starts = [m.start() for m in re.finditer(re.escape(start_m), text)]
    ends = [m.start() for m in re.finditer(re.escape(end_m), text)]
    if not starts and not ends:
        return None
    fix = f"keep exactly one `{start_m}` followed by one `{end_m}`"
    if len(starts) != 1 or len(ends) != 1:
        where = (starts + ends)[1] if len(starts + ends) > 1 else (starts + ends)[0]
        raise ManagedBlockError(f"managed block '{name}' has {len(starts)} start and "
                                f"{len(ends)} end markers", path=path,
                                line=_line_of(text, where), fix=fix)
    if ends[0] < starts[0]:
        raise ManagedBlockError(f"managed block '{name}' ends before it starts", path=path,
                                line=_line_of(text, ends[0]), fix=fix)
    inner_start = starts[0] + len(start_m)
    if text.startswith("\r\n", inner_start):
        inner_start += 2
    elif text.startswith("\n", inner_start):
        inner_start += 1
    return inner_start, ends[0]


def read_block(text: str, name: str, path: str | None = None) -> str | None:
    span = find_block(text, name, path)
    return None if span is None else text[span[0]:span[1]]


def replace_block(text: str, name: str, content: str, *, path: str | None = None,
                  create: bool = True) -> str:
    """Return `text` with the block's inside replaced by `content` (ending with a newline).

    With `create`, a missing block is appended at the end of the text.
    """
    if content and not content.endswith("\n"):
        content += "\n"
    span = find_block(text, name, path)
    if span is None:
        if not create:
            raise ManagedBlockError(f"no managed block '{name}'", path=path,
                                    fix=f"add the markers for '{name}' where the tool may write")
        start_m, end_m = _markers(name)
        sep = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{sep}{start_m}\n{content}{end_m}\n"
    return text[:span[0]] + content + text[span[1]:]


def outside_blocks(text: str) -> str:
    """The human part of a text: everything outside managed blocks (for byte comparisons)."""
    return re.sub(r"<!-- alaya:([a-z][a-z0-9_-]*):start -->.*?<!-- alaya:\1:end -->", "",
                  text, flags=re.S)


def block_spans(text: str) -> list[tuple[int, int]]:
    """1-based (first, last) line of every managed block's inside: the lines alaya owns."""
    out = []
    for m in re.finditer(r"<!-- alaya:([a-z][a-z0-9_-]*):start -->.*?<!-- alaya:\1:end -->",
                         text, flags=re.S):
        out.append((_line_of(text, m.start()) + 1, _line_of(text, m.end()) - 1))
    return out
