"""Introspect phase 6, promote: the six-factor score (seed 002) over recall telemetry; cards past
the gates go into MEMORY.md's managed block within `[memory] budget_chars`, the lowest score
evicted first. Text outside the block is never touched."""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass

from vault_engine.store import blocks
from vault_engine.store.links import link_to
from vault_engine.store.model import Card, Note
from vault_engine.store.vault import Transaction, VaultIndex
from vault_engine.telemetry import NoteStats
from vault_engine.text.injection import is_injection

from .dreaming import HEALTH_FLOOR, RECOVERY, SHORT_TERM_DAYS, dream, health
from .phase import Context, PhaseResult, commit_phase

MEMORY = "MEMORY.md"


WEIGHTS = {"frequency": 0.24, "relevance": 0.30, "diversity": 0.15, "recency": 0.15,
           "consolidation": 0.10, "concepts": 0.06}  # seed 002 six-factor score


@dataclass(frozen=True)
class Score:
    key: str
    score: float
    factors: dict[str, float]
    signals: int
    queries: int


def six_factor(stats: NoteStats, concepts: int, now: dt.datetime,
               bonus: float = 0.0) -> Score:
    """Seed 002: frequency 0.24, relevance 0.30, diversity 0.15, recency 0.15, consolidation
    0.10, concept coverage 0.06, plus up to 0.15 dreaming bonus."""
    signals = stats.access_count
    last = stats.last_accessed or now
    first = stats.first_accessed or last
    days_since = max(0.0, (now - last).total_seconds() / 86400)
    span = max(0.0, (last - first).total_seconds() / 86400)
    f = {
        "frequency": min(1.0, math.log1p(signals) / math.log1p(10)),
        "relevance": max(0.0, min(1.0, stats.relevance)),
        "diversity": min(1.0, max(len(stats.queries), len(stats.days)) / 5),
        "recency": math.exp(-math.log(2) / 14 * days_since),
        "consolidation": 0.55 * min(1.0, len(stats.days) / 5) + 0.45 * min(1.0, span / 7),
        "concepts": min(1.0, concepts / 6),
    }
    score = sum(WEIGHTS[k] * v for k, v in f.items()) + min(0.15, bonus)
    return Score("", round(score, 4), {k: round(v, 3) for k, v in f.items()}, signals,
                 len(stats.queries))


_ENTRY_RE = re.compile(r"^- \[\[(?P<key>[^\]|#]+)(?:\|[^\]]*)?\]\].*?\(score (?P<score>[0-9.]+)\)")


def _by_key(entries: dict[str, tuple[float, str]], index: VaultIndex) -> dict[str, tuple[float, str]]:
    """Entries keyed by note id: an entry links by file name (`[[Redis|Redis in prod]]`), an
    older alaya's by id (`[[card-7f3a|…]]`); both find their note."""
    out = {}
    for target, value in entries.items():
        note = index.resolver.resolve(target, MEMORY, extras=True).note
        out[note.id if note is not None and note.id else target] = value
    return out


def memory_entries(block: str) -> dict[str, tuple[float, str]]:
    out = {}
    for line in block.splitlines():
        m = _ENTRY_RE.match(line.strip())
        if m:
            out[m.group("key")] = (float(m.group("score")), line.strip())
    return out


def _gated(note: Note) -> bool:
    """A card whose title, a claim or its body reads as a prompt injection: never in MEMORY.md
    (an entry already there goes at the next promote)."""
    return any(is_injection(t) for t in (note.title, *(c.text for c in getattr(note, "claims", ())),
                                         note.body))


