"""`alaya distill`: sessions → cards with claims, evidence and links (one commit per session).

Distillers: `rules` (offline, the default) and `llm` (any OpenAI-compatible chat endpoint).
A session is pending until it carries `distilled:` in its frontmatter. A session the LLM
could not distil (endpoint down, invalid JSON twice) is left pending for the next run. Past
the daily LLM call budget, distill falls back to the offline rules (seed 003 §3.1).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from vault_engine.errors import AlayaError
from vault_engine.providers.llm import Budget, ChatClient, LLMError, llm_settings
from vault_engine.store.model import Session, Turn
from vault_engine.store.vault import Vault

from .apply import Applied, apply_result, is_distilled
from .gate import flagged_turns, screen_result, session_gate, trim_injection, turn_gate
from .model import DistillResult
from .rules import RulesDistiller


class Distiller(Protocol):
    name: str

    def distill(self, session: Session, turns: list[Turn]) -> DistillResult: ...


@dataclass
class Outcome:
    session: str
    status: str  # distilled | skipped | failed
    reason: str = ""
    distiller: str = ""
    applied: Applied | None = None
    commit: str | None = None
    gated_turns: list[str] = field(default_factory=list)
    trimmed_turns: list[str] = field(default_factory=list)  # pasted injection cut, rest kept

    def to_dict(self) -> dict[str, Any]:
        a = self.applied
        return {"session": self.session, "status": self.status, "reason": self.reason,
                "distiller": self.distiller, "commit": self.commit,
                "gated_turns": self.gated_turns, "trimmed_turns": self.trimmed_turns,
                "created": a.created if a else [], "updated": a.updated if a else [],
                "discarded": a.discarded if a else [], "entities": a.entities if a else [],
                "superseded": a.superseded if a else [],
                "proposals": [p.summary for p in a.proposals] if a else [],
                "links": a.links if a else [], "cards": a.card_paths if a else []}


def choose_distiller(vault: Vault, name: str | None = None) -> tuple[Distiller, Distiller | None]:
    """(primary, fallback): the LLM when configured (with rules as fallback), else rules."""
    settings = llm_settings(vault.config)
    wanted = name or settings.provider
    rules = RulesDistiller(vault.config.timezone())
    if wanted in ("rules", "offline"):
        return rules, None
    if wanted in ("llm", "openai"):
        from .llm import LLMDistiller

        budget = Budget(vault.state_dir, settings.daily_call_budget)
        return LLMDistiller(ChatClient(settings), budget), rules
    raise AlayaError(f"unknown distiller {wanted!r}", fix="use rules or llm")


def select_sessions(vault: Vault, ref: str | None, all_sessions: bool) -> list[Session]:
    index = vault.load()
    if ref:
        note = index.find(ref)
        if not isinstance(note, Session):
            raise AlayaError(f"{ref!r} is a {note.kind}, not a session", path=note.path,
                             fix="pass a session id such as session-20260331-062900")
        return [note]
    sessions = [n for n in index.notes if isinstance(n, Session)]
    if not all_sessions:
        sessions = [s for s in sessions if not is_distilled(s)]
    return sorted(sessions, key=lambda s: (s.started.isoformat() if s.started else "", s.path))


def distill(vault: Vault, *, session: str | None = None, all_sessions: bool = False,
            distiller: str | None = None, commit: bool = True,
            on_outcome: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    primary, fallback = choose_distiller(vault, distiller)
    outcomes = []
    for s in select_sessions(vault, session, all_sessions):
        outcome = distill_session(vault, s, primary, fallback, commit=commit)
        outcomes.append(outcome)
        if on_outcome:
            on_outcome(outcome)
    if any(o.status == "distilled" and o.applied and (o.applied.created or o.applied.updated)
           for o in outcomes):
        from .persona import refresh_persona_and_scenes

        refresh_persona_and_scenes(vault, [o for o in outcomes if o.applied], commit=commit)
    done = {o.session for o in outcomes if o.status == "distilled"}
    if done:  # the pages of what these sessions name: their facts, in one commit
        from .entity_pages import names_in_sessions, refresh_pages

        batch = [s for s in vault.load().notes if isinstance(s, Session) and
                 (s.id or s.stem) in done]
        refresh_pages(vault, names=names_in_sessions(batch),
                      namespaces={s.namespace or "shared" for s in batch}, commit=commit)
    return outcomes


def distill_session(vault: Vault, session: Session, primary: Distiller,
                    fallback: Distiller | None, *, commit: bool = True) -> Outcome:
    sid = session.id or session.stem
    injected = flagged_turns(session)
    kept: list[Turn] = []
    trimmed: list[str] = []
    for t in session.turns:
        if t.anchor in injected:
            rest = trim_injection(t.text)  # an injection only inside pasted material: cut it
            # unchanged: the turn is marked for what it says with its neighbour (an order split
            # over two turns), so there is nothing of its own to cut — it stays out whole
            if rest is None or rest == t.text or turn_gate(rest) is not None:
                continue
            t = dataclasses.replace(t, text=rest)
            trimmed.append(t.anchor)
        elif turn_gate(t.text) is not None:
            continue
        kept.append(t)
    gated = [t.anchor for t in session.turns if t.anchor not in {k.anchor for k in kept}]
    reason = session_gate(session.turns, kept)
    if reason:
        applied, tx = apply_result(vault, session, DistillResult(distiller=f"gate: {reason}"),
                                   commit=commit)
        return Outcome(sid, "skipped", reason, "gate", applied, tx.sha if tx else None, gated,
                       trimmed)
    engine = primary
    budget = getattr(primary, "budget", None)
    if fallback is not None and budget is not None and not budget.available():
        engine = fallback  # over the daily LLM budget: hard rules only (seed 003 §3.1)
    try:
        result = engine.distill(session, kept)
    except LLMError as exc:
        return Outcome(sid, "failed", str(exc), engine.name, None, None, gated, trimmed)
    result.skipped_turns = gated
    result, dropped = screen_result(result)  # the answer passes the gate too
    applied, tx = apply_result(vault, session, result, commit=commit)
    applied.discarded += [f"{title} (reads as a prompt injection)" for title in dropped]
    return Outcome(sid, "distilled", "", engine.name, applied, tx.sha if tx else None, gated,
                   trimmed)
