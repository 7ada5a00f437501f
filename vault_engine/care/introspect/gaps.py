"""Introspect phase 7, gaps: recalls the memory keeps answering badly, grouped by topic and
triaged into seed 003's classes A–D (vault_engine.care.gaps), written to the managed block of
reports/open-questions.md with their queries and counts. A line a person ticks (`- [x]`)
stays ticked while its topic is still listed; text outside the block is never touched."""

from __future__ import annotations

import re

from vault_engine.care.gaps import CLASSES, Gap, find_gaps
from vault_engine.store import blocks
from vault_engine.store.links import link_to
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
    r = PhaseResult("gaps")
    index = ctx.index()
    gaps = find_gaps(read_events(ctx.vault.state_dir), index.notes, ctx.now,
                     ctx.vault.config.section("lifecycle"))
    r.numbers.update(open_questions=len(gaps), weak_recalls=sum(g.count for g in gaps),
                     **{f"class_{c}": sum(g.cls == c for g in gaps) for c in CLASSES})
    path = ctx.vault.root / OPEN_QUESTIONS
    text = report_text(ctx, OPEN_QUESTIONS, "Open questions", (
        "Questions the memory keeps answering badly (seed 003 §3.2.2), found by `alaya "
        "introspect` in the recall log and sorted by what would close them. Tick one (`- [x]`) "
        "when it is dealt with."))
    current = blocks.read_block(text, "gaps", OPEN_QUESTIONS) or ""
    ticked = {m.group("topic") for line in current.splitlines()
              if (m := _TICKED_RE.match(line.strip()))}
    titles = {n.id or f"path:{n.path}": link_to(n, index.resolver) for n in index.notes}
    lines = _lines(gaps, ticked, titles)
    r.lines = [x for x in lines if x] or ["No weak recalls on any topic."]
    new = blocks.replace_block(text, "gaps", "\n".join(lines).rstrip("\n") + "\n" if lines
                               else "", path=OPEN_QUESTIONS)
    changed = new != text and (path.exists() or bool(gaps))

    def work(tx: Transaction) -> None:
        if path.exists():
            tx.write(OPEN_QUESTIONS, new, ctx.vault.current_checksum(OPEN_QUESTIONS))
        else:
            tx.create(OPEN_QUESTIONS, new)

    commit_phase(ctx, r, results, work if changed else None,
                 f"{len(gaps)} open question(s) from {r.numbers['weak_recalls']} weak recalls")
    return r
