"""Introspect phase 7, gaps: recalls the memory keeps answering badly, grouped by topic and
triaged into seed 003's classes A–D (vault_engine.care.gaps), written to the managed block of
reports/open-questions.md with their queries and counts. A line a person ticks (`- [x]`)
stays ticked while its topic is still listed; text outside the block is never touched."""

from __future__ import annotations

import re

from vault_engine.care.gaps import CLASSES, Gap, find_gaps
from vault_engine.errors import AlayaError
from vault_engine.store import blocks
from vault_engine.store.links import link_to
from vault_engine.store.namespaces import Caller
from vault_engine.store.reports import report_path
from vault_engine.store.vault import Transaction
from vault_engine.telemetry import read_events

from .phase import Context, PhaseResult, commit_phase, report_text

OPEN_QUESTIONS = "reports/open-questions.md"
FIXES = {"A": "nothing in the memory covers it: a question to answer (write the card that "
              "answers it)",
         "B": "the memory is close but uses other words: add the question's words as an alias "
              "or a claim of",
         "C": "the memory is there but recall did not rank it first: check the tier and words "
              "of",
         "D": "the answer is split over several notes: consolidate"}
_TICKED_RE = re.compile(r"^- \[x\] \*\*(?P<topic>.+?)\*\*", re.I)


def _lines(gaps: list[Gap], ticked: set[str], titles: dict[str, str]) -> list[str]:
    out = []
    for cls, name in CLASSES.items():
        mine = [g for g in gaps if g.cls == cls]
        if not mine:
            continue
        out.append(f"### {cls} — {name}")
        for g in mine:
            box = "x" if g.topic in ticked else " "
            shown = ", ".join(f"“{q}”" for q in dict.fromkeys(g.queries))
            where = ", ".join(titles.get(k, f"`{k}`") for k in g.notes)  # no dead link
            out.append(f"- [{box}] **{g.topic}** — {g.count} weak recall(s), last "
                       f"{g.last[:10]}: {shown}. {FIXES[cls]}{' ' + where if where else ''}.")
        out.append("")
    return out


def phase_gaps(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    """One report per audience: the owner's recalls in `reports/open-questions.md` (every
    agent reads it, so it names shared notes only), each agent's own recalls — what it
    asked — in `reports/@<agent>/open-questions.md`, which the namespace policy guards
    (store/reports.py). A recall logged before recalls said whose they were counts as the
    owner's."""
    r = PhaseResult("gaps")
    index = ctx.index()
    by_agent: dict[str | None, list[dict[str, object]]] = {}
    for event in read_events(ctx.vault.state_dir):
        if "query" in event:
            agent = event.get("agent")
            by_agent.setdefault(str(agent) if agent else None, []).append(event)
    settings = ctx.vault.config.section("lifecycle")
    plans = []
    for agent in sorted(by_agent, key=lambda a: a or ""):
        try:
            reader = Caller.of_agent(agent) if agent else Caller.public()
        except AlayaError:
            continue  # a name no longer valid as an agent's: nobody to write it for
        view = reader.view(index)
        gaps = find_gaps(by_agent[agent], view.notes, ctx.now, settings)
        rel = report_path("open-questions", agent)
        plans.append((rel, gaps, view, agent))
    # the shared report is rewritten even when no recall is logged (its list may empty)
    if not any(agent is None for *_x, agent in plans):
        plans.insert(0, (OPEN_QUESTIONS, [], Caller.public().view(index), None))
    every = [g for _rel, gaps, _v, _a in plans for g in gaps]
    r.numbers.update(open_questions=len(every), weak_recalls=sum(g.count for g in every),
                     **{f"class_{c}": sum(g.cls == c for g in every) for c in CLASSES})
    writes = []
    for rel, gaps, view, agent in plans:
        path = ctx.vault.root / rel
        text = report_text(ctx, rel, "Open questions", (
            "Questions the memory keeps answering badly (seed 003 §3.2.2), found by `alaya "
            "introspect` in the recall log and sorted by what would close them. Tick one "
            "(`- [x]`) when it is dealt with."), namespace=agent)
        current = blocks.read_block(text, "gaps", rel) or ""
        ticked = {m.group("topic") for line in current.splitlines()
                  if (m := _TICKED_RE.match(line.strip()))}
        titles = {n.id or f"path:{n.path}": link_to(n, view.resolver) for n in view.notes}
        lines = _lines(gaps, ticked, titles)
        if agent is None:
            r.lines += [x for x in lines if x]
        else:
            r.lines += [f"- {len(gaps)} open question(s) of agent {agent}, in {rel}"] if gaps \
                else []
        new = blocks.replace_block(text, "gaps", "\n".join(lines).rstrip("\n") + "\n"
                                   if lines else "", path=rel)
        if new != text and (path.exists() or bool(gaps)):
            writes.append((rel, new, path.exists()))
    r.lines = r.lines or ["No weak recalls on any topic."]

    def work(tx: Transaction) -> None:
        for rel, new, exists in writes:
            if exists:
                tx.write(rel, new, ctx.vault.current_checksum(rel))
            else:
                tx.create(rel, new)

    commit_phase(ctx, r, results, work if writes else None,
                 f"{len(every)} open question(s) from {r.numbers['weak_recalls']} weak recalls")
    return r
