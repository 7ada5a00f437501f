"""What a compile takes (`CompileOptions`) and what it reports (`CompileStats`: counts, the
notes it could not read, timings per stage)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from vault_engine.providers.embedding import Embedder

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class CompileOptions:
    strict: bool = False
    full: bool = False  # re-parse every note, copy nothing from the last build (embeddings:
    # the cache is still used)
    progress: Progress | None = None
    embedder: Embedder | None = None  # default: from alaya.toml / ALAYA_EMBED_*
    now: dt.datetime | None = None


@dataclass
class Malformed:
    path: str
    line: int | None
    message: str
    fix: str


@dataclass
class CompileStats:
    build: str = ""
    notes: int = 0
    parsed: int = 0
    unchanged: int = 0
    deleted: int = 0
    malformed: list[Malformed] = field(default_factory=list)
    units: int = 0
    context_vectors: int = 0  # session turns also embedded with the turn before them
    embedded: int = 0
    embed_cached: int = 0
    embed_error: str | None = None
    vectors: dict[str, int] = field(default_factory=dict)
    tiers: dict[str, int] = field(default_factory=dict)
    edges: int = 0
    claims: int = 0
    embedder: str = ""
    up_to_date: bool = False  # nothing changed: no new build was written
    ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Timer:
    def __init__(self, stats: CompileStats) -> None:
        self.stats = stats
        self.last = time.perf_counter()
        self.start = self.last

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.stats.ms[phase] = round((now - self.last) * 1000, 1)
        self.last = now

    def total(self) -> None:
        self.stats.ms["total"] = round((time.perf_counter() - self.start) * 1000, 1)
