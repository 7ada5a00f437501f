"""Introspect phase 5, forget: cold, old, rarely recalled, unpinned cards that nothing links to,
and cards whose feedback quality is below 0.2 over 5 or more verdicts, are moved to archive/
with the reason and date (never deleted; `alaya restore` brings one back). A person's note is
never archived: it is proposed for archiving (report and review queue)."""

from __future__ import annotations

import datetime as dt

from vault_engine.care.tiers import assign_tiers
from vault_engine.store.archive import archive_note
from vault_engine.store.links import link_to
from vault_engine.store.model import Card
from vault_engine.store.proposals import Proposal
from vault_engine.store.vault import Transaction

from .cooldown import tier_inputs
from .phase import Context, PhaseResult, commit_phase

FORGET = {"temperature": 0.1, "days": 90, "max_access": 3}  # seed 000 §4.7.3


def phase_forget(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    r = PhaseResult("forget")
    index = ctx.index()
    tiers = ctx.tiers or assign_tiers(
        tier_inputs(index, ctx.now), ctx.stats, ctx.now, ctx.vault.config.section("tiers"))
    depended: set[str] = set()
    for n in index.notes:
        if n.kind in ("template", "archive"):
            continue
        for lk in n.links:
            res = index.resolver.resolve_link(lk, n.path) if lk.target else None
            if res is not None and res.note is not None and res.note.path != n.path:
                depended.add(res.note.path)
    from vault_engine.care.feedback import quality_scores

    quality = quality_scores(ctx.vault)
    limit = dt.timedelta(days=FORGET["days"])
    chosen: list[tuple[Card, str]] = []
    for n in index.notes:
        if not isinstance(n, Card) or n.pinned or n.meta.get("pinned"):
            continue
        key = n.id or f"path:{n.path}"
        q = quality.get(key)
        if q is not None and q.total >= 5 and (q.score or 0.0) < 0.2:
            chosen.append((n, f"deprecated by feedback: quality {q.score:.2f} over "
                              f"{q.total} verdicts"))
            continue
        t = tiers.get(key)
        s = ctx.stats.get(key)
        if t is None or t.tier != "COLD" or t.temperature >= FORGET["temperature"]:
            continue
        last = (s.last_accessed if s else None) or n.updated or n.created
        if last is None or ctx.now - last < limit:
            continue
        if s is not None and s.access_count >= FORGET["max_access"]:
            continue
        if n.path in depended:
            continue
        reason = (f"forgotten: cold (temperature {t.temperature:.2f}), last used "
                  f"{last.date()}, recalled {s.access_count if s else 0} time(s), nothing "
                  "links to it")
        chosen.append((n, reason))
    owners = ctx.owners(index)
    theirs = [(n, why) for n, why in chosen if owners.is_persons(n.path)]
    chosen = [(n, why) for n, why in chosen if not owners.is_persons(n.path)]
    r.proposals += [Proposal(path=n.path, action="archive", reason=why,
                             summary=f"archive {link_to(n, index.resolver)}: {why}")
                    for n, why in theirs]
    r.numbers.update(archived=len(chosen), proposed=len(theirs))
    r.lines = [f"- {link_to(n, index.resolver)}: {why}" for n, why in chosen]

    def work(tx: Transaction) -> None:
        for n, why in chosen:
            archive_note(tx, ctx.vault, n, why, ctx.now, resolver=index.resolver)

    commit_phase(ctx, r, results, work if chosen else None, f"{len(chosen)} card(s) archived")
    return r
