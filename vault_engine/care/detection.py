"""Offline candidates for contradictions and duplicates (no LLM, no embedder).

- **Claim conflicts** (seed 003 §3.3): two claims that say nearly the same thing but differ in
  a value — a number, a date, a name or place, or a negation ("the cache TTL is 60 s" vs "the
  cache TTL is 300 s"; "X supports Y" vs "X does not support Y"). Claims already marked
  contested/refuted/superseded, claims whose validity windows do not overlap (one replaced the
  other in time) and pairs joined by SUPERSEDES are not conflicts.
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
_NUMBER_RE = re.compile(r"\d+(?:[.,:]\d+)*")
_NAME_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z0-9]+(?:\s+[A-Z][a-zA-Z0-9]+)*")
_WORD_RE = re.compile(r"[\w']+")
SIMILAR = 0.6  # share of the non-value words two conflicting claims must have in common
DUPLICATE = 0.8  # Jaccard of two cards' words above which they are near-duplicates
LIVE = ("supported",)
MAX_POSTING = 300  # a prefix token shared by more sets than this is not probed


@dataclass(frozen=True)
class ClaimRef:
    note: Note
    claim: Claim


@dataclass(frozen=True)
class ClaimConflict:
    a: ClaimRef
    b: ClaimRef
    kind: str  # number | negation | name
    detail: str
    similarity: float


@dataclass(frozen=True)
class Duplicate:
    a: Note
    b: Note
    similarity: float


def _values(text: str) -> tuple[frozenset[str], bool, frozenset[str]]:
    numbers = frozenset(n.replace(",", ".") for n in _NUMBER_RE.findall(text))
    words = {w.lower() for w in _WORD_RE.findall(text)}
    negated = bool(words & NEGATIONS) or "n't" in text.lower()
    names = frozenset(m.group(0) for m in _NAME_RE.finditer(text))
    return numbers, negated, names


def _content(text: str) -> frozenset[str]:
    """Words that carry the statement, values (numbers, names, negations) taken out."""
    plain = _NAME_RE.sub(" ", _NUMBER_RE.sub(" ", text))
    return frozenset(t for t in tokenize(plain) if t not in NEGATIONS and not t.isdigit())


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
    values = [_values(r.claim.text) for r in refs]
    superseded = _supersedes(notes)
    found: list[ClaimConflict] = []
    for i, j, sim in similar_pairs(contents, SIMILAR):
        a, b = refs[i], refs[j]
        if a.note.path == b.note.path and a.claim.id == b.claim.id:
            continue
        shared_names = {n.lower() for n in values[i][2]} & {n.lower() for n in values[j][2]}
        if len(contents[i] & contents[j]) + len(shared_names) < 2:
            continue  # the same subject: at least two words or names in common
        if not _overlap(a.claim, b.claim):
            continue
        if a.note.id and b.note.id and \
                frozenset({a.note.id.lower(), b.note.id.lower()}) in superseded:
            continue
        (na, nega, ma), (nb, negb, mb) = values[i], values[j]
        if nega != negb:
            kind, detail = "negation", "one of them is negated"
        elif na and nb and na != nb:
            kind, detail = "number", f"{', '.join(sorted(na - nb) or sorted(na))} vs " \
                                     f"{', '.join(sorted(nb - na) or sorted(nb))}"
        elif ma and mb and ma != mb:
            kind, detail = "name", f"{', '.join(sorted(ma - mb))} vs {', '.join(sorted(mb - ma))}"
        else:
            continue
        found.append(ClaimConflict(a, b, kind, detail, round(sim, 3)))
    return found


def card_tokens(card: Note) -> frozenset[str]:
    """The words of a note's full text: title, claims and body. (Title and claims alone
    made every note without claims — most of a person's vault — a "duplicate" of any other
    note with a similar title.)"""
    claims = " ".join(c.text for c in card.claims) if isinstance(card, Card) else ""
    return frozenset(tokenize(f"{card.title} {claims} {card.body}"))


def near_duplicates(notes: Sequence[Note], threshold: float = DUPLICATE) -> list[Duplicate]:
    cards = [n for n in notes if isinstance(n, Card)]
    toks = [card_tokens(c) for c in cards]
    return [Duplicate(cards[i], cards[j], round(sim, 3))
            for i, j, sim in similar_pairs(toks, threshold)]
