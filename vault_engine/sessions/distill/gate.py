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
from vault_engine.text.injection import injection_reason, order_in_pasted

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


def trim_injection(text: str) -> str | None:
    """A flagged turn whose injections all sit in material the speaker pasted — a log line, a
    quoted SMS or e-mail, tool output (text/quoted.py) — without that material: every pasted
    block that holds one is cut from the injected line to the block's end. The speaker's own
    words around it, and the lines of the block before it (the booking the SMS confirms), are
    still theirs to distil. None when an injection is in the speaker's own words or anything
    still reads as one after the cut: then the whole turn stays out."""
    from vault_engine.text.quoted import regions

    if injection_reason(text) is None:
        return text
    cut: list[tuple[int, int]] = []
    for region in regions(text):
        if region.kind == "prose":
            if injection_reason(text[region.start:region.end]):
                return None
            continue
        pos = region.start
        for line in text[region.start:region.end].split("\n"):
            if injection_reason(line) or order_in_pasted(line):
                cut.append((pos, region.end))
                break
            pos += len(line) + 1
    if not cut:
        return None
    kept, last = [], 0
    for a, b in cut:
        kept.append(text[last:a])
        last = b
    kept.append(text[last:])
    out = "".join(kept).strip()
    return out if out and injection_reason(out) is None else None


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
