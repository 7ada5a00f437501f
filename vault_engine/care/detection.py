"""Offline candidates for contradictions and duplicates (no LLM, no embedder).

- **Claim conflicts** (seed 003 §3.3): two claims that say nearly the same thing but differ in
  a value — a quantity, an identifier, a name or place, or a negation, in English and Chinese:
  "the cache TTL is 60 s" vs "… 300 s"; "the backup bucket is in region eu-west-1" vs
  "… us-east-1" (region codes, hostnames, versions, IPs are identifiers); "连接池上限是 25" vs
  "… 200"; "X supports Y" vs "X does not support Y"; "周五可以发版" vs "周五不可以发版"
  (不/没/没有/别/无/未/勿/非). Quantities compare after their units are normalised, so "5
  minutes" and "300 seconds" agree. Claims already marked contested/refuted/superseded, claims
  whose validity windows do not overlap (one replaced the other in time) and pairs joined by
  SUPERSEDES are not conflicts.
- **Near-duplicate cards**: two live cards whose title and claims share nearly all their
  words (Jaccard of the token sets).

Both find their pairs by prefix filtering (`similar_pairs`), exact for Jaccard and far from
pair by pair, so a vault of tens of thousands of claims stays fast. `lint` reports the
candidates; `introspect` acts on them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from vault_engine.store.model import Card, Claim, Entity, Note
from vault_engine.text.tokens import tokenize

NEGATIONS = frozenset({"not", "no", "never", "none", "cannot", "can't", "don't", "doesn't",
                       "didn't", "isn't", "aren't", "wasn't", "weren't", "won't", "without",
                       "disabled", "false", "nobody", "nothing", "不", "没", "没有", "别", "无"})
# Chinese negation: a marker inside a run of Han characters (no spaces to split on), except in
# words where it does not negate (非常 "very", 别人 "others", 不过 "but", 无论 "whatever" …)
_CJK_NEGATION_RE = re.compile(r"没有|[不没别无未勿非]")
_CJK_NOT_NEGATION = ("非常", "别人", "别的", "别处", "不过", "无论", "不仅", "不但", "无数",
                     "毫不", "不断", "不少", "不错")
# identifiers: region codes, hostnames, versions, IPs, keys — letters and digits joined by
# - . _ : / (eu-west-1, db-primary.internal, v1.2.3, 10.0.0.5, pg16)
_IDENT_RE = re.compile(r"(?<![\w.-])(?:v\d+(?:\.\d+){1,3}|\d+(?:\.\d+){2,3}"
                       r"|[A-Za-z][A-Za-z0-9]*\d[A-Za-z0-9]*"
                       r"|[A-Za-z0-9]+(?:[-_.:/][A-Za-z0-9]+)+)(?![\w-])")
# quantities: a number and its unit, normalised to one base per dimension
_UNITS = {
    "ms": ("time", 0.001), "s": ("time", 1), "sec": ("time", 1), "secs": ("time", 1),
    "second": ("time", 1), "seconds": ("time", 1), "秒": ("time", 1),
    "min": ("time", 60), "mins": ("time", 60), "minute": ("time", 60),
    "minutes": ("time", 60), "分钟": ("time", 60), "分": ("time", 60),
    "h": ("time", 3600), "hr": ("time", 3600), "hrs": ("time", 3600), "hour": ("time", 3600),
    "hours": ("time", 3600), "小时": ("time", 3600), "d": ("time", 86400),
    "day": ("time", 86400), "days": ("time", 86400), "天": ("time", 86400),
    "week": ("time", 604800), "weeks": ("time", 604800), "周": ("time", 604800),
    "b": ("bytes", 1), "kb": ("bytes", 1e3), "mb": ("bytes", 1e6), "gb": ("bytes", 1e9),
    "tb": ("bytes", 1e12), "kib": ("bytes", 1024), "mib": ("bytes", 1024 ** 2),
    "gib": ("bytes", 1024 ** 3), "k": ("count", 1e3), "m": ("bytes", 1e6), "g": ("bytes", 1e9),
    "%": ("percent", 1), "percent": ("percent", 1), "个": ("count", 1), "次": ("count", 1),
    "条": ("count", 1), "台": ("count", 1), "核": ("cores", 1), "cores": ("cores", 1),
}
_QUANTITY_RE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)\s*(" + "|".join(
    sorted((re.escape(u) for u in _UNITS), key=len, reverse=True)) + r")(?![A-Za-z])", re.I)
_NUMBER_RE = re.compile(r"\d+(?:[.,:]\d+)*")
_NAME_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z0-9]+(?:\s+[A-Z][a-zA-Z0-9]+)*")
_WORD_RE = re.compile(r"[\w']+")
SIMILAR = 0.6  # share of the non-value words two conflicting claims must have in common
DUPLICATE = 0.8  # Jaccard of two cards' words above which they are near-duplicates
LIVE = ("supported",)
MAX_POSTING = 300  # a prefix token shared by more sets than this is not probed
# Near-duplicates compare whole bodies: a note whose rarest distinctive words are each in more
# than 64 notes is boilerplate, not anyone's copy (10k synthetic cards: 67 s → 6.6 s)
DUPLICATE_MAX_POSTING = 64


@dataclass(frozen=True)
class ClaimRef:
    note: Note
    claim: Claim


@dataclass(frozen=True)
class ClaimConflict:
    a: ClaimRef
    b: ClaimRef
    kind: str  # quantity | number | identifier | negation | name
    detail: str
    similarity: float


@dataclass(frozen=True)
class Duplicate:
    a: Note
    b: Note
    similarity: float


@dataclass(frozen=True)
class Values:
    """What a statement asserts besides its wording: quantities (normalised), identifiers,
    other numbers, names, and whether it is negated."""

    quantities: frozenset[tuple[str, float]]  # (dimension, value in its base unit)
    identifiers: frozenset[str]
    numbers: frozenset[str]
    names: frozenset[str]
    negated: bool
    shown: tuple[tuple[tuple[str, float], str], ...] = ()  # each quantity as it was written


def _cjk_negated(text: str) -> bool:
    masked = text
    for word in _CJK_NOT_NEGATION:
        masked = masked.replace(word, " ")
    return bool(_CJK_NEGATION_RE.search(re.sub(r"[^\u3400-\u9fff]+", " ", masked)))


def values(text: str) -> Values:
    shown = tuple(((_UNITS[m.group(2).lower()][0],
                    round(float(m.group(1)) * _UNITS[m.group(2).lower()][1], 6)), m.group(0))
                  for m in _QUANTITY_RE.finditer(text))
    quantities = frozenset(q for q, _ in shown)
    rest = _QUANTITY_RE.sub(" ", text)
    identifiers = frozenset(m.group(0).lower() for m in _IDENT_RE.finditer(rest))
    rest = _IDENT_RE.sub(" ", rest)
    numbers = frozenset(n.replace(",", ".") for n in _NUMBER_RE.findall(rest))
    words = {w.lower() for w in _WORD_RE.findall(text)}
    negated = bool(words & NEGATIONS) or "n't" in text.lower() or _cjk_negated(text)
    names = frozenset(m.group(0) for m in _NAME_RE.finditer(rest))
    return Values(quantities, identifiers, numbers, names, negated, shown)


def _content(text: str) -> frozenset[str]:
    """Words that carry the statement, values (quantities with their units, identifiers,
    numbers, names, negations) taken out."""
    plain = _QUANTITY_RE.sub(" ", text)
    plain = _IDENT_RE.sub(" ", plain)
    plain = _NAME_RE.sub(" ", _NUMBER_RE.sub(" ", plain))
    for word in _CJK_NOT_NEGATION:
        plain = plain.replace(word, f" {word} ")
    plain = re.sub(r"(?<=[\u3400-\u9fff])(?:没有|[不没别无未勿非])|(?:没有|[不没别无未勿非])"
                   r"(?=[\u3400-\u9fff])", " ", plain)
    return frozenset(t for t in tokenize(plain) if t not in NEGATIONS and not t.isdigit())


def differs(a: Values, b: Values) -> tuple[str, str] | None:
    """How two statements about the same thing disagree, or None."""
    if a.negated != b.negated:
        return "negation", "one of them is negated"
    dims_a = {d for d, _ in a.quantities}
    shared = dims_a & {d for d, _ in b.quantities}
    for dim in sorted(shared):
        qa = {v for d, v in a.quantities if d == dim}
        qb = {v for d, v in b.quantities if d == dim}
        if qa != qb:
            return "quantity", f"{_fmt(a, dim, qa - qb or qa)} vs {_fmt(b, dim, qb - qa or qb)}"
    if a.identifiers and b.identifiers and a.identifiers != b.identifiers:
        return "identifier", (f"{', '.join(sorted(a.identifiers - b.identifiers))} vs "
                              f"{', '.join(sorted(b.identifiers - a.identifiers))}")
    if a.numbers and b.numbers and a.numbers != b.numbers:
        return "number", (f"{', '.join(sorted(a.numbers - b.numbers) or sorted(a.numbers))} vs "
                          f"{', '.join(sorted(b.numbers - a.numbers) or sorted(b.numbers))}")
    if a.names and b.names and a.names != b.names:
        return "name", f"{', '.join(sorted(a.names - b.names))} vs {', '.join(sorted(b.names - a.names))}"
    return None


def _fmt(v: Values, dim: str, chosen: set[float]) -> str:
    return ", ".join(sorted({raw for (d, x), raw in v.shown if d == dim and x in chosen}))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def _overlap(a: Claim, b: Claim) -> bool:
    """Do the claims' validity windows overlap (an open end overlaps everything)?"""
    if a.valid_until is not None and b.valid_from is not None and a.valid_until <= b.valid_from:
        return False
    return not (b.valid_until is not None and a.valid_from is not None
                and b.valid_until <= a.valid_from)


