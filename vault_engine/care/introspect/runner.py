"""`alaya introspect`: the vault looks after itself, one git commit per phase.

Phases, in order (seed 000 §4.7, seed 002 dreaming, seed 003 §3.2–3.3):

1. **distill** — sessions not distilled yet (distill keeps its one commit per session).
2. **consolidate** — near-duplicate cards merged into the one with more behind it (claims and
   evidence united, relations moved over, every link re-pointed, the other archived with
   `merged_into`); SIMILAR_TO added between cards in the middle band; custom relation types
   clustered into merge / alias / promote / refine suggestions (report only).
3. **conflicts** — offline claim-conflict candidates (vault_engine.care.detection: values,
   identifiers, quantities and negation, Chinese too); with an LLM configured each is judged
   by it first, any other answer falls back to the rules: resolved where seed 003's rules allow
   (source trust differs by more than 0.5 → the trusted side; else more than 90 days apart →
   the newer), otherwise both marked `contested` with a CONTRADICTS link and listed in
   reports/contradictions.md. Then passive validation (validation.py): later sessions that
   confirm a claim raise its confidence, one that contradicts it contests it.
4. **entities** — entity pages (vault_engine/sessions/distill/entity_pages.py): every person,
   system or project named in two or more sessions gets an entity note, and every entity
   note's managed block lists what the memory knows of it — the cards' claims and the
   sessions' statements, dated, each linked to its turn. A person's own entity note is
   written only where it already carries the block.
5. **cooldown** — temperatures and tiers recomputed from recall telemetry (seed 000 §3.3, the
   same inputs and function the compiler uses), HOT limit enforced.
6. **forget** — cold, long-unused (per category), rarely recalled, unpinned cards no card or
   entity depends on are moved to archive/ with the reason and date (never deleted; `alaya
   restore` brings one back); so is a card whose feedback quality is below 0.2 after 5 or more
   verdicts (seed 003). See forget.py.
7. **promote** — dreaming (dreaming.py: Light, REM, Deep with recovery) and the six-factor
   score (seed 002) over recall telemetry; cards past the gates are written into MEMORY.md's
   managed block within `[memory] budget_chars`, the lowest score evicted first. Text outside
   the block is never touched; when it alone exceeds the budget nothing is promoted and the
   report says so.
8. **gaps** — knowledge gaps (seed 003 §3.2.2): weak recalls grouped by topic and triaged into
   classes A–D in reports/open-questions.md.

Every phase appends its section to `reports/introspect-<date>.md` in the same commit as its
changes, so `git log -p` reads like a dream diary. `dry_run` computes every plan and writes
nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

from vault_engine.errors import WriteRefusedError
from vault_engine.primitives import now as clock
from vault_engine.store.vault import Vault
from vault_engine.telemetry import note_stats

from .conflicts import phase_conflicts
from .consolidate import phase_consolidate
from .cooldown import phase_cooldown
from .forget import phase_forget
from .gaps import phase_gaps
from .phase import Context, PhaseResult, commit_phase
from .promote import phase_promote

PHASES = ("distill", "consolidate", "conflicts", "entities", "cooldown", "forget", "promote",
          "gaps")


def phase_distill(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    from vault_engine.sessions.distill import distill, select_sessions

    r = PhaseResult("distill")
    pending = list(select_sessions(ctx.vault, None, False))
    r.numbers["sessions_pending"] = len(pending)
    if ctx.dry_run:
        r.lines = [f"- would distil [[{s.stem}]]" for s in pending]
        return r
    outcomes = distill(ctx.vault, commit=ctx.commit) if pending else []
    created = sum(len(o.applied.created) for o in outcomes if o.applied)
    updated = sum(len(o.applied.updated) for o in outcomes if o.applied)
    r.numbers.update(distilled=sum(o.status == "distilled" for o in outcomes),
                     skipped=sum(o.status == "skipped" for o in outcomes),
                     failed=sum(o.status == "failed" for o in outcomes),
                     cards_created=created, cards_updated=updated)
    r.lines = [f"- [[{o.session}]]: {o.status}{' — ' + o.reason if o.reason else ''}"
               for o in outcomes]
    # a person's card a later value supersedes: the status change is proposed, not made
    r.proposals.extend(p for o in outcomes if o.applied for p in o.applied.proposals)
    commit_phase(ctx, r, results, None, f"{len(outcomes)} session(s), {created} card(s)")
    return r


def phase_entities(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    from vault_engine.sessions.distill.entity_pages import plan_pages, write_pages

    r = PhaseResult("entities")
    index = ctx.vault.load_all()
    caller = ctx.vault.caller  # an agent's run keeps to the pages it may read and write
    plan = plan_pages(ctx.vault, index, owners=ctx.owners(index),
                      namespaces=None if caller.is_owner else ["shared", *caller.own])
    r.numbers.update(pages_written=len(plan.pages), pages_new=sum(p.created for p in plan.pages),
                     facts=sum(p.facts for p in plan.pages))
    r.lines = [f"- [[{p.rel.rsplit('/', 1)[-1][:-3]}]]: {'new, ' if p.created else ''}"
               f"{p.facts} fact(s)" for p in plan.pages]
    r.lines += [f"- {path}: a person's note without the facts block — left alone (add "
                "`<!-- alaya:facts:start -->` / `<!-- alaya:facts:end -->` to let alaya "
                "write there)" for path in plan.skipped]
    if ctx.dry_run or not plan.pages:
        commit_phase(ctx, r, results, None, "nothing new")
        return r
    commit_phase(ctx, r, results, lambda tx: write_pages(tx, plan.pages), plan.line())
    return r


RUNNERS: dict[str, Callable[[Context, list[PhaseResult]], PhaseResult]] = {
    "distill": phase_distill, "consolidate": phase_consolidate, "conflicts": phase_conflicts,
    "entities": phase_entities,
    "cooldown": phase_cooldown, "forget": phase_forget, "promote": phase_promote,
    "gaps": phase_gaps,
}


def introspect(vault: Vault, *, phases: Sequence[str] = PHASES, dry_run: bool = False,
               commit: bool = True, now: dt.datetime | None = None,
               on_phase: Callable[[PhaseResult], None] | None = None) -> list[PhaseResult]:
    now = now or clock()
    ctx = Context(vault=vault, now=now, dry_run=dry_run, commit=commit,
                  report_path=f"reports/introspect-{now.date().isoformat()}.md",
                  stats=note_stats(vault.state_dir))
    results: list[PhaseResult] = []
    for name in PHASES:
        if name not in phases:
            continue
        try:
            result = RUNNERS[name](ctx, results)
        except WriteRefusedError as exc:  # a full disk: this phase is put back, not the last
            done = [r.name for r in results if r.commit]
            if done:
                exc.message += (f" (in the {name} phase; committed before it: "
                                f"{', '.join(done)})")
            raise
        results.append(result)
        if on_phase:
            on_phase(result)
    if not dry_run and set(PHASES) <= set(phases):  # a full run: the schedule restarts
        from .schedule import record_run

        record_run(vault, now, [r.name for r in results], sum(1 for r in results if r.commit))
    return results


