"""Small helpers with no heavy imports (recall's import path uses them): the clock, dates and
checksums."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any


def to_datetime(value: Any) -> dt.datetime | None:
    """YAML date/datetime/ISO string → aware UTC datetime (None when absent or unparseable)."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value  # epoch ms or s
        return dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        try:
            parsed = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return None


def now() -> dt.datetime:
    """"Now" for every command, in UTC to the second: `ALAYA_NOW` (ISO-8601, e.g.
    `2027-03-01T00:00:00Z`) when it is set — for tests and what-if runs of the lifecycle —
    else the system clock. Git still stamps commits with the real time."""
    raw = os.environ.get("ALAYA_NOW", "").strip()
    if raw:
        when = to_datetime(raw)
        if when is None:
            from .errors import UsageError

            raise UsageError(f"ALAYA_NOW={raw!r} is not an ISO-8601 time",
                             fix="e.g. ALAYA_NOW=2027-03-01T00:00:00Z, or unset it")
        return when.astimezone(dt.UTC).replace(microsecond=0)
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def checksum(data: bytes) -> str:
    """SHA-256 of a file's bytes: the checksum guard and the manifest use it."""
    import hashlib  # not at import: recall's one-shot path never checksums

    return hashlib.sha256(data).hexdigest()


def fit_lines(lines: list[str], room: int) -> tuple[list[str], int, int]:
    """The lines, in order, that fit in `room` characters (a newline each); a line that does
    not fit is skipped, never cut. Returns (kept, characters used, lines left out)."""
    kept, used = [], 0
    for line in lines:
        if used + len(line) + 1 > room:
            continue
        kept.append(line)
        used += len(line) + 1
    return kept, used, len(lines) - len(kept)
