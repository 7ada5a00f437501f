"""Recall: hybrid search with graph expansion over the compiled artifacts. Zero LLM calls.

Pipeline (seed 000 §4.4, seed 003 §2.6, seed 004): embed the query → vector search over the
HOT and WARM FAISS indexes → BM25 → reciprocal rank fusion (k = 60) → units grouped into notes
(a session scores from its best turns) → graph expansion along all relations, or only along the
requested types and those close to them (vault_engine.store.relations) → heuristic distance
h = α·concept_distance + β·relation_distance + γ·depth_penalty → filters (namespace, type, tag,
kind, --as-of) → MMR diversity → top-k. Output schema: docs/schemas/recall.schema.json.

Everything is read from the current build through memory-mapped arrays (`RecallIndex`);
recall never writes markdown, only a telemetry event under `.alaya/`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vault_engine.errors import AlayaError, UsageError
from vault_engine.primitives import now
from vault_engine.stamps import SHOWN
from vault_engine.store.namespaces import Caller

from .anchors import show_turns
from .expansion import expand, resolve_node
from .fusion import Hit, boost_timed, rrf_fusion, score_notes, weighted_fusion
from .index import open_index
from .intent import query_intent
from .present import explorable_relations, flag_warnings, node_json
from .query import RecallQuery, RecallSettings
from .ranking import POOL, SEEDS, diversify, rank, wants_current
from .rerank import rerank_order
from .retrieval import (
    blend_context,
    bm25_ranking,
    bm25_scores,
    complete_rankings,
    dense_query,
    vector_ranking,
)


def recall(state_dir: Path, query: RecallQuery, *, embedder: Any = None,
           settings: RecallSettings | None = None, telemetry: bool = True,
           resident: bool = False, reranker: Any = None,
           caller: Caller | None = None) -> dict[str, Any]:
    """Run a recall and return the documented JSON object. `caller` (the entry point's; an
    omitted one is the owner) decides which namespaces it may search (store/namespaces.py).
    With a `reranker` (vault_engine.providers.rerank, off by default) its top candidates are
    re-ordered by it."""
    start = time.perf_counter()
    caller = caller if caller is not None else Caller.owner()
    settings = settings or RecallSettings()
    index = open_index(state_dir, resident=resident)
    top_k = query.top_k or settings.top_k
    text = query.query_text
    warnings: list[str] = []
    if not text and not query.from_nodes:
        raise UsageError("nothing to recall: give a query, --concepts or --from-nodes",
                         fix='alaya recall "gateway restart", or pipe the JSON query: '
                             'echo \'{"concepts": ["gateway restart"]}\' | alaya recall --json')
    namespaces = caller.recall_scope(query.namespaces, query.all_namespaces,
                                     settings.default_namespace)

    qvec = None
    if text and query.mode in ("hybrid", "vector"):
        built_with = index.embedder_id
        if embedder is None:
            warnings.append("no embedder: answered from BM25 and the graph only")
        elif built_with and embedder.id != built_with:
            warnings.append(f"the artifacts were embedded with {built_with}, the query would "
                            f"be embedded with {embedder.id}: answered from BM25 and the "
                            "graph only (run `alaya compile`)")
        else:
            try:
                qvec = embedder.embed_query(dense_query(index, text, namespaces))
            except AlayaError as exc:
                warnings.append(f"embedder unavailable ({exc.message}): answered from BM25 "
                                "and the graph only")
    depth = settings.depth if query.depth is None else query.depth
    # the same search depth for every --top-k up to POOL: the first results never move
    k_search = 200 if top_k <= POOL else top_k * 20
    rankings: list[list[tuple[int, float]]] = []
    cos: dict[int, float] = {}
    if qvec is not None:
        vec = vector_ranking(index, qvec, k_search, namespaces)
        cos = dict(vec)
        rankings.append(vec)
    lexical_scores = None
    if text and query.mode in ("hybrid", "bm25"):
        lexical_scores = bm25_scores(index, text, namespaces)
        rankings.append(bm25_ranking(lexical_scores, k_search))
    if settings.complete_scores and qvec is not None and lexical_scores is not None:
        rankings = complete_rankings(index, rankings, lexical_scores, qvec)
    if qvec is not None:
        rankings[0] = blend_context(index, rankings[0], qvec, settings.context_weight)
    if settings.fusion == "rrf":
        fused = rrf_fusion(rankings, settings.rrf_k)
    else:
        weights = ([settings.dense_weight] if qvec is not None else []) + (
            [1.0 - settings.dense_weight] if len(rankings) > (qvec is not None) else [])
        fused = weighted_fusion(list(zip(weights, rankings, strict=False)))
    intent = query_intent(text)
    if intent.when:
        fused = boost_timed(index, fused, settings.time_weight)

    hits = score_notes(index, fused, query, namespaces, lexical_scores, text, cos, settings)
    # asked for some kinds only (`--kind session`): expansion still starts from every kind —
    # question → entity page → the sessions that hold its facts
    seed_hits = hits
    if query.kinds and query.expand and not query.from_nodes and text:
        seed_hits = score_notes(index, fused, dataclasses.replace(query, kinds=()), namespaces,
                                lexical_scores, text, cos, settings)

    # seeds for expansion: the best hits, or the nodes we were asked to continue from
    seeds: list[Hit]
    if query.from_nodes:
        seeds = []
        for ref in query.from_nodes:
            node = resolve_node(index, ref, namespaces)
            seeds.append(Hit(node=node, score=1.0, cosine=None))
        hits = {} if not text else hits
        depth = max(depth, 1)
    else:  # a fixed number of seeds: the order must not depend on how many are shown
        seeds = sorted(seed_hits.values(), key=lambda h: (-h.score, h.node))[:SEEDS]
    wanted = tuple(query.relations)
    if query.expand and depth > 0 and seeds:
        expand(index, seeds, hits, wanted, depth, settings, query, namespaces,
               exclude_seeds=bool(query.from_nodes), intent=intent.relation)

    rerank = reranker is not None and bool(text) and not wanted
    shown = max(top_k, reranker.top_n) if rerank else top_k  # the reranker sees top_n
    ranked = rank(index, hits, qvec, wanted, shown, settings, current=wants_current(text), query=text,
                  listing=intent.listing, namespaces=namespaces)
    show_turns(index, ranked, fused, text, settings.other_speaker_factor,
               settings.asking_factor)
    nodes = [node_json(index, h) for h in ranked]
    reranked_by = None
    if rerank and len(nodes) > 1:
        try:
            order = rerank_order(reranker, text, nodes)
        except AlayaError as exc:
            warnings.append(f"reranker unavailable ({exc.message}): kept the offline order")
        else:
            node_of = {id(h): n for h, n in zip(ranked, nodes, strict=True)}
            ranked = [ranked[i] for i in order]
            if settings.diversify:  # the model's order, still one slot per new session
                ranked = diversify(index, ranked, intent.listing)
            nodes = [node_of[id(h)] for h in ranked]
            reranked_by = reranker.id
    ranked, nodes = ranked[:top_k], nodes[:top_k]
    warnings += flag_warnings(nodes)
    explorable = explorable_relations(index, ranked, wanted, text, {h.node for h in ranked},
                                      namespaces)
    fresh = visible_changes(index.staleness(state_dir.parent, [
        (h.node, n["path"]) for h, n in zip(ranked, nodes, strict=True)]), state_dir.parent,
        caller)
    if fresh.warning():
        warnings.append(fresh.warning())
    latency = (time.perf_counter() - start) * 1000
    result = {
        "query": {"text": query.text, "concepts": list(query.concepts),
                  "relations": list(query.relations), "depth": depth,
                  "from_nodes": list(query.from_nodes), "top_k": top_k, "mode": query.mode},
        "nodes": nodes,
        "explorable": explorable,
        "h_distance_avg": round(sum(n["h_distance"] for n in nodes) / len(nodes), 4)
        if nodes else None,
        "latency_ms": round(latency, 1),
        "build": index.build.build_id,
        "compiled_at": index.compiled_at,
        # the vault changed since this build (None: the build cannot tell); what changed
        "stale": fresh.stale,
        "changed_notes": fresh.paths[:SHOWN],
        "reranker": reranked_by,
        "warnings": warnings,
    }
    if telemetry:
        from vault_engine.errors import WriteRefusedError
        from vault_engine.telemetry import append_event

        event: dict[str, Any] = {
            "ts": now().strftime("%Y-%m-%dT%H:%M:%SZ"),
            "query": query.query_text or ",".join(query.from_nodes),
            "hits": [{"id": n["id"], "score": n["score"], "relevance": relevance(h, ranked),
                      "tier": n["tier"], "depth": n["depth"]} for h, n in zip(ranked, nodes,
                                                                              strict=True)],
            "latency_ms": result["latency_ms"], "expanded": bool(query.expand and depth > 0)}
        if caller.agent:  # whose query it is: its gaps go to that agent's own report
            event["agent"] = caller.agent
        try:
            append_event(state_dir, event)
        except WriteRefusedError as exc:  # the answer stands; only its usage is not counted
            warnings.append(f"this recall was not recorded in telemetry: {exc}")
    return result


def recall_in_vault(root: Path, query: Mapping[str, Any], *, caller: Caller,
                    telemetry: bool = True) -> dict[str, Any]:
    """Recall in the vault at `root` for a query object (the JSON of `alaya recall -`): the
    vault's settings, its configured embedder (BM25 and the graph if there is none)."""
    from vault_engine import artifacts as A
    from vault_engine.config import load_config
    from vault_engine.providers.embedding import get_embedder

    build = A.current_build(root / ".alaya")  # its copy of alaya.toml, parsed (if unchanged)
    config = load_config(root, snapshot=build.config_snapshot() if build else None)
    q = RecallQuery.from_json(query)
    embedder = get_embedder(config) if q.mode != "bm25" else None
    reranker = None
    if config.get("rerank", "provider") != "none":  # off by default: no import, no call
        from vault_engine.providers.rerank import get_reranker

        reranker = get_reranker(config)
    return recall(root / ".alaya", q, embedder=embedder,
                  settings=RecallSettings.from_config(config), telemetry=telemetry,
                  reranker=reranker, caller=caller)


