"""How close two relation types are — a semi-closed list plus a fallback (seed 002).

Relation names are free UPPER_SNAKE words, so `--rel CAUSES` must also follow LED_TO or
RESULTED_IN, and must never follow DEPENDS_ON for CAUSED_BY. Sentence embeddings are too
compressed for this (multilingual-e5 rates "caused by" ~ "depends on" at 0.87 and "caused by"
~ "led to" at 0.88), so similarity comes from a small table of relation *families* with a
*direction*, and only names the table does not know fall back to word overlap with the
table's names:

- same name → 1.0;
- same family, same direction (CAUSES ~ LED_TO) → 0.9;
- same family, opposite direction (CAUSES ~ CAUSED_BY) → 0.5 — related but inverse;
- different families → 0.1; RELATES_TO (generic) ~ anything → 0.3.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

# family → (forward names, backward names); symmetric families list everything as forward.
FAMILIES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "causal": (frozenset({"CAUSES", "LED_TO", "LEADS_TO", "RESULTED_IN", "RESULTS_IN",
                          "TRIGGERED", "TRIGGERS", "PRODUCED", "PRODUCES", "ENABLED", "BROKE",
                          "BREAKS", "INDUCES", "EFFECT"}),
               frozenset({"CAUSED_BY", "DUE_TO", "BECAUSE_OF", "RESULTED_FROM", "TRIGGERED_BY",
                          "PRODUCED_BY", "ROOT_CAUSE", "CAUSE", "BROKEN_BY", "FIXED_BY"})),
    "dependency": (frozenset({"DEPENDS_ON", "REQUIRES", "NEEDS", "USES", "BLOCKED_BY",
                              "RELIES_ON", "PREREQUISITE", "CALLS", "IMPORTS"}),
                   frozenset({"REQUIRED_BY", "NEEDED_BY", "USED_BY", "BLOCKS", "DEPENDENCY_OF",
                              "ENABLES"})),
    "similarity": (frozenset({"SIMILAR_TO", "LIKE", "RESEMBLES", "ANALOGOUS_TO", "SAME_AS",
                              "ALIAS_OF", "DUPLICATE_OF", "EQUIVALENT_TO"}), frozenset()),
    "conflict": (frozenset({"CONTRADICTS", "CONFLICTS_WITH", "OPPOSES", "REFUTES",
                            "INCOMPATIBLE_WITH", "DISAGREES_WITH"}), frozenset()),
    "temporal": (frozenset({"TEMPORAL_NEXT", "FOLLOWED_BY", "PRECEDES", "BEFORE", "THEN",
                            "NEXT"}),
                 frozenset({"TEMPORAL_PREV", "FOLLOWS", "AFTER", "PRECEDED_BY", "PREVIOUS"})),
    "reference": (frozenset({"REFERENCES", "MENTIONS", "CITES", "SEE_ALSO", "LINKS_TO",
                             "ABOUT", "DESCRIBES"}),
                  frozenset({"REFERENCED_BY", "MENTIONED_IN", "CITED_BY"})),
    "provenance": (frozenset({"EXTRACTED_FROM", "DERIVED_FROM", "SOURCE", "FROM_SESSION",
                              "LEARNED_FROM"}), frozenset({"SOURCE_OF"})),
    "supersession": (frozenset({"SUPERSEDES", "REPLACES", "OBSOLETES", "UPDATES",
                                "DEPRECATES"}),
                     frozenset({"SUPERSEDED_BY", "REPLACED_BY", "OBSOLETED_BY"})),
    "composition": (frozenset({"PART_OF", "BELONGS_TO", "MEMBER_OF", "INSIDE"}),
                    frozenset({"CONTAINS", "HAS_PART", "INCLUDES"})),
    "cooccurrence": (frozenset({"CO_OCCURS", "CO_RECALLED"}), frozenset()),
    "inspiration": (frozenset({"INSPIRED_BY", "INFLUENCED_BY", "BASED_ON"}),
                    frozenset({"INSPIRED", "INFLUENCED"})),
}
GENERIC = frozenset({"RELATES_TO", "RELATED_TO", "RELATED", "ASSOCIATED_WITH", "LINKED_TO"})

_INDEX: dict[str, tuple[str, int]] = {}
for _family, (_fwd, _bwd) in FAMILIES.items():
    for _name in _fwd:
        _INDEX[_name] = (_family, 1)
    for _name in _bwd:
        _INDEX[_name] = (_family, -1)


def _stem(word: str) -> str:
    return re.sub(r"(ING|ED|ES|S)$", "", word)


def classify(name: str) -> tuple[str, int] | None:
    """(family, direction) of a relation name; unknown names by their words."""
    name = name.upper()
    if name in _INDEX:
        return _INDEX[name]
    words = [w for w in name.split("_") if w]
    if not words:
        return None
    backward = words[-1] in ("BY", "FROM", "OF") or "BECAUSE" in words
    stems = {_stem(w) for w in words} - {"BY", "FROM", "OF", "TO", "ON", "WITH", "IN", "AS"}
    best: tuple[int, str] | None = None
    for known, (family, _direction) in _INDEX.items():
        overlap = len(stems & {_stem(w) for w in known.split("_")})
        if overlap and (best is None or overlap > best[0]):
            best = (overlap, family)
    if best is None:
        return None
    return best[1], -1 if backward else 1


@lru_cache(maxsize=4096)
def relation_similarity(a: str, b: str) -> float:
    a, b = a.upper(), b.upper()
    if a == b:
        return 1.0
    if a in GENERIC or b in GENERIC:
        return 0.3
    ca, cb = classify(a), classify(b)
    if ca is None or cb is None:
        return 0.1
    if ca[0] != cb[0]:
        return 0.1
    symmetric = not FAMILIES[ca[0]][1]
    return 0.9 if symmetric or ca[1] == cb[1] else 0.5


_QUERY_CUES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # (pattern, relation, words one of which the pattern needs: a query without any of them
    # skips the pattern, which is then never compiled — six compiles cost a one-shot recall
    # about a millisecond)
    (r"(?i)\b(why|cause[sd]?|because|reason|root|due to|led to)\b|为什么|原因",
     "CAUSED_BY", ("why", "cause", "reason", "root", "due to", "led to", "为什么", "原因")),
    (r"(?i)\b(then|after|next|later|before|when|timeline|sequence)\b|之后|然后",
     "TEMPORAL_NEXT", ("then", "after", "next", "later", "before", "when", "timeline",
                       "sequence", "之后", "然后")),
    (r"(?i)\b(depend\w*|require\w*|need\w*|prerequisite)\b|依赖|需要", "DEPENDS_ON",
     ("depend", "require", "need", "prerequisite", "依赖", "需要")),
    (r"(?i)\b(similar|like|same as|alternative)\b|类似", "SIMILAR_TO",
     ("similar", "like", "same as", "alternative", "类似")),
    (r"(?i)\b(conflict\w*|contradict\w*|disagree\w*|versus|vs)\b|矛盾|冲突",
     "CONTRADICTS", ("conflict", "contradict", "disagree", "versus", "vs", "矛盾", "冲突")),
    (r"(?i)\b(replac\w*|supersed\w*|instead|deprecated)\b|替代", "SUPERSEDES",
     ("replac", "supersed", "instead", "deprecated", "替代")),
)


def query_relations(text: str) -> list[str]:
    """Relation types a free-text query hints at ("why …" → CAUSED_BY), for ranking the
    `explorable` paths when the agent named none."""
    text = text or ""
    # casefold() as the patterns' (?i) reads ſ and K; re also reads dotless ı and İ as i
    folded = text.casefold().replace("ı", "i").replace("\u0307", "")
    return [rel for i, (_, rel, gates) in enumerate(_QUERY_CUES)
            if any(g in folded for g in gates) and _query_cue(i).search(text)]


@cache
def _query_cue(i: int) -> re.Pattern[str]:
    return re.compile(_QUERY_CUES[i][0])
