"""What a distiller returns, and validation of the JSON an LLM returns.

The JSON shape is seed 000 §4.3.1 — `cards[]` (title, content, type, tags, importance) and
`links[]` (from_title, to_title, relation, reason) — extended with optional per-card
`claims[]` (text, confidence, evidence as turn ids such as "t2") and a top-level `entities[]`
(name, type, aliases, lane). An answer in exactly the seed's shape is accepted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from vault_engine.errors import AlayaError

ENTITY_TYPES = ("person", "system", "project", "organization", "place", "topic")


class DistillFormatError(AlayaError):
    """The distiller's output is not the JSON we asked for."""


@dataclass(frozen=True)
class ClaimDraft:
    text: str
    confidence: float = 0.7
    evidence: tuple[str, ...] = ()  # turn anchors: "t3"
    valid_from: str | None = None


@dataclass(frozen=True)
class CardDraft:
    title: str
    type: str
    content: str = ""
    tags: tuple[str, ...] = ()
    importance: float = 0.5
    claims: tuple[ClaimDraft, ...] = ()
    entities: tuple[str, ...] = ()  # entity names this card is about


@dataclass(frozen=True)
class LinkDraft:
    from_title: str
    to_title: str
    relation: str
    reason: str = ""


@dataclass(frozen=True)
class EntityDraft:
    name: str
    type: str = "topic"
    aliases: tuple[str, ...] = ()
    lane: str | None = None
    evidence: tuple[str, ...] = ()


@dataclass
class DistillResult:
    cards: list[CardDraft] = field(default_factory=list)
    links: list[LinkDraft] = field(default_factory=list)
    entities: list[EntityDraft] = field(default_factory=list)
    skipped_turns: list[str] = field(default_factory=list)  # anchors the quality gate dropped
    distiller: str = "rules"


_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.S)
_ANCHOR_RE = re.compile(r"\^?t(\d+)$")


def _str(v: Any, where: str, *, required: bool = True) -> str:
    if v is None and not required:
        return ""
    if not isinstance(v, str) or (required and not v.strip()):
        raise DistillFormatError(f"{where} must be a non-empty string")
    return v.strip()


def _prob(v: Any, default: float) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return default
    return min(1.0, max(0.0, float(v)))


def _anchors(v: Any, valid: set[str]) -> tuple[str, ...]:
    items = v if isinstance(v, list) else [v] if v is not None else []
    out = []
    for item in items:
        if isinstance(item, dict):
            item = item.get("turn") or item.get("source") or ""
        text = str(item).strip().split("#")[-1].strip("[]^")
        m = _ANCHOR_RE.match(text)
        if m and f"t{m.group(1)}" in valid:
            out.append(f"t{m.group(1)}")
    return tuple(dict.fromkeys(out))


def parse_llm_output(text: str, valid_anchors: set[str]) -> DistillResult:
    """Validate an LLM answer. Raises DistillFormatError on anything we cannot use."""
    body = _FENCE_RE.sub("", text.strip())
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise DistillFormatError(f"not JSON: {exc.msg} at line {exc.lineno}") from None
        try:
            obj = json.loads(body[start:end + 1])
        except json.JSONDecodeError as exc2:
            raise DistillFormatError(f"not JSON: {exc2.msg} at line {exc2.lineno}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("cards", []), list):
        raise DistillFormatError('expected an object with a "cards" list')
    result = DistillResult(distiller="llm")
    for i, c in enumerate(obj.get("cards") or []):
        if not isinstance(c, dict):
            raise DistillFormatError(f"cards[{i}] is not an object")
        title = _str(c.get("title"), f"cards[{i}].title")
        ctype = str(c.get("type") or "concept").strip().lower()
        if not re.match(r"^[a-z][a-z0-9_-]{0,31}$", ctype):
            ctype = "concept"
        claims = []
        for j, cl in enumerate(c.get("claims") or []):
            if isinstance(cl, str):
                cl = {"text": cl}
            if not isinstance(cl, dict):
                raise DistillFormatError(f"cards[{i}].claims[{j}] is not an object")
            claims.append(ClaimDraft(text=_str(cl.get("text"), f"cards[{i}].claims[{j}].text"),
                                     confidence=_prob(cl.get("confidence"), 0.7),
                                     evidence=_anchors(cl.get("evidence"), valid_anchors)))
        tags = c.get("tags") or []
        if not isinstance(tags, list):
            tags = [tags]
        ents = c.get("entities") or []
        result.cards.append(CardDraft(
            title=title[:200], type=ctype, content=_str(c.get("content"), "content",
                                                        required=False),
            tags=tuple(str(t).strip().lstrip("#") for t in tags if str(t).strip()),
            importance=_prob(c.get("importance"), 0.5), claims=tuple(claims),
            entities=tuple(str(e) for e in ents if isinstance(e, str | int))))
    for i, link in enumerate(obj.get("links") or []):
        if not isinstance(link, dict):
            raise DistillFormatError(f"links[{i}] is not an object")
        rel = re.sub(r"[\s-]+", "_", str(link.get("relation") or "RELATES_TO").strip()).upper()
        if not re.match(r"^[A-Z][A-Z0-9_]{0,63}$", rel):
            rel = "RELATES_TO"
        result.links.append(LinkDraft(_str(link.get("from_title"), f"links[{i}].from_title"),
                                      _str(link.get("to_title"), f"links[{i}].to_title"), rel,
                                      str(link.get("reason") or "")))
    for i, e in enumerate(obj.get("entities") or []):
        if isinstance(e, str):
            e = {"name": e}
        if not isinstance(e, dict):
            raise DistillFormatError(f"entities[{i}] is not an object")
        etype = str(e.get("type") or "topic").lower()
        aliases = e.get("aliases") or []
        result.entities.append(EntityDraft(
            name=_str(e.get("name"), f"entities[{i}].name")[:120],
            type=etype if etype in ENTITY_TYPES else "topic",
            aliases=tuple(str(a) for a in aliases if isinstance(a, str)),
            lane=e.get("lane") if isinstance(e.get("lane"), str) else None,
            evidence=_anchors(e.get("evidence"), valid_anchors)))
    return result
