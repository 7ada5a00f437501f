"""Text that cannot be written: lone surrogates.

JSON may escape a UTF-16 surrogate with no partner (`"\\ud800"`); Python decodes it to a str
holding a code point that UTF-8 cannot encode, so the first write, hash or embedding of it
fails. A surrogate is not a character, so what came in as data (a session, a query, a card
sent as JSON, an MCP tool's arguments) is mended the way a decoder mends undecodable bytes:
each lone surrogate becomes U+FFFD, the replacement character, and nothing else changes (a
proper pair was already joined into one character by the JSON decoder).
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
_LONE = re.compile("[\ud800-\udfff]")  # after JSON decoding, any surrogate left is alone


def unpaired(text: str) -> int | None:
    """The index of the first lone surrogate in `text`, or None."""
    found = _LONE.search(text)
    return found.start() if found else None


def mended(value: Any) -> Any:
    """`value` (a str, or JSON's lists and dicts of them) with every lone surrogate replaced by
    U+FFFD; the same object when there is none."""
    if isinstance(value, str):
        return _LONE.sub(REPLACEMENT, value) if _LONE.search(value) else value
    if isinstance(value, list):
        return [mended(v) for v in value]
    if isinstance(value, tuple):
        return tuple(mended(v) for v in value)
    if isinstance(value, dict):
        return {mended(k): mended(v) for k, v in value.items()}
    return value


def loads(data: str | bytes) -> Any:
    """`json.loads`, its strings mended."""
    return mended(json.loads(data))
