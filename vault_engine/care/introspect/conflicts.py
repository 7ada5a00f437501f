"""Introspect phase 3, conflicts: offline claim-conflict candidates (vault_engine.care.detection),
judged by an LLM when one is configured, else settled by seed 003's rules (source trust, then
recency) or marked `contested` with a CONTRADICTS link and listed in reports/contradictions.md."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from vault_engine.care.detection import ClaimConflict, claim_conflicts
from vault_engine.store import blocks
from vault_engine.store.frontmatter import FlowMap, NoteText
from vault_engine.store.links import link_to
from vault_engine.store.model import Card, Note, Session
from vault_engine.store.namespaces import may_name
from vault_engine.store.proposals import Proposal
from vault_engine.store.vault import Transaction, VaultIndex

from .phase import Context, PhaseResult, appender, commit_phase, flow, report_text
from .validation import CONFIDENCE_STEP, Observation, observations

CONTRADICTIONS = "reports/contradictions.md"


TRUST_GAP = 0.5  # seed 003 §3.3.2: trust differs by more → the trusted source wins


RECENCY_GAP_DAYS = 90  # … else timestamps further apart → latest wins


def source_trust(note: Note, index: VaultIndex) -> float:
    """Seed 003 §3.3.3: what a person wrote 1.0; what a user said in a session 0.95; what the
    agent said (its inference) 0.5; an LLM distillation with no turn behind it 0.4."""
    explicit = note.meta.get("trust")
    if isinstance(explicit, int | float) and not isinstance(explicit, bool):
        return float(explicit)
    if not isinstance(note, Card) or not (note.source_sessions or any(
            c.evidence for c in note.claims)):
        return 1.0
    best = 0.4
    for c in note.claims:
        for e in c.evidence:
            if e.link is None:
                continue
            res = index.resolver.resolve_link(e.link, note.path)
            if isinstance(res.note, Session) and e.link.block:
                turn = res.note.turn(e.link.block)
                if turn is not None:
                    best = max(best, 0.95 if turn.role == "user" else 0.5)
    return best


def _claim_time(ref: Any) -> dt.datetime | None:
    c, n = ref.claim, ref.note
    return c.valid_from or getattr(n, "updated", None) or getattr(n, "created", None)


JUDGE_PROMPT = """Two claims from a knowledge base look like they contradict each other.
Decide whether they really do (the same subject, incompatible statements), and if so which
one to keep when the text alone makes it clear (otherwise keep neither).
Answer with JSON only: {"contradiction": true|false, "keep": "a"|"b"|null, "reason": "..."}"""


def _judge(ctx: Context, k: ClaimConflict) -> dict[str, Any] | None:
    """Ask the configured LLM about one candidate. None: no LLM, budget spent, or an answer
    that is not the JSON asked for (then the offline rules decide)."""
    import json

    from vault_engine.errors import AlayaError
    from vault_engine.providers.llm import Budget, ChatClient, llm_settings

    settings = llm_settings(ctx.vault.config)
    if settings.provider not in ("openai", "llm") or not settings.base_url:
        return None
    budget = Budget(ctx.vault.state_dir, settings.daily_call_budget)
    if not budget.available():
        return None
    user = (f"Claim a ({k.a.note.title}, {k.a.claim.id}): {k.a.claim.text}\n"
            f"Claim b ({k.b.note.title}, {k.b.claim.id}): {k.b.claim.text}\n"
            f"They differ in: {k.detail}")
    try:
        budget.spend()
        raw = ChatClient(settings).complete([{"role": "system", "content": JUDGE_PROMPT},
                                             {"role": "user", "content": user}])
        answer = json.loads(raw)
    except (AlayaError, ValueError):
        return None
    if not isinstance(answer, dict) or not isinstance(answer.get("contradiction"), bool) \
            or answer.get("keep") not in ("a", "b", None):
        return None
    return answer


def phase_conflicts(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    r = PhaseResult("conflicts")
    index = ctx.index()

    def ln(note: Note) -> str:
        return link_to(note, index.resolver)

    live = [n for n in index.notes if n.kind not in ("template", "archive")]
    # a conflict is judged within one audience: settling it writes a link or a status into
    # each note, which must not name, or be moved by, what its readers may not read
    found = [k for k in claim_conflicts(live) if may_name(k.a.note.namespace, k.b.note.namespace)
             and may_name(k.b.note.namespace, k.a.note.namespace)]
    total = len(found)
    resolved: list[tuple[ClaimConflict, Any, Any, str]] = []  # (conflict, winner, loser, why)
    open_: list[ClaimConflict] = []
    dismissed = 0
    for k in list(found):
        verdict = None if ctx.dry_run else _judge(ctx, k)
        if verdict is None:
            continue
        found.remove(k)
        if not verdict["contradiction"]:
            dismissed += 1
            r.lines.append(f"- not a contradiction (LLM): {ln(k.a.note)} "
                           f"{k.a.claim.id} / {ln(k.b.note)} {k.b.claim.id}"
                           f" — {str(verdict.get('reason', ''))[:120]}")
        elif verdict["keep"] in ("a", "b"):
            win, lose = (k.a, k.b) if verdict["keep"] == "a" else (k.b, k.a)
            resolved.append((k, win, lose, "LLM: " + str(verdict.get("reason", ""))[:120]))
        else:
            open_.append(k)
    for k in found:
        ta, tb = source_trust(k.a.note, index), source_trust(k.b.note, index)
        wa, wb = _claim_time(k.a), _claim_time(k.b)
        if abs(ta - tb) > TRUST_GAP:
            win, lose = (k.a, k.b) if ta > tb else (k.b, k.a)
            resolved.append((k, win, lose, f"source trust {max(ta, tb):.2f} vs {min(ta, tb):.2f}"))
        elif wa and wb and abs((wa - wb).days) > RECENCY_GAP_DAYS:
            win, lose = (k.a, k.b) if wa > wb else (k.b, k.a)
            resolved.append((k, win, lose, f"newer by {abs((wa - wb).days)} days"))
        else:
            open_.append(k)
    observed = observations(live, ctx.now)  # passive validation (seed 003 §3.3.4)
    obs_confirm = [o for o in observed if o.kind == "confirms"]
    obs_contra = [o for o in observed if o.kind == "contradicts"]
    r.numbers.update(candidates=total, resolved=len(resolved), contested=len(open_),
                     confirmed_by_sessions=len(obs_confirm),
                     contradicted_by_sessions=len(obs_contra))
    if dismissed:
        r.numbers["dismissed"] = dismissed
    for k, win, lose, why in resolved:
        r.lines.append(f"- kept {ln(win.note)} {win.claim.id} over "
                       f"{ln(lose.note)} {lose.claim.id} ({k.detail}; {why})")
    for k in open_:
        r.lines.append(f"- contested: {ln(k.a.note)} {k.a.claim.id} vs "
                       f"{ln(k.b.note)} {k.b.claim.id} ({k.detail})")

    for o in obs_confirm:
        r.lines.append(f"- confirmed: {ln(o.note)} {o.claim.id} by "
                       f"{o.source} “{o.sentence[:100]}”")
    for o in obs_contra:
        r.lines.append(f"- contradicted: {ln(o.note)} {o.claim.id} by "
                       f"{o.source} “{o.sentence[:100]}” ({o.detail})")

    owners = ctx.owners(index)

    def set_status(tx: Transaction, note: Note, claim_id: str, status: str,
                   extra: dict[str, Any] | None = None) -> None:
        if owners.is_persons(note.path):  # a person's note: proposed, never rewritten
            item = {"claim": claim_id, "status": status, **(extra or {})}
            if not any(p.path == note.path and dict(p.item) == item for p in r.proposals):
                r.proposals.append(Proposal(path=note.path, action="claim-status", item=item,
                                            summary=f"mark {ln(note)} {claim_id} {status}"))
            return

        def edit(doc: NoteText) -> None:
            claims = [dict(c) for c in doc.frontmatter.data.get("claims") or []]
            for c in claims:
                if str(c.get("id")) == claim_id:
                    c["status"] = status
                    c.update(extra or {})
            doc.frontmatter.set("claims", flow(claims))
        tx.update(note.path, edit)

    def work(tx: Transaction) -> None:
        for _k, win, lose, why in resolved:
            set_status(tx, lose.note, lose.claim.id, "superseded",
                       {"superseded_by": f"{link_to(win.note, index.resolver)} {win.claim.id}",
                        "resolution": why})
        for k in open_:
            set_status(tx, k.a.note, k.a.claim.id, "contested")
            set_status(tx, k.b.note, k.b.claim.id, "contested")
            if k.a.note.path != k.b.note.path:  # symmetric: on an end alaya owns
                a, b = (k.a, k.b) if not owners.is_persons(k.a.note.path) else (k.b, k.a)
                item = FlowMap(type="CONTRADICTS", target=link_to(b.note, index.resolver),
                               weight=1.0,
                               reason=f"claim {a.claim.id} vs {b.claim.id}: {k.detail}")
                if owners.is_persons(a.note.path):
                    r.proposals.append(Proposal(path=a.note.path, action="add-relation",
                                                item=dict(item), summary=f"{ln(a.note)} "
                                                f"CONTRADICTS {ln(b.note)}"))
                else:
                    tx.update(a.note.path, appender("relations", item))
        confirm_claims(tx, [o for o in obs_confirm if not owners.is_persons(o.note.path)],
                       ctx.now)
        r.proposals.extend(Proposal(path=o.note.path, action="report",
                                    summary=f"raise the confidence of {ln(o.note)} "
                                            f"{o.claim.id}: confirmed by {o.source}")
                           for o in obs_confirm if owners.is_persons(o.note.path))
        for o in obs_contra:
            set_status(tx, o.note, o.claim.id, "contested")
        if open_ or obs_contra:
            _write_contradictions(tx, ctx, open_, obs_contra, ln)

    changes = resolved or open_ or obs_confirm or obs_contra
    commit_phase(ctx, r, results, work if changes else None,
                  f"{len(resolved)} resolved, {len(open_)} contested, {len(obs_confirm)} "
                  f"confirmed and {len(obs_contra)} contradicted by later sessions")
    return r


def _write_contradictions(tx: Transaction, ctx: Context, open_: Sequence[ClaimConflict],
                          observed: Sequence[Observation] = (),
                          ln: Callable[[Note], str] = lambda n: f"[[{n.stem}]]") -> None:
    rel = CONTRADICTIONS
    path = ctx.vault.root / rel
    old = report_text(ctx, rel, "Contradictions", (
        "Claims that contradict each other and need a person's decision. Resolve one by "
        "setting the wrong claim's status to `refuted` or `superseded` (or `alaya feedback "
        "correct`)."))
    from vault_engine.store.namespaces import SHARED

    current = blocks.read_block(old, "contradictions", rel) or ""
    lines = [x for x in current.splitlines() if x.strip()]
    for k in open_:
        if {k.a.note.namespace, k.b.note.namespace} != {SHARED}:
            continue  # every agent reads this file: private claims are listed only by lint
        line = (f"- {ln(k.a.note)} {k.a.claim.id} “{k.a.claim.text}” vs "
                f"{ln(k.b.note)} {k.b.claim.id} “{k.b.claim.text}” "
                f"({k.detail}; found {ctx.now.date()})")
        if line.split(" (")[0] not in {x.split(" (")[0] for x in lines}:
            lines.append(line)
    for o in observed:
        line = (f"- {ln(o.note)} {o.claim.id} “{o.claim.text}” vs a later "
                f"session {o.source} “{o.sentence[:200]}” ({o.detail}; found {ctx.now.date()})")
        if line.split(" (")[0] not in {x.split(" (")[0] for x in lines}:
            lines.append(line)
    new = blocks.replace_block(old, "contradictions", "\n".join(lines) + "\n", path=rel)
    if path.exists():
        tx.write(rel, new, ctx.vault.current_checksum(rel))
    else:
        tx.create(rel, new)


def confirm_claims(tx: Transaction, confirmed: Sequence[Observation], now: dt.datetime) -> None:
    """+0.15 confidence per confirming session (up to 1.0), each recorded as evidence."""
    by_note: dict[str, list[Observation]] = {}
    for o in confirmed:
        by_note.setdefault(o.note.path, []).append(o)
    for path, items in by_note.items():
        def edit(doc: NoteText, items: list[Observation] = items) -> None:
            claims = [dict(c) for c in doc.frontmatter.data.get("claims") or []]
            for c in claims:
                mine = [o for o in items if o.claim.id == str(c.get("id"))]
                if not mine:
                    continue
                base = c.get("confidence")
                base = float(base) if isinstance(base, int | float) else 0.5
                c["confidence"] = round(min(1.0, base + CONFIDENCE_STEP * len(mine)), 2)
                evidence = list(c.get("evidence") or [])
                evidence += [{"kind": "session", "source": o.source, "confidence": 0.8,
                              "confirmed": now.date().isoformat()} for o in mine]
                c["evidence"] = evidence
            doc.frontmatter.set("claims", flow(claims))
        tx.update(path, edit)