def similar_pairs(token_sets: Sequence[frozenset[str]], threshold: float,
                  max_posting: int = MAX_POSTING) -> list[tuple[int, int, float]]:
    """Every pair of sets with Jaccard ≥ threshold, without comparing all pairs: prefix
    filtering (AllPairs, Bayardo et al. 2007) — tokens ordered rarest first, each set indexed
    by its first |A| − ⌈t·|A|⌉ + 1 tokens, since two sets that similar must share one of
    those; then a size filter and the exact Jaccard. Exact, except that a prefix token
    already shared by `max_posting` sets is not probed: a set whose *rarest* words are that
    common is boilerplate, and probing it would cost as much as the whole scan."""
    import math

    df: dict[str, int] = {}
    for toks in token_sets:
        for t in toks:
            df[t] = df.get(t, 0) + 1
    index: dict[str, list[int]] = {}
    out = []
    order = sorted(range(len(token_sets)), key=lambda i: len(token_sets[i]))
    for i in order:  # smaller sets first: each pair is found when its larger set arrives
        toks = token_sets[i]
        if not toks:
            continue
        ranked = sorted(toks, key=lambda t: (df[t], t))
        prefix = ranked[:len(ranked) - math.ceil(threshold * len(ranked)) + 1]
        seen: set[int] = set()
        for t in prefix:
            posting = index.get(t, ())
            if len(posting) > max_posting:
                continue
            for j in posting:
                if j in seen:
                    continue
                seen.add(j)
                other = token_sets[j]
                if len(other) < threshold * len(toks):
                    continue
                sim = _jaccard(toks, other)
                if sim >= threshold:
                    out.append((min(i, j), max(i, j), sim))
        for t in prefix:
            index.setdefault(t, []).append(i)
    return sorted(out)


