"""Recall stage 4, graph expansion: breadth-first from the best hits (or the nodes asked for)
along every relation, or only along the asked-for types and those close to them
(vault_engine.store.relations).

A node reached scores by its path: its parent's score × the edge's weight × the step's
relation similarity × a depth decay. For a free-text search the step's similarity is 1 along
an edge and 0.8 against it, and `[recall] intent_weight` when the step goes the way the
question asks (recall/intent.py: "why …" → a step to a cause, along CAUSED_BY or back along
CAUSES; "what did … lead to" → to an effect; "what happened next" → along TEMPORAL_NEXT):
the cause of a symptom the question found outranks the symptom session's weaker cards."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from vault_engine.errors import UsageError
from vault_engine.store.relations import FAMILIES, classify, relation_similarity

from .fusion import Hit
from .index import RecallIndex
from .query import RecallQuery, RecallSettings


def resolve_node(index: RecallIndex, ref: str, namespaces: set[str] | None = None) -> int:
    """A node by id or title, among the nodes of `namespaces` (None: every one) — a node the
    caller may not see is not found, whoever owns it."""
    ref = ref.strip().removeprefix("[[").removesuffix("]]")
    if ref in index.node_index and index.visible(index.node_index[ref], namespaces):
        return index.node_index[ref]
    wanted = ref.casefold()
    for node, unit in enumerate(index.node_unit):
        if unit >= 0 and str(index.row(int(unit)).get("title", "")).casefold() == wanted \
                and index.visible(node, namespaces):
            return node
    raise UsageError(f"--from-nodes: no node {ref!r} in the compiled vault",
                     fix="pass node ids from a previous recall's nodes[].id")


HUB_SESSIONS = 4  # an entity reached by expansion leads on to its sessions only up to this many


def through_facts(index: RecallIndex, parent: Hit, edges: Iterable[tuple[int, str, float]]
                  ) -> Iterator[tuple[int, str, float]]:
    """An entity page's edges to sessions, for a page the question found by its facts: only
    towards the sessions of the facts it matched, each weighted by how well its fact matched
    against the best one — a page that names forty sessions leads to the two whose facts
    answer (question → entity → the sessions that hold the facts). A page reached by
    expansion matched nothing: it leads on only when it names few sessions (a hub says
    nothing about which of its sessions matter). A page asked for (--from-nodes) or found by
    its name alone keeps every edge. Edges to other kinds stay as they are."""
    edges = list(edges)
    cited: dict[str, float] = {}
    for unit, score in parent.units:
        ref = index.row(unit).get("cites") if unit >= 0 and score > 0 else None
        if ref:
            stem = str(ref).split("#", 1)[0].rsplit("/", 1)[-1].casefold()
            cited[stem] = max(cited.get(stem, 0.0), score)
    top = max(cited.values(), default=0.0)
    if top <= 0:
        sessions = sum(index.node_kind(t) == "session" for t, _, _ in edges)
        if parent.depth == 0 or sessions <= HUB_SESSIONS:
            yield from edges
        else:
            yield from (e for e in edges if index.node_kind(e[0]) != "session")
        return
    for target, rel, weight in edges:
        if index.node_kind(target) != "session":
            yield target, rel, weight
            continue
        unit = int(index.node_unit[target])
        path = str(index.row(unit).get("path") or "") if unit >= 0 else ""
        stem = path.rsplit("/", 1)[-1].removesuffix(".md").casefold()
        if stem in cited:
            yield target, rel, weight * cited[stem] / top


DECAY = 0.8  # each step away from a seed keeps this share of the path's score


def goes_as_asked(rel: str, direction: str, intent: str | None) -> bool:
    """Does a step along `rel` (from its source when `direction` is "out", back from its
    target when "in") go the way the question asks? "why" (CAUSED_BY) is answered by a
    step along CAUSED_BY or DUE_TO, or back along CAUSES or LED_TO; a symmetric family
    (SIMILAR_TO) has no way and never matches a causal or temporal question."""
    if intent is None:
        return False
    have, want = classify(rel), classify(intent)
    if have is None or want is None or have[0] != want[0] or not FAMILIES[have[0]][1]:
        return False
    way = have[1] if direction == "out" else -have[1]
    return way == want[1]


def expand(index: RecallIndex, seeds: list[Hit], hits: dict[int, Hit], wanted: Sequence[str],
            depth: int, settings: RecallSettings, query: RecallQuery,
            namespaces: set[str] | None, exclude_seeds: bool,
            intent: str | None = None) -> None:
    """Breadth-first along edges; with `wanted` relations only along close types. A free-text
    search follows every type but those `[recall] expand_exclude` leaves out, and a step
    the way the question asks (`intent`, a relation type) weighs `[recall] intent_weight`. A
    direct hit keeps its own score (raising it would push the other sessions down with the
    seed session's own cards); a node reached twice keeps its better path."""
    frontier = [(s, 0) for s in seeds]
    seen = {s.node for s in seeds}
    excluded = set(settings.expand_exclude) if not wanted else set()
    everything = index.searches_all(namespaces)
    while frontier:
        parent, d = frontier.pop(0)
        if d >= depth:
            continue
        directions = ("out",) if wanted else ("out", "in")
        for direction in directions:
            edges = index.neighbours(parent.node, direction)
            if not everything:  # before anything counts them (an entity page's sessions)
                edges = [e for e in edges if index.visible(e[0], namespaces)]
            if direction == "out" and index.node_kind(parent.node) == "entity":
                edges = through_facts(index, parent, edges)
            for target, rel, weight in edges:
                if rel in excluded:
                    continue
                asked = False
                if wanted:
                    sim = max(relation_similarity(rel, w) for w in wanted)
                    if sim < settings.rel_threshold:
                        continue
                elif goes_as_asked(rel, direction, intent):
                    sim, asked = settings.intent_weight, True
                else:
                    sim = 1.0 if direction == "out" else 0.8
                if not index.visible(target, namespaces):
                    continue
                unit = int(index.node_unit[target])
                if unit >= 0 and not index.unit_passes(unit, query, namespaces):
                    continue
                score = parent.score * weight * sim * DECAY
                existing = hits.get(target)
                if target in seen and existing is not None:
                    if wanted and existing.matched_rel is None and existing is not parent:
                        # a direct hit that is also reached along an asked-for relation is
                        # a relation match: say so (navigation ranks it by that)
                        existing.matched_rel, existing.rel_similarity = rel, round(sim, 3)
                        existing.via, existing.depth = parent.node, d + 1
                    elif existing.depth > 0 and score > existing.score:
                        existing.score = score  # the better path
                        existing.matched_rel, existing.via = rel, parent.node
                        existing.rel_similarity = 1.0 if asked else round(sim, 3)
                    continue
                seen.add(target)
                hit = Hit(node=target, score=score, depth=d + 1, matched_rel=rel,
                          rel_similarity=1.0 if asked else round(sim, 3), via=parent.node,
                          units=[(unit, 0.0)] if unit >= 0 else [])
                hits[target] = hit
                frontier.append((hit, d + 1))
    if exclude_seeds:
        for s in seeds:
            hits.pop(s.node, None)
