"""The quality gate: what never reaches a distiller (seed 004 L1, seed 003 §3.1 hard rules).

Runs before any model call. A turn is dropped when it is empty, symbols only, chit-chat, or
reads as a prompt injection — text addressed to the memory or the model, paraphrased or in
Chinese (vault_engine/text/injection.py); a session is skipped when it has no user message or
nothing substantive is left. What a distiller answers passes the same gate again
(`screen_result`): a card that reads as an injection is dropped, and secrets are redacted
from every card, claim, entity and link before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vault_engine.store.model import Session, Turn
from vault_engine.text.injection import injection_reason

from .model import DistillResult

CHITCHAT_WORDS = frozenset("""
hi hello hey yo thanks thank you thx ty ok okay k cool great nice awesome bye goodbye good
morning night evening afternoon lol haha hahaha yes yeah yep no nope sure np welcome cheers
please pls sounds perfect got it alright right fine wow oh ah hmm uh um see ya later
""".split()) | {"好的", "谢谢", "嗯", "哈哈", "好", "收到", "拜拜", "你好", "早", "晚安", "行", "可以"}
_WORD_RE = re.compile(r"[\w\u4e00-\u9fff]+", re.UNICODE)


def turn_gate(text: str) -> str | None:
    """Why this turn must not be distilled, or None when it may be."""
    stripped = text.strip()
    if not stripped:
        return "empty"
    words = _WORD_RE.findall(stripped.lower())
    if not words:
        return "symbols only"
    if injection_reason(stripped):
        return "prompt injection"
    if len(words) <= 4 and all(w in CHITCHAT_WORDS for w in words):
        return "chit-chat"
    return None


def session_gate(turns: Sequence[Turn], kept: Sequence[Turn]) -> str | None:
    if not any(t.role in ("user", "human") for t in turns):
        return "no user message"
    if not kept:
        return "nothing substantive after the quality gate"
    return None


def flagged_turns(session: Session) -> dict[str, str]:
    """Turn anchor → why it is an injection: the note's `injection_turns` (set at ingest)
    and whatever the detector finds now (a session ingested before it knew the phrasing)."""
    out: dict[str, str] = {}
    marked = session.meta.get("injection_turns")
    for anchor in marked if isinstance(marked, list) else []:
        out[str(anchor)] = "prompt injection (marked at ingest)"
    for t in session.turns:
        reason = injection_reason(t.text)
        if reason and t.anchor not in out:
            out[t.anchor] = reason
    return out


def screen_result(result: DistillResult) -> tuple[DistillResult, list[str]]:
    """A distiller's answer made safe to write: cards whose text reads as an injection are
    dropped (their titles returned), and every secret is redacted."""
    import dataclasses

    from vault_engine.text.secrets import redact

    kept, dropped = [], []
    for card in result.cards:
        text = "\n".join([card.title, card.content, *(c.text for c in card.claims)])
        if injection_reason(text):
            dropped.append(card.title)
            continue
        kept.append(dataclasses.replace(
            card, title=redact(card.title), content=redact(card.content),
            claims=tuple(dataclasses.replace(c, text=redact(c.text)) for c in card.claims),
            entities=tuple(redact(e) for e in card.entities)))
    gone = {t.casefold() for t in dropped}
    links = [dataclasses.replace(ld, from_title=redact(ld.from_title),
                                 to_title=redact(ld.to_title), reason=redact(ld.reason))
             for ld in result.links
             if ld.from_title.casefold() not in gone and ld.to_title.casefold() not in gone]
    entities = [dataclasses.replace(e, name=redact(e.name),
                                    aliases=tuple(redact(a) for a in e.aliases),
                                    lane=redact(e.lane) if e.lane else e.lane)
                for e in result.entities if not injection_reason(e.name)]
    return dataclasses.replace(result, cards=kept, links=links, entities=entities), dropped
