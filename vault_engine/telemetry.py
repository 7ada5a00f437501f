"""Recall telemetry: append-only events under `.alaya/telemetry/`, never in git.

One JSON object per line: `{"ts": ISO, "query": str, "hits": [{"id", "score", "relevance",
"tier", "depth"}], "latency_ms", "expanded"}` for a recall, `{"ts", "feedback": verdict,
"id", "reason"?}` for a useful / not-useful verdict. `note_stats` aggregates recalls into
what temperature, tiers and promotion need.

A hit's `relevance` is in [0, 1]: the query's cosine to the hit (clamped) when vectors took
part, else the hit's score relative to the best hit of that recall. Events written before it
existed count their score relative to the event's best.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from .artifacts import TELEMETRY
from .primitives import record


@record
class NoteStats:
    """One note's recalls, aggregated from the events."""

    access_count: int = 0
    last_accessed: dt.datetime | None = None
    first_accessed: dt.datetime | None = None
    scores: list[float] = field(default_factory=list)
    queries: set[str] = field(default_factory=set)
    days: set[str] = field(default_factory=set)

    @property
    def relevance(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0


_MADE = {"ts", "id", "build", "compiled_at", "agent", "feedback"}  # alaya's own values: no secret


def append_event(state_dir: Path, event: Mapping[str, Any]) -> None:
    """Append one event; a single write of one line keeps concurrent appenders whole. A write
    the machine refuses is WriteRefusedError; a line it cut short is skipped by readers and
    ended before the next one."""
    from .errors import refused_write
    from .redaction_trigger import triggered

    path = state_dir / TELEMETRY
    # what a recall asked and a verdict's reason are logged only through the redactor (the
    # rest of an event is numbers and the ids alaya made); its rules are loaded only for a
    # text its first step does not clear
    if any(isinstance(v, str) and k not in _MADE and triggered(v) for k, v in event.items()):
        from .redaction import redact

        event = {k: redact(v) if isinstance(v, str) and k not in _MADE else v
                 for k, v in event.items()}
    line = json.dumps(dict(event), ensure_ascii=False, separators=(",", ":")) + "\n"
    data = line.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a line a full disk cut short ends here, not in ours
            if os.write(fd, data) != len(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        finally:
            os.close(fd)
    except OSError as exc:
        raise (refused_write(exc, path) or exc) from exc


def read_events(state_dir: Path) -> Iterable[dict[str, Any]]:
    path = state_dir / TELEMETRY
    if not path.exists():
        return
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a torn last line from a crash is skipped, never fatal
            if isinstance(event, dict):
                yield event


def note_stats(state_dir: Path,
               events: Iterable[Mapping[str, Any]] | None = None) -> dict[str, NoteStats]:
    """Recall hits per note (feedback events are not recalls). `events`: already read."""
    stats: dict[str, NoteStats] = {}
    for event in read_events(state_dir) if events is None else events:
        if "feedback" in event:
            continue
        try:
            when = dt.datetime.fromisoformat(str(event.get("ts", "")).replace("Z", "+00:00"))
        except ValueError:
            continue
        query = str(event.get("query", ""))
        hits = [h for h in event.get("hits") or [] if isinstance(h, dict)]
        top = max((float(h["score"]) for h in hits if isinstance(h.get("score"), int | float)),
                  default=0.0)
        for hit in hits:
            if not isinstance(hit, dict) or not hit.get("id"):
                continue
            s = stats.setdefault(str(hit["id"]), NoteStats())
            s.access_count += 1
            s.last_accessed = max(filter(None, (s.last_accessed, when)))
            s.first_accessed = min(filter(None, (s.first_accessed, when)))
            s.scores.append(hit_relevance(hit, top))
            s.queries.add(query)
            s.days.add(when.date().isoformat())
    return stats


def hit_relevance(hit: Mapping[str, Any], top: float) -> float:
    """A hit's similarity in [0, 1]: its recorded relevance, else (older events) its score
    relative to the best score of its recall."""
    rel = hit.get("relevance")
    if isinstance(rel, int | float) and not isinstance(rel, bool):
        return max(0.0, min(1.0, float(rel)))
    score = hit.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool) and top > 0:
        return max(0.0, min(1.0, float(score) / top))
    return 0.0
