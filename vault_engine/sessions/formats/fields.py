"""A session's metadata — its channel, agent, topic or title, model, working directory, git
branch and every speaker's name — is one-line data, whatever format it came in.

Each of them ends up in the session note: in its frontmatter and title, and the speaker's
name in the head line of every turn's callout (`> [!user] t3 · user · NAME · time`). A value
with a line break in it would start a new line there: a forged turn (`> [!system] t9 · …`), a
forged frontmatter key, a block anchor of its own. So every value is made one line before the
note is rendered (`clean`):

- line breaks, tabs and runs of white space become one space; control and format characters
  (zero-width, bidi, tag characters …) are removed;
- what would mark up a turn head goes: `·` (the head's separator) becomes `-`, a callout
  marker `[!` becomes `[`, a block anchor's `^` is dropped;
- it is capped (CAPS, in characters), the cut marked with `…`.

A value that then reads as a prompt injection (text/injection.py) is not used: the note
leaves it out — not in its title, not in its frontmatter, not on the turn's head — and lists
the field under `injection_fields` (a speaker's name as `t3 speaker`). The raw file beside the
note keeps every byte of it, as ever.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from typing import Any

from vault_engine.text.injection import injection_reason

from .base import SessionIn

CAPS = {"channel": 64, "agent": 64, "name": 64, "topic": 120, "model": 80, "cwd": 240,
        "git_branch": 120}
_BREAKS = re.compile(r"[\s\u2028\u2029\u0085]+")


def one_line(value: Any, cap: int) -> str:
    """`value` as one line of at most `cap` characters (see the module docstring)."""
    text = "".join(c for c in str(value) if unicodedata.category(c) not in ("Cc", "Cf")
                   or c in "\n\r\t")
    text = _BREAKS.sub(" ", text).strip()
    text = text.replace("·", "-").replace("[!", "[").replace("^", "")
    return text if len(text) <= cap else text[:cap - 1].rstrip() + "…"


def _gated(value: str) -> bool:
    return bool(value) and injection_reason(value) is not None


def clean(session: SessionIn) -> SessionIn:
    """`session` with every metadata field one line, capped, and left out when it reads as an
    injection (listed in `metadata["injection_fields"]`)."""
    gated: list[str] = []

    def field(name: str, value: Any) -> str | None:
        if value in (None, ""):
            return None
        text = one_line(value, 4096)  # judged whole, then capped
        if _gated(text):
            gated.append(name)
            return None
        return one_line(text, CAPS[name]) or None

    channel = field("channel", session.channel)
    agent = field("agent", session.agent)
    meta: dict[str, Any] = {}
    for key, value in session.metadata.items():
        if key in CAPS:
            kept = field(key, value)
            if kept is not None:
                meta[key] = kept
        elif isinstance(value, bool | int | float) or value is None:
            meta[key] = value
        elif isinstance(value, str):
            meta[key] = one_line(value, 240)
        elif isinstance(value, list):  # e.g. claude-code's session_ids
            meta[key] = [one_line(v, 120) if isinstance(v, str) else v for v in value
                         if isinstance(v, str | int | float)]
        elif isinstance(value, dict):  # e.g. token counts
            meta[key] = {one_line(k, 64): v for k, v in value.items()
                         if isinstance(v, bool | int | float)}
    turns = []
    for i, turn in enumerate(session.turns, 1):
        name = one_line(turn.name, 4096) if turn.name else None
        if name and _gated(name):
            gated.append(f"t{i} speaker")
            name = None
        name = one_line(name, CAPS["name"]) if name else None
        role = re.sub(r"[^\w-]", "", turn.role)[:24] or "user"  # the callout's type: [!role]
        turn_id = one_line(turn.turn_id, 120) if turn.turn_id else None
        turns.append(dataclasses.replace(turn, name=name or None, role=role, turn_id=turn_id,
                                         tool_calls=tuple(one_line(c, 80) for c in turn.tool_calls)))
    if gated:
        meta["injection_fields"] = gated
    return dataclasses.replace(session, channel=channel, agent=agent, metadata=meta,
                               turns=tuple(turns))


