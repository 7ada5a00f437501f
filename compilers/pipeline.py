"""The incremental compile driver: vault → a new, complete build under `.alaya/builds/`.

1. scan (compilers/scan.py): stat every note; a file whose size and mtime match the record
   cache is not read; one whose bytes hash the same is not parsed; only changed notes are parsed.
2. tiers from telemetry, recency and `pinned` (vault_engine.care.tiers).
3. units (recall targets) → embeddings for HOT and WARM units through the persistent cache.
4. FAISS indexes per tier, the BM25 index (compilers/lexical.py), the graph (graph.py), the
   agent digest and claims.jsonl (digest.py), the recall arrays (recall_index.py).
5. publish (compilers/publish.py): write the build directory, then swap `current.json`
   (readers never see a mix).

What one compile hands the next lives in compilers/state.py; options and stats in options.py.

Deleted and renamed notes simply disappear from the scan; their records leave the cache.
"""

from __future__ import annotations

import gc
import json
import pickle
import secrets
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vault_engine import artifacts as A
from vault_engine import seal
from vault_engine.config import toml_snapshot
from vault_engine.errors import WriteRefusedError, refused_write
from vault_engine.primitives import now as clock
from vault_engine.providers.embedding import EmbeddingError, get_embedder
from vault_engine.recall.bm25 import pack_shards
from vault_engine.store.frontmatter import format_datetime
from vault_engine.store.vault import Vault

from .digest import audience_digests, digest_header, fingerprint, public_claims
from .embeddings import EmbeddingCache, embed_texts, text_key
from .graph import build_graph, edges_by_source
from .lexical import write_lexical_shards, write_note_documents
from .options import CompileOptions, CompileStats, Timer
from .publish import publish
from .recall_index import write_recall_arrays
from .records import NoteRecord, distinct_keys
from .scan import first_seen_times, scan
from .stamps import folder_stamps, note_stamps, refresh_stamps, write_stamps
from .state import CompileState, signature, units_reusable
from .usage import Usage, read_usage


def compile_vault(vault: Vault, options: CompileOptions | None = None,
                  state: CompileState | None = None) -> CompileStats:
    """Compile the vault's artifacts incrementally and publish them atomically.

    `state` lets a long-running caller (the watcher) keep parsed records and fragments in
    memory between compiles instead of reloading them from `.alaya/cache/`.
    """
    options = options or CompileOptions()
    try:
        return _compile_locked(vault, options, state)
    except Exception as exc:
        refused = _refused(exc, vault.state_dir)
        if refused is None:
            raise
        raise refused from exc


def _refused(exc: BaseException, state: Path) -> WriteRefusedError | None:
    """A write the machine refused, anywhere in a compile, as one typed error naming where."""
    where = getattr(exc, "filename", None)
    if where is None:
        where = state / (A.EMBED_CACHE if type(exc).__module__.startswith("sqlite3")
                         else A.BUILDS)
    return refused_write(exc, where)


def _compile_locked(vault: Vault, options: CompileOptions,
                    state: CompileState | None) -> CompileStats:
    from filelock import FileLock

    vault.state_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(vault.state_dir / A.COMPILE_LOCK)):
        # The compile allocates hundreds of thousands of small objects and frees few: the
        # cyclic GC would rescan them all repeatedly for nothing (~30% of the time at 10k).
        enabled = gc.isenabled()
        gc.disable()
        try:
            start = time.perf_counter()
            cstate = state if state is not None else CompileState.load(
                vault.state_dir / A.RECORD_CACHE)
            loaded = time.perf_counter()
            stats = _compile(vault, options, cstate)
            compiled = time.perf_counter()
            if state is None and stats.build:
                cstate.save(vault.state_dir / A.RECORD_CACHE)
            stats.ms["state_load"] = round((loaded - start) * 1000, 1)
            stats.ms["state_save"] = round((time.perf_counter() - compiled) * 1000, 1)
            return stats
        finally:
            if enabled:
                gc.enable()