def _supersedes(notes: Sequence[Note]) -> set[frozenset[str]]:
    out: set[frozenset[str]] = set()
    for n in notes:
        for r in n.relations:
            if r.type in ("SUPERSEDES", "SUPERSEDED_BY") and n.id:
                out.add(frozenset({n.id.lower(), r.target.lower()}))
    return out


def claim_conflicts(notes: Sequence[Note]) -> list[ClaimConflict]:
    refs = [ClaimRef(n, c) for n in notes if isinstance(n, Card | Entity) for c in n.claims
            if c.status in LIVE and c.text.strip()]
    contents = [_content(r.claim.text) for r in refs]
    vals = [values(r.claim.text) for r in refs]
    superseded = _supersedes(notes)
    found: list[ClaimConflict] = []
    for i, j, sim in similar_pairs(contents, SIMILAR):
        a, b = refs[i], refs[j]
        if a.note.path == b.note.path and a.claim.id == b.claim.id:
            continue
        shared_names = {n.lower() for n in vals[i].names} & {n.lower() for n in vals[j].names}
        if len(contents[i] & contents[j]) + len(shared_names) < 2:
            continue  # the same subject: at least two words or names in common
        if not _overlap(a.claim, b.claim):
            continue
        if a.note.id and b.note.id and \
                frozenset({a.note.id.lower(), b.note.id.lower()}) in superseded:
            continue
        how = differs(vals[i], vals[j])
        if how is None:
            continue
        found.append(ClaimConflict(a, b, how[0], how[1], round(sim, 3)))
    return found


def card_tokens(card: Note) -> frozenset[str]:
    """The words of a card's title and claims (what SIMILAR_TO and causal links compare)."""
    claims = " ".join(c.text for c in card.claims) if isinstance(card, Card) else ""
    return frozenset(tokenize(f"{card.title} {claims}"))


def text_tokens(card: Note) -> frozenset[str]:
    """The words of a note's full text: title, claims and body."""
    claims = " ".join(c.text for c in card.claims) if isinstance(card, Card) else ""
    return frozenset(tokenize(f"{card.title} {claims} {card.body}"))


def distinctive(token_sets: Sequence[frozenset[str]]) -> list[frozenset[str]]:
    """Each set without the words most of the notes use (in more than a quarter of them, and
    more than 3): such words say nothing about which two notes are the same, and comparing
    on them costs most of the time. A note made only of such words is nobody's duplicate."""
    df: dict[str, int] = {}
    for toks in token_sets:
        for t in toks:
            df[t] = df.get(t, 0) + 1
    limit = max(3, len(token_sets) // 4)
    common = {t for t, n in df.items() if n > limit}
    return [toks - common for toks in token_sets]


def near_duplicates(notes: Sequence[Note], threshold: float = DUPLICATE) -> list[Duplicate]:
    """Cards whose full text — title, claims and body — shares ≥ `threshold` of its
    distinctive words. (Title and claims alone made every note without claims — most of a
    person's vault — a "duplicate" of any other note with a similar title.)"""
    cards = [n for n in notes if isinstance(n, Card)]
    toks = distinctive([text_tokens(c) for c in cards])
    return [Duplicate(cards[i], cards[j], round(sim, 3))
            for i, j, sim in similar_pairs(toks, threshold, max_posting=DUPLICATE_MAX_POSTING)]