def phase_promote(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    r = PhaseResult("promote")
    cfg = ctx.vault.config.section("memory")
    budget = int(cfg["budget_chars"])
    index = ctx.index()
    by_key = {n.id: n for n in index.notes if n.id and n.kind not in ("template", "archive")}
    dreamt = dream(index, ctx.now)
    path = ctx.vault.root / MEMORY
    text = path.read_text(encoding="utf-8") if path.exists() else (
        "---\nid: memory\ntitle: MEMORY\n---\n# MEMORY\n\n")
    current = _by_key(memory_entries(blocks.read_block(text, "memory", MEMORY) or ""), index)
    cutoff = dt.timedelta(days=SHORT_TERM_DAYS)
    scored: list[Score] = []
    dropped = 0
    for key, st in ctx.stats.items():
        note = by_key.get(key)
        if not isinstance(note, Card) or note.namespace != "shared":
            continue  # MEMORY.md is read by every agent: shared cards only, never ephemeral
        if _gated(note):
            continue  # nor a card that reads as a prompt injection, whoever wrote it
        if key not in current and st.first_accessed is not None and \
                ctx.now - st.first_accessed > cutoff:
            dropped += 1  # seed 002: a short-term memory not promoted within 30 days
            continue
        concepts = len(set(note.tags) | {lk.target.lower() for lk in note.links
                                          if lk.field == "relations"})
        sc = six_factor(st, concepts, ctx.now, dreamt.bonus(key))
        scored.append(Score(key, sc.score, sc.factors, sc.signals, sc.queries))
    winners = [s for s in scored if s.score >= float(cfg["min_score"])
               and s.signals >= int(cfg["min_signals"]) and s.queries >= int(cfg["min_queries"])]
    held = [k for k in current if k in by_key]
    memory_health = health({k: six_factor(ctx.stats[k], 0, ctx.now).score for k in held
                            if k in ctx.stats}, held)
    recovered: list[Score] = []
    if memory_health < HEALTH_FLOOR:  # seed 002: deep sleep's recovery pass
        chosen = {s.key for s in winners} | set(current)
        for s in sorted(scored, key=lambda s: -s.score):
            st = ctx.stats[s.key]
            note = by_key[s.key]
            recent = st.last_accessed is not None and \
                ctx.now - st.last_accessed <= dt.timedelta(days=RECOVERY["days"])
            sure = any(c.status == "supported" and (c.confidence or 0.0) >= RECOVERY["confidence"]
                       for c in getattr(note, "claims", ()))
            if s.key in chosen or not recent or not sure or s.score < RECOVERY["min_score"]:
                continue
            recovered.append(s)
            if len(recovered) >= RECOVERY["max"]:
                break
        winners += recovered
    human = blocks.outside_blocks(text)
    entries: dict[str, tuple[float, str]] = {k: v for k, v in current.items() if k in by_key
                                             and not _gated(by_key[k])}
    for s in winners:
        note = by_key[s.key]
        first_claim = next((c.text for c in getattr(note, "claims", ()) if c.status ==
                            "supported"), "")
        gist = f" — {first_claim[:140]}" if first_claim and first_claim != note.title else ""
        entries[s.key] = (s.score, f"- {link_to(note, index.resolver)}{gist} "
                                   f"(score {s.score:.2f})")
    # pinned cards are never evicted (docs/vault-format.md); then the highest score first
    pinned = {k for k, n in by_key.items() if k in entries and isinstance(n, Card) and n.pinned}
    ranked = sorted(entries.items(), key=lambda kv: (kv[0] not in pinned, -kv[1][0], kv[0]))
    markers = len(blocks.replace_block("", "memory", "x\n")) - 2  # the block's own markers
    room = budget - len(human) - markers
    kept, evicted = [], []
    used = 0
    for key, (score, line) in ranked:
        if used + len(line) + 1 <= room:
            kept.append(line)
            used += len(line) + 1
        else:
            evicted.append((key, score))
    added = [k for k, (_, line) in ranked if k not in current and line in kept]

    def ln(key: str, table: bool = False) -> str:  # a link Obsidian opens; `\|` in a table
        note = by_key.get(key)
        link = link_to(note, index.resolver) if note is not None else f"`{key}`"
        return link.replace("|", "\\|") if table else link

    r.numbers.update(candidates=len(scored), past_the_gates=len(winners) - len(recovered),
                     recovered=len(recovered), promoted=len(added), in_memory=len(kept),
                     evicted=len(evicted), budget_chars=budget, human_chars=len(human),
                     dropped_after_30_days=dropped, health=memory_health,
                     light_hits=sum(dreamt.light.values()), rem_hits=sum(dreamt.rem.values()))
    if len(human) > budget:
        r.lines.append(f"⚠ your own text in MEMORY.md is {len(human):,} characters, over the "
                       f"budget of {budget:,}: nothing can be promoted until it is shorter "
                       "(alaya never evicts human text)")
    if recovered:
        r.lines.append(f"Memory health {memory_health:.2f} is below {HEALTH_FLOOR}: the recovery "
                       f"pass looked back {RECOVERY['days']} days and promoted "
                       + ", ".join(ln(s.key) for s in recovered))
    r.lines += [f"- promoted {ln(k)}" for k in added]
    r.lines += [f"- evicted {ln(k)} (score {s:.2f}, lowest first)" for k, s in evicted
                if k in current]
    r.lines += ["", "| card | score | frequency | relevance | diversity | recency | "
                "consolidation | concepts | light | REM | signals | queries |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in sorted(scored, key=lambda s: -s.score)[:30]:
        f = s.factors
        r.lines.append(f"| {ln(s.key, table=True)} | {s.score:.2f} | {f['frequency']} | {f['relevance']} | "
                       f"{f['diversity']} | {f['recency']} | {f['consolidation']} | "
                       f"{f['concepts']} | {dreamt.light.get(s.key, 0)} | "
                       f"{dreamt.rem.get(s.key, 0)} | {s.signals} | {s.queries} |")
    block = "\n".join(kept) + ("\n" if kept else "")
    new_text = blocks.replace_block(text, "memory", block, path=MEMORY)

    def work(tx: Transaction) -> None:
        if path.exists():
            tx.write(MEMORY, new_text, ctx.vault.current_checksum(MEMORY))
        else:
            tx.create(MEMORY, new_text)

    commit_phase(ctx, r, results, work if new_text != text else None,
                  f"{len(added)} promoted, {len(kept)} in MEMORY.md")
    return r