def _compile(vault: Vault, options: CompileOptions, cstate: CompileState) -> CompileStats:
    stats = CompileStats()
    timer = Timer(stats)
    state = vault.state_dir
    now = options.now or clock()
    now_s = format_datetime(now)
    prev_build = A.current_build(state)
    prev = prev_build.manifest() if prev_build else None

    folders, scan_start = folder_stamps(vault)  # before any note is stated (compilers/stamps.py)
    entries = scan(vault, cstate.entries, stats, full=options.full)
    cstate.entries = entries
    records = distinct_keys(sorted((e[2] for e in entries.values()), key=lambda r: r.path))
    stats.notes = len(records)
    timer.lap("scan")

    first_seen = first_seen_times(prev, records, now_s)
    usage = read_usage(vault, records, first_seen, now)
    tiers = usage.tiers
    timer.lap("tiers")
    embedder = options.embedder or get_embedder(vault.config, batch=True)
    turn_context = bool(vault.config.get("embedding", "turn_context"))
    if _up_to_date(prev, records, usage, embedder.id, stats, options, state) and \
            bool(prev and prev.get("turn_context", True)) == turn_context and \
            _graph_trusted(prev_build, prev, vault.root):
        # Nothing to do: the published build already describes this vault exactly.
        stats.build = ""
        stats.up_to_date = True
        stats.embedder = embedder.id
        for t in A.TIERS:
            stats.tiers[t] = sum(1 for r in records if tiers[r.key].tier == t)
        assert prev is not None
        stats.units = int(prev["counts"]["units"])
        stats.edges = int(prev["counts"]["edges"])
        stats.claims = int(prev["counts"]["claims"])
        stats.vectors = dict(prev["counts"]["vectors"])
        stats.context_vectors = int(prev["counts"].get("context_vectors", 0))
        assert prev_build is not None
        refresh_stamps(prev_build, records, folders,
                       note_stamps(vault, entries, stats.malformed, scan_start))
        timer.total()
        return stats
    import faiss  # only now: an up-to-date vault never pays for these imports
    import numpy as np

    unit_tiers: list[str] = []
    texts: list[str] = []
    contexts: list[str | None] = []
    for rec in records:
        tier = tiers[rec.key].tier
        for u in rec.units:
            unit_tiers.append(tier)
            texts.append(u.embed_text)
            contexts.append(u.context)
    stats.units = len(texts)
    for t in A.TIERS:
        stats.tiers[t] = sum(1 for r in records if tiers[r.key].tier == t)
    timer.lap("units")

    stats.embedder = embedder.id
    known = cstate.known_vectors(embedder.id)
    vec_rows = [i for i, t in enumerate(unit_tiers) if t in ("HOT", "WARM")]
    # session turns that have a turn before them get a second vector: the two read together
    ctx_rows = [i for i in vec_rows if contexts[i]] if turn_context else []
    matrix = ctx_matrix = None
    ecache = EmbeddingCache(state / A.EMBED_CACHE, embedder.id)
    try:
        vec_texts = [texts[i] for i in vec_rows] + [str(contexts[i]) for i in ctx_rows]
        matrix, stats.embedded = embed_texts(vec_texts, embedder, ecache,
                                             progress=options.progress, memory=known)
        if matrix is not None and matrix.size:
            cstate.remember_vectors(embedder.id, [text_key(t) for t in vec_texts], matrix)
            matrix, ctx_matrix = matrix[:len(vec_rows)], matrix[len(vec_rows):]
            stats.context_vectors = len(ctx_rows)
        stats.embed_cached = len(vec_texts) - stats.embedded
    except EmbeddingError as exc:
        stats.embed_error = str(exc)
    finally:
        ecache.close()
    timer.lap("embed")

    build_id = now.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)
    tmp = state / A.BUILDS / (build_id + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        pos = {row: k for k, row in enumerate(vec_rows)}
        for tier in ("HOT", "WARM"):
            if matrix is None or matrix.size == 0:
                stats.vectors[tier] = 0
                continue
            ids = np.array([i for i in vec_rows if unit_tiers[i] == tier], dtype=np.int64)
            index = faiss.IndexIDMap2(faiss.IndexFlatIP(int(matrix.shape[1])))
            if len(ids):
                index.add_with_ids(matrix[[pos[i] for i in ids]], ids)
            faiss.write_index(index, str(tmp / A.VECTORS[tier]))
            stats.vectors[tier] = int(index.ntotal)
        timer.lap("vectors")

        edges = cstate.resolved_edges(records) + usage.co_occurs  # CO_OCCURS: derived from usage
        stats.edges = len(edges)
        out_edges = edges_by_source(edges)
        co_out = edges_by_source(usage.co_occurs)
        frags = [cstate.fragment(rec, tiers[rec.key], out_edges.get(rec.key, ()),
                                 tuple(co_out.get(rec.key, ()))) for rec in records]
        with (tmp / A.UNITS).open("w", encoding="utf-8") as fh:
            fh.writelines(f.units for f in frags)
        # split on "\n" only: JSON keeps U+2028 and friends raw, and splitlines() would cut there
        unit_lines = [line + "\n" for f in frags for line in f.units.split("\n")[:-1]]
        write_recall_arrays(tmp / A.RECALL, records, edges, unit_lines, unit_tiers=unit_tiers,
                            embedder=embedder.id, compiled_at=now_s,
                            context=(ctx_rows, ctx_matrix) if ctx_matrix is not None else None,
                            quality=usage.quality)
        write_stamps(tmp / A.RECALL, records, folders,
                     note_stamps(vault, entries, stats.malformed, scan_start))
        snapshot = toml_snapshot(vault.root)
        if snapshot is not None:  # recall reuses the parse while alaya.toml keeps this text
            (tmp / A.CONFIG_SNAPSHOT).write_text(json.dumps(snapshot, ensure_ascii=False),
                                                 encoding="utf-8")
        timer.lap("units-file")

        if len(cstate.vocab) > 1000 and stats.deleted + stats.parsed > 0:
            cstate.compact_vocab(r.path for r in records)
        # --full takes nothing from the previous build (a build that is broken or planted
        # is replaced whole); otherwise what did not change is copied from it
        source = None if options.full else prev_build
        shard_sigs = write_lexical_shards(tmp / A.LEXICAL, records, cstate, source, prev)
        pack_shards(str(tmp / A.LEXICAL))
        notes_sig = write_note_documents(tmp / A.LEXICAL_NOTES, records, cstate, source, prev)
        timer.lap("lexical")

        tier_names = {k: v.tier for k, v in tiers.items()}
        edges_sig = cstate.edges[0] if cstate.edges else ""
        graph_sig = signature([edges_sig, usage.signature]
                               + [f"{r.key}|{r.title}|{r.kind}|{r.type}|{r.path}|{r.namespace}|"
                                  f"{tier_names[r.key]}" for r in records])
        graph_data = graph_mac = None
        if units_reusable(source, prev, "graph_sig", graph_sig, A.GRAPH) and \
                _graph_trusted(source, prev, vault.root):
            assert prev_build is not None and prev is not None
            graph_data = prev_build.path(A.GRAPH).read_bytes()  # unchanged: copied, seal and all
            graph_mac = (prev.get(A.SEALS) or {}).get(A.GRAPH)
        if graph_data is None:
            graph_data = pickle.dumps(build_graph(records, edges, tier_names), protocol=4)
            graph_mac = seal.sign(vault.root, "graph", graph_data)
        (tmp / A.GRAPH).write_bytes(graph_data)
        del graph_data
        timer.lap("graph")

        header = digest_header(records, edges, [f for f in frags if f.page])
        (tmp / A.DIGEST).write_text(header.replace('"pages":null', '"pages":[' + ",".join(
            f.page for f in frags if f.page) + "]") + "\n", encoding="utf-8")
        stats.claims = sum(f.n_claims for f in frags)
        with (tmp / A.CLAIMS).open("w", encoding="utf-8") as fh:
            fh.writelines(f.claims for f in frags)
        timer.lap("digest")

        manifest = {
            "schema_version": A.SCHEMA_VERSION, "format": A.FORMAT, "build": build_id,
            "compiled_at": now_s,
            "embedder": {"id": embedder.id,
                         "dim": int(matrix.shape[1]) if matrix is not None and matrix.size else None},
            "vectors_complete": stats.embed_error is None,
            "turn_context": turn_context,
            "vault_fingerprint": fingerprint(records),
            "notes": {r.path: {"sha256": r.checksum, "key": r.key, "kind": r.kind,
                               "namespace": r.namespace,
                               "first_seen": first_seen[r.path], "tier": tiers[r.key].tier,
                               "temperature": round(tiers[r.key].temperature, 3)}
                      for r in records},
            "malformed": {m.path: {"line": m.line, "message": m.message} for m in stats.malformed},
            "counts": {"notes": stats.notes, "units": stats.units, "edges": stats.edges,
                       "claims": stats.claims, "tiers": stats.tiers, "vectors": stats.vectors,
                       "context_vectors": stats.context_vectors},
            "lexical_shards": shard_sigs, "notes_lexical_sig": notes_sig, "graph_sig": graph_sig,
            "usage_sig": usage.signature,
            A.SEALS: {A.GRAPH: graph_mac},  # the graph's MAC under this machine's key (seal.py)
        }
        stats.build = build_id
        timer.lap("manifest")
        publish(state, tmp, build_id, manifest, stats, timer,
                digests=audience_digests(records, tiers, out_edges, frags),
                claims=public_claims(records, frags))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # a build is published whole or not at all
        raise
    return stats


def graph_in_memory(vault: Vault) -> Any:
    """The graph a compile would publish now, built in memory and never written: for a
    machine without a usable key, which never unpickles `graph.pickle` (seal.py)."""
    entries = scan(vault, {}, CompileStats(), full=True)
    records = sorted((e[2] for e in entries.values()), key=lambda r: r.path)
    now = clock()
    prev_build = A.current_build(vault.state_dir)
    prev = prev_build.manifest() if prev_build else None
    usage = read_usage(vault, records, first_seen_times(prev, records, format_datetime(now)), now)
    edges = CompileState().resolved_edges(records) + usage.co_occurs
    return build_graph(records, edges, {k: v.tier for k, v in usage.tiers.items()})


def _graph_trusted(prev_build: A.Build | None, prev: dict[str, Any] | None, root: Path) -> bool:
    """May the previous build's graph be kept? Only if this machine sealed it — checked on its
    bytes, never unpickled. Without a key nothing is ever unpickled, so any graph may stay
    (it is sealed once a key exists)."""
    if prev_build is None or prev is None:
        return False
    return seal.machine_key(root) is None or prev_build.graph_sealed(prev)


def _up_to_date(prev: dict[str, Any] | None, records: Sequence[NoteRecord], usage: Usage,
                embedder_id: str, stats: CompileStats, options: CompileOptions, state: Path) -> bool:
    """Does the published build already describe this vault exactly — its notes, and what
    usage makes of them (tiers, temperatures to 3 decimals, quality, CO_OCCURS)?"""
    if prev is None or options.full or stats.parsed or stats.deleted or stats.malformed:
        return False
    if prev.get("embedder", {}).get("id") != embedder_id or not prev.get("vectors_complete"):
        return False
    if prev.get("malformed") or prev.get("format") != A.FORMAT:
        return False
    if prev.get("usage_sig") != usage.signature:
        return False
    if not (state / A.PUBLIC_DIGEST).exists() or not (state / A.PUBLIC_CLAIMS).exists():
        return False  # the agents' digests are missing (deleted, or an older alaya)
    notes = prev.get("notes", {})
    if len(notes) != len(records):
        return False
    tiers = usage.tiers
    return all(notes.get(r.path, {}).get("sha256") == r.checksum
               and notes[r.path].get("tier") == tiers[r.key].tier
               and notes[r.path].get("temperature") == round(tiers[r.key].temperature, 3)
               for r in records)
