"""Temperature and HOT / WARM / COLD tiers (seed 000 §3.3).

    temperature = recency × frequency × relevance          (each in [0, 1], so is it)
    recency     = exp(-days_since_created / 30)             (/ 15 for a volatile note: it
                                                              decays twice as fast, seed 003)
    frequency   = min(1, access_count / 20)
    relevance   = mean similarity of the note to the queries that recalled it, in [0, 1]
                  (vault_engine.telemetry: the query's cosine to the hit, else its score
                  relative to the recall's best)

- HOT (vectors in RAM): pinned, or temperature ≥ hot_threshold, or created/accessed within
  recent_days, or accessed more than hot_access_count times.
- COLD (no vectors: lexical and graph only): temperature < warm_threshold and no access for
  cold_days (counting from when the note entered the vault if never accessed).
- WARM (vectors on disk, memory-mapped): everything else.

Then HOT is capped at hot_limit (coolest demoted to WARM) and WARM at warm_limit (coolest
demoted to COLD), each per audience — `shared` notes among themselves, each agent's notes
among themselves — so no note loses its place to notes its readers may not read; pinned
notes are never demoted below HOT. "Created" is when the note entered
this vault (`first_seen`, kept in the manifest) or its `created` key, whichever is later, so
importing old knowledge does not make it cold on arrival.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass

from vault_engine.store.namespaces import agent_of
from vault_engine.telemetry import NoteStats


@dataclass(frozen=True)
class TierInput:
    key: str
    created: dt.datetime
    pinned: bool = False
    volatile: bool = False
    audience: str = "shared"  # who reads it: "shared", or the agent whose namespace it is in


def tier_input(key: str, created: dt.datetime | None, first_seen: dt.datetime | None,
               now: dt.datetime, *, pinned: bool = False, volatile: bool = False,
               namespace: str | None = None) -> TierInput:
    """What tiers need of one note — the single definition compile, introspect and status
    share, so they agree: "created" is the later of its `created` key and when it entered
    this vault (`first_seen` in the manifest), so importing old knowledge does not make it
    cold on arrival; a note with neither entered now. `namespace` decides its audience: the
    HOT and WARM limits are counted per audience (`assign_tiers`)."""
    entered = max(filter(None, (created, first_seen)), default=now)
    return TierInput(key, entered, pinned, volatile,
                     agent_of(namespace or "shared") or "shared")


@dataclass(frozen=True)
class TierResult:
    tier: str
    temperature: float


def temperature(created: dt.datetime, stats: NoteStats | None, now: dt.datetime, *,
                volatile: bool = False) -> float:
    days = max(0.0, (now - created).total_seconds() / 86400)
    recency = math.exp(-days * (2.0 if volatile else 1.0) / 30)
    if stats is None:
        return 0.0
    frequency = min(1.0, stats.access_count / 20)
    relevance = max(0.0, min(1.0, stats.relevance))
    return round(recency * frequency * relevance, 6)


def assign_tiers(items: list[TierInput], stats: Mapping[str, NoteStats], now: dt.datetime,
                 settings: Mapping[str, float | int]) -> dict[str, TierResult]:
    hot_t = float(settings["hot_threshold"])
    warm_t = float(settings["warm_threshold"])
    recent = float(settings["recent_days"])
    cold_days = float(settings["cold_days"])
    hot_count = int(settings["hot_access_count"])
    out: dict[str, TierResult] = {}
    for item in items:
        st = stats.get(item.key)
        temp = temperature(item.created, st, now, volatile=item.volatile)
        age = (now - item.created).total_seconds() / 86400
        last = st.last_accessed if st and st.last_accessed else None
        idle = (now - last).total_seconds() / 86400 if last else age
        if (item.pinned or temp >= hot_t or age <= recent or idle <= recent
                or (st is not None and st.access_count > hot_count)):
            tier = "HOT"
        elif temp < warm_t and idle > cold_days:
            tier = "COLD"
        else:
            tier = "WARM"
        out[item.key] = TierResult(tier, temp)
    # the limits hold per audience: shared notes compete only with shared notes, an agent's
    # with its own — a note's tier never depends on notes its readers may not read
    groups: dict[str, list[TierInput]] = {}
    for item in items:
        groups.setdefault(item.audience, []).append(item)
    for group in groups.values():
        pinned = {i.key for i in group if i.pinned}
        _cap(out, "HOT", "WARM", int(settings["hot_limit"]), pinned, group)
        _cap(out, "WARM", "COLD", int(settings["warm_limit"]), pinned, group)
    return out


def _cap(out: dict[str, TierResult], tier: str, lower: str, limit: int, pinned: set[str],
         items: list[TierInput]) -> None:
    created = {i.key: i.created for i in items}
    members = list(dict.fromkeys(i.key for i in items
                                 if out[i.key].tier == tier and i.key not in pinned))
    allowed = limit - sum(1 for k in pinned if out[k].tier == tier)
    if len(members) <= max(allowed, 0):
        return
    # Keep the warmest, then the newest; demote the rest.
    members.sort(key=lambda k: (out[k].temperature, created[k], k), reverse=True)
    for k in members[max(allowed, 0):]:
        out[k] = TierResult(lower, out[k].temperature)