def visible_changes(fresh: Any, root: Path, caller: Caller) -> Any:
    """What a caller is told of the notes changed since the build: an agent hears only of
    notes it may read — as they were compiled and as they are now — never of another
    agent's private ones (their paths are titles); stale only if one of those changed."""
    if caller.is_owner or not fresh.stale:
        return fresh
    import dataclasses

    from vault_engine.store.namespaces import namespace_of_text

    deleted = set(fresh.deleted)

    def readable(rel: str) -> bool:
        if not caller.may_read(fresh.namespaces.get(rel)):
            return False
        if rel in deleted:
            return True
        try:
            with (root / rel).open("rb") as fh:
                head = fh.read(16384).decode("utf-8", "replace")
        except OSError:
            return False
        return caller.may_read(namespace_of_text(head, rel))

    keep = {rel for rel in fresh.paths if readable(rel)}
    return dataclasses.replace(fresh, stale=bool(keep),
                               added=[p for p in fresh.added if p in keep],
                               changed=[p for p in fresh.changed if p in keep],
                               deleted=[p for p in fresh.deleted if p in keep])


def relevance(hit: Hit, ranked: list[Hit]) -> float:
    """How similar a hit is to the query, in [0, 1] (what temperature and promotion average):
    the query's cosine to it when vectors took part, else its score relative to the best hit."""
    if hit.cosine is not None:
        return round(max(0.0, min(1.0, hit.cosine)), 4)
    top = max((h.score for h in ranked), default=0.0)
    return round(max(0.0, min(1.0, hit.score / top)), 4) if top > 0 else 0.0
