"""The incremental compile driver: vault → a new, complete build under `.alaya/builds/`.

1. scan: stat every note; a file whose size and mtime match the record cache is not read; one
   whose bytes hash the same is not parsed; only changed notes are parsed.
2. tiers from telemetry, recency and `pinned` (vault_engine.care.tiers).
3. units (recall targets) → embeddings for HOT and WARM units through the persistent cache.
4. FAISS indexes per tier, the BM25 index, the graph, the agent digest, claims.jsonl.
5. publish: write the build directory, then swap `current.json` (readers never see a mix).

Deleted and renamed notes simply disappear from the scan; their records leave the cache.
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import json
import os
import pickle
import secrets
import shutil
import time
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vault_engine import artifacts as A
from vault_engine import telemetry
from vault_engine.care.freshness import CheckResult, check_artifacts  # noqa: F401  (re-export)
from vault_engine.care.tiers import TierInput, TierResult, assign_tiers
from vault_engine.errors import NoteParseError
from vault_engine.providers.embedding import Embedder, EmbeddingError, get_embedder
from vault_engine.recall.bm25 import pack_shards, save_vocab_hashes
from vault_engine.store.frontmatter import format_datetime
from vault_engine.store.links import LinkResolver
from vault_engine.store.notes import checksum, decode_note, parse_note
from vault_engine.store.vault import Vault, atomic_write

from .digest import Fragment, digest_header, fingerprint, make_fragment
from .embeddings import EmbeddingCache, embed_texts, text_key
from .graph import Edge, build_graph, edges_by_source, resolve_edges
from .recall_index import write_recall_arrays
from .records import GRAPH_KINDS, NoteRecord, build_record

Progress = Callable[[str, int, int], None]
RECORD_CACHE_VERSION = 6
KEEP_BUILDS = 2


@dataclass(frozen=True)
class CompileOptions:
    strict: bool = False
    full: bool = False  # re-parse every note (the embedding cache is still used)
    progress: Progress | None = None
    embedder: Embedder | None = None  # default: from alaya.toml / ALAYA_EMBED_*
    now: dt.datetime | None = None


@dataclass
class Malformed:
    path: str
    line: int | None
    message: str
    fix: str


@dataclass
class CompileStats:
    build: str = ""
    notes: int = 0
    parsed: int = 0
    unchanged: int = 0
    deleted: int = 0
    malformed: list[Malformed] = field(default_factory=list)
    units: int = 0
    context_vectors: int = 0  # session turns also embedded with the turn before them
    embedded: int = 0
    embed_cached: int = 0
    embed_error: str | None = None
    vectors: dict[str, int] = field(default_factory=dict)
    tiers: dict[str, int] = field(default_factory=dict)
    edges: int = 0
    claims: int = 0
    embedder: str = ""
    up_to_date: bool = False  # nothing changed: no new build was written
    ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Timer:
    def __init__(self, stats: CompileStats) -> None:
        self.stats = stats
        self.last = time.perf_counter()
        self.start = self.last

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.stats.ms[phase] = round((now - self.last) * 1000, 1)
        self.last = now

    def total(self) -> None:
        self.stats.ms["total"] = round((time.perf_counter() - self.start) * 1000, 1)


@dataclass
class CompileState:
    """What one compile hands the next: parsed records, per-note output fragments and (in a
    long-running watcher) the vectors already looked up. Persisted in `.alaya/cache/`."""

    entries: dict[str, tuple[int, int, NoteRecord]] = field(default_factory=dict)
    fragments: dict[str, Fragment] = field(default_factory=dict)
    # The last build's vectors (text keys + one matrix), so an incremental compile looks up
    # only new text in SQLite. Persisted with the rest (one array pickles fast).
    vector_keys: list[bytes] = field(default_factory=list)
    vector_matrix: Any = None
    vectors_for: str = ""  # the embedder id those vectors belong to
    edges: tuple[str, list[Edge]] | None = None  # (inputs signature, resolved edges)
    edges_reused: bool = False
    link_keys: dict[str, tuple[str, str]] = field(default_factory=dict)  # not persisted
    vocab: dict[str, int] = field(default_factory=dict)  # BM25 token → id, append-only
    vocab_checked: int = 0  # vocabulary size at the last compaction check
    token_ids: dict[str, tuple[str, list[array[int]]]] = field(default_factory=dict)

    def resolved_edges(self, records: Sequence[NoteRecord]) -> list[Edge]:
        """Edges, re-resolved only when a title, alias, path, id or relation changed."""
        sig = _signature(self._link_key(r) for r in records)
        self.edges_reused = self.edges is not None and self.edges[0] == sig
        if not self.edges_reused:
            self.edges = (sig, resolve_edges(records, LinkResolver(records)))
        assert self.edges is not None
        return self.edges[1]

    def _link_key(self, r: NoteRecord) -> str:
        """What of a note decides its edges (cached per checksum: repr is slow at 10k)."""
        cached = self.link_keys.get(r.path)
        if cached is not None and cached[0] == r.checksum:
            return cached[1]
        key = (f"{r.path}|{r.key}|{r.kind}|{r.title}|{r.aliases}|{r.relations}|"
               f"{r.evidence_targets}|{r.source_sessions}")
        self.link_keys[r.path] = (r.checksum, key)
        return key

    def unit_token_ids(self, rec: NoteRecord) -> list[array[int]]:
        """BM25 token ids of a note's units, through the persistent vocabulary."""
        cached = self.token_ids.get(rec.path)
        if cached is not None and cached[0] == rec.checksum:
            return cached[1]
        vocab = self.vocab
        ids = [array("i", [vocab.setdefault(tok, len(vocab)) for tok in u.lexical.split()])
               for u in rec.units]
        self.token_ids[rec.path] = (rec.checksum, ids)
        return ids

    def compact_vocab(self, live_paths: Iterable[str]) -> None:
        """Drop tokens no live note uses once they are a quarter of the vocabulary (checked
        only after the vocabulary grew by half since the last check: the check walks every
        token id)."""
        if len(self.vocab) < 1.5 * self.vocab_checked:
            return
        self.vocab_checked = len(self.vocab)
        live = [self.token_ids[p] for p in live_paths if p in self.token_ids]
        used = {i for _, docs in live for doc in docs for i in doc}
        if len(used) >= 0.75 * len(self.vocab):
            return
        self.vocab = {}
        self.token_ids = {}
        self.vocab_checked = 0

    def fragment(self, rec: NoteRecord, tier: TierResult, out: Sequence[Edge]) -> Fragment:
        # While the resolved edges are those of the last compile (same signature), a note's
        # out-edges cannot have changed: the global signature stands in for its own.
        edges_key = self.edges[0] if self.edges_reused and self.edges else (
            _signature(repr(e) for e in out) if out else "")
        key = (rec.checksum, tier.tier, round(tier.temperature, 3), edges_key)
        old = self.fragments.get(rec.path)
        if old is not None and old.key == key:
            return old
        frag = make_fragment(rec, tier, out, key)
        self.fragments[rec.path] = frag
        return frag

    @classmethod
    def load(cls, path: Path) -> CompileState:
        try:
            with path.open("rb") as fh:
                data = pickle.load(fh)  # our own cache file, written by save()
            if isinstance(data, dict) and data.get("version") == RECORD_CACHE_VERSION:
                return cls(entries=dict(data["records"]), fragments=dict(data["fragments"]),
                           edges=data.get("edges"), vocab=dict(data.get("vocab") or {}),
                           token_ids=dict(data.get("token_ids") or {}),
                           vector_keys=list(data.get("vector_keys") or []),
                           vector_matrix=data.get("vector_matrix"),
                           vectors_for=str(data.get("vectors_for") or ""))
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, KeyError, TypeError):
            pass
        return cls()

    def save(self, path: Path) -> None:
        live = {p: f for p, f in self.fragments.items() if p in self.entries}
        ids = {p: t for p, t in self.token_ids.items() if p in self.entries}
        _save_pickle(path, {"version": RECORD_CACHE_VERSION, "records": self.entries,
                            "fragments": live, "edges": self.edges, "vocab": self.vocab,
                            "token_ids": ids, "vector_keys": self.vector_keys,
                            "vector_matrix": self.vector_matrix,
                            "vectors_for": self.vectors_for})

    def known_vectors(self, embedder_id: str) -> dict[bytes, Any]:
        if self.vectors_for != embedder_id or self.vector_matrix is None:
            return {}
        return dict(zip(self.vector_keys, self.vector_matrix, strict=False))

    def remember_vectors(self, embedder_id: str, keys: list[bytes], matrix: Any) -> None:
        self.vectors_for, self.vector_keys, self.vector_matrix = embedder_id, keys, matrix


def _signature(parts: Iterable[str]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def units_reusable(prev_build: A.Build | None, prev: dict[str, Any] | None, key: str, sig: str,
                   name: str) -> bool:
    """Can the previous build's artifact `name` be reused (same inputs signature)?"""
    return (prev_build is not None and prev is not None and prev.get(key) == sig
            and prev.get("format") == A.FORMAT and prev_build.path(name).exists())


def _save_pickle(path: Path, obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), durable=False)


def scan(vault: Vault, cache: dict[str, tuple[int, int, NoteRecord]], stats: CompileStats,
         full: bool = False) -> dict[str, tuple[int, int, NoteRecord]]:
    """Every note's record, re-parsing only what changed."""
    limit = int(vault.config.get("vault", "max_note_bytes"))
    fresh: dict[str, tuple[int, int, NoteRecord]] = {}
    base = str(vault.root)
    for rel in vault.note_paths():
        full_path = os.path.join(base, rel)
        try:
            st = os.stat(full_path)
        except OSError:
            continue  # deleted between walk and stat
        old = cache.get(rel)
        if not full and old is not None and old[0] == st.st_mtime_ns and old[1] == st.st_size:
            fresh[rel] = old
            stats.unchanged += 1
            continue
        if st.st_size > limit:
            stats.malformed.append(Malformed(rel, None, f"file is {st.st_size:,} bytes, over the "
                                             f"{limit:,}-byte limit", "split it or raise [vault] "
                                             "max_note_bytes"))
            continue
        try:
            with open(full_path, "rb") as fh:
                data = fh.read()
            digest = checksum(data)
            if not full and old is not None and old[2].checksum == digest:
                fresh[rel] = (st.st_mtime_ns, st.st_size, old[2])
                stats.unchanged += 1
                continue
            note = parse_note(rel, decode_note(data, rel), check=digest)
        except NoteParseError as exc:
            stats.malformed.append(Malformed(rel, exc.line, exc.message, exc.fix or ""))
            continue
        except OSError as exc:
            stats.malformed.append(Malformed(rel, None, f"cannot read: {exc.strerror}",
                                             "check the file's permissions"))
            continue
        fresh[rel] = (st.st_mtime_ns, st.st_size, build_record(note))
        stats.parsed += 1
    stats.deleted = len(set(cache) - set(fresh))
    return fresh


def _first_seen(prev: dict[str, Any] | None, records: list[NoteRecord], now: str) -> dict[str, str]:
    old = (prev or {}).get("notes", {})
    return {r.path: (old.get(r.path) or {}).get("first_seen") or now for r in records}


def _parse_time(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def compile_vault(vault: Vault, options: CompileOptions | None = None,
                  state: CompileState | None = None) -> CompileStats:
    """Compile the vault's artifacts incrementally and publish them atomically.

    `state` lets a long-running caller (the watcher) keep parsed records and fragments in
    memory between compiles instead of reloading them from `.alaya/cache/`.
    """
    from filelock import FileLock

    options = options or CompileOptions()
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
    timer = _Timer(stats)
    state = vault.state_dir
    now = options.now or dt.datetime.now(dt.UTC).replace(microsecond=0)
    now_s = format_datetime(now)
    prev_build = A.current_build(state)
    prev = prev_build.manifest() if prev_build else None

    entries = scan(vault, cstate.entries, stats, full=options.full)
    cstate.entries = entries
    records = sorted((e[2] for e in entries.values()), key=lambda r: r.path)
    stats.notes = len(records)
    timer.lap("scan")

    first_seen = _first_seen(prev, records, now_s)
    note_stats = telemetry.note_stats(state)
    inputs = []
    for rec in records:
        created = max(filter(None, (_parse_time(rec.created), _parse_time(first_seen[rec.path]))),
                      default=now)
        inputs.append(TierInput(rec.key, created, rec.pinned))
    tiers = assign_tiers(inputs, note_stats, now, vault.config.section("tiers"))
    timer.lap("tiers")
    embedder = options.embedder or get_embedder(vault.config, batch=True)
    turn_context = bool(vault.config.get("embedding", "turn_context"))
    if _up_to_date(prev, records, tiers, embedder.id, stats, options) and \
            bool(prev and prev.get("turn_context", True)) == turn_context:
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

    edges = cstate.resolved_edges(records)
    stats.edges = len(edges)
    out_edges = edges_by_source(edges)
    frags = [cstate.fragment(rec, tiers[rec.key], out_edges.get(rec.key, ())) for rec in records]
    with (tmp / A.UNITS).open("w", encoding="utf-8") as fh:
        fh.writelines(f.units for f in frags)
    # split on "\n" only: JSON keeps U+2028 and friends raw, and splitlines() would cut there
    unit_lines = [line + "\n" for f in frags for line in f.units.split("\n")[:-1]]
    write_recall_arrays(tmp / A.RECALL, records, edges, unit_lines, unit_tiers=unit_tiers,
                        embedder=embedder.id, compiled_at=now_s,
                        context=(ctx_rows, ctx_matrix) if ctx_matrix is not None else None)
    timer.lap("units-file")

    # one document per note of several units (a whole session); for a one-unit note it would
    # repeat the unit index. Row i is graph node lexical-notes/nodes.npy[i]. Its own signature:
    # editing a card leaves it as it was.
    graph_recs = [rec for rec in records if rec.kind in GRAPH_KINDS]
    multi = [(n, rec) for n, rec in enumerate(graph_recs) if len(rec.units) > 1]
    notes_sig = _signature(f"{n}|{rec.path}|" + "\x01".join(u.lexical for u in rec.units)
                           for n, rec in multi)
    if len(cstate.vocab) > 1000 and stats.deleted + stats.parsed > 0:
        cstate.compact_vocab(r.path for r in records)
    shard_sigs = write_lexical_shards(tmp / A.LEXICAL, records, cstate, prev_build, prev)
    pack_shards(str(tmp / A.LEXICAL))
    if units_reusable(prev_build, prev, "notes_lexical_sig", notes_sig, A.LEXICAL_NOTES):
        shutil.copytree(prev_build.path(A.LEXICAL_NOTES),  # type: ignore[union-attr]
                        tmp / A.LEXICAL_NOTES)
    elif multi:
        note_docs = [array("i", [t for ids in cstate.unit_token_ids(rec) for t in ids])
                     for _, rec in multi]
        build_lexical(tmp / A.LEXICAL_NOTES, note_docs, cstate.vocab)
        np.save(tmp / A.LEXICAL_NOTES / "nodes.npy",
                np.array([n for n, _ in multi], dtype=np.int32))
    timer.lap("lexical")

    tier_names = {k: v.tier for k, v in tiers.items()}
    edges_sig = cstate.edges[0] if cstate.edges else ""
    graph_sig = _signature([edges_sig]
                           + [f"{r.key}|{r.title}|{r.kind}|{r.type}|{r.path}|{r.namespace}|"
                              f"{tier_names[r.key]}" for r in records])
    if units_reusable(prev_build, prev, "graph_sig", graph_sig, A.GRAPH):
        shutil.copyfile(prev_build.path(A.GRAPH), tmp / A.GRAPH)  # type: ignore[union-attr]
    else:
        graph = build_graph(records, edges, tier_names)
        with (tmp / A.GRAPH).open("wb") as fh:
            pickle.dump(graph, fh, protocol=4)
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
                           "first_seen": first_seen[r.path], "tier": tiers[r.key].tier}
                  for r in records},
        "malformed": {m.path: {"line": m.line, "message": m.message} for m in stats.malformed},
        "counts": {"notes": stats.notes, "units": stats.units, "edges": stats.edges,
                   "claims": stats.claims, "tiers": stats.tiers, "vectors": stats.vectors,
                   "context_vectors": stats.context_vectors},
        "lexical_shards": shard_sigs, "notes_lexical_sig": notes_sig, "graph_sig": graph_sig,
    }
    stats.build = build_id
    timer.lap("manifest")
    _publish(state, tmp, build_id, manifest, stats, timer)
    return stats


def _up_to_date(prev: dict[str, Any] | None, records: Sequence[NoteRecord],
                tiers: dict[str, TierResult], embedder_id: str, stats: CompileStats,
                options: CompileOptions) -> bool:
    if prev is None or options.full or stats.parsed or stats.deleted or stats.malformed:
        return False
    if prev.get("embedder", {}).get("id") != embedder_id or not prev.get("vectors_complete"):
        return False
    if prev.get("malformed") or prev.get("format") != A.FORMAT:
        return False
    notes = prev.get("notes", {})
    if len(notes) != len(records):
        return False
    return all(notes.get(r.path, {}).get("sha256") == r.checksum
               and notes[r.path].get("tier") == tiers[r.key].tier for r in records)


def _publish(state: Path, tmp: Path, build_id: str, manifest: dict[str, Any],
             stats: CompileStats, timer: _Timer) -> None:
    timer.lap("publish")
    timer.total()
    manifest["timings_ms"] = stats.ms
    (tmp / A.MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, separators=(",", ":"))
                                  + "\n",
                                  encoding="utf-8")
    final = state / A.BUILDS / build_id
    os.replace(tmp, final)
    atomic_write(state / A.CURRENT, json.dumps({"schema": A.SCHEMA_VERSION,
                                                "build": build_id}).encode())
    builds = sorted((p for p in (state / A.BUILDS).iterdir() if p.is_dir()),
                    key=lambda p: p.stat().st_mtime_ns)
    for old in builds[:-KEEP_BUILDS]:
        if old.name != build_id:
            shutil.rmtree(old, ignore_errors=True)


def build_lexical(path: Path, docs: Sequence[Sequence[int]], vocab: dict[str, int]) -> None:
    """BM25 (bm25s) over documents given as ids of the persistent vocabulary.

    Passing ids skips bm25s's own string → id pass over every token; the ids are renumbered
    to the tokens these documents use, so each saved index carries only its own vocabulary.
    """
    import bm25s
    from bm25s.tokenization import Tokenized

    used = sorted({i for doc in docs for i in doc})
    local = {g: n for n, g in enumerate(used)}
    inverse = {i: t for t, i in vocab.items()}
    retriever = bm25s.BM25()
    shard_vocab = {inverse[g]: n for g, n in local.items()}
    retriever.index(Tokenized(ids=[[local[i] for i in doc] for doc in docs], vocab=shard_vocab),
                    show_progress=False)
    retriever.save(str(path), show_progress=False)
    save_vocab_hashes(str(path), shard_vocab)  # recall looks tokens up without the JSON


SHARD_UNITS = 2500  # units per BM25 shard, roughly


def _shard_count(n_units: int, prev: dict[str, Any] | None) -> int:
    """How many BM25 shards: about one per SHARD_UNITS units, kept while within 2× of the
    previous count, so a growing vault does not reshuffle every shard on each compile."""
    ideal = max(1, round(n_units / SHARD_UNITS))
    before = len((prev or {}).get("lexical_shards") or [])
    if before and before / 2 <= ideal <= before * 2:
        return before
    return ideal


def write_lexical_shards(folder: Path, records: Sequence[NoteRecord], cstate: CompileState,
                         prev_build: A.Build | None, prev: dict[str, Any] | None) -> list[str]:
    """The BM25 index in shards (`shard-NN/` + `units.npy`, the global unit id of each row).

    A note's units all go to one shard (by a hash of its path), and only shards whose
    documents changed are rebuilt: one edit rebuilds one shard. Scores come from each shard's
    own statistics — over thousands of randomly assigned units those match the whole vault's
    closely (search engines score shards the same way); below SHARD_UNITS there is one shard.
    """
    import numpy as np

    n_units = sum(len(r.units) for r in records)
    count = _shard_count(n_units, prev)
    members: list[list[NoteRecord]] = [[] for _ in range(count)]
    unit_ids: list[list[int]] = [[] for _ in range(count)]
    row = 0
    for rec in records:
        k = int(hashlib.blake2b(rec.path.encode(), digest_size=4).hexdigest(), 16) % count
        members[k].append(rec)
        unit_ids[k].extend(range(row, row + len(rec.units)))
        row += len(rec.units)
    old = (prev or {}).get("lexical_shards") or []
    same_format = prev is not None and prev.get("format") == A.FORMAT
    sigs = []
    for k in range(count):
        sig = _signature(u.lexical for rec in members[k] for u in rec.units)
        sigs.append(sig)
        if not unit_ids[k]:
            continue
        dest = folder / f"shard-{k:02d}"
        source = prev_build.path(A.LEXICAL) / dest.name if prev_build else None
        if same_format and len(old) == count and old[k] == sig and source and source.exists():
            shutil.copytree(source, dest)
        else:
            build_lexical(dest, [ids for rec in members[k] for ids in cstate.unit_token_ids(rec)],
                          cstate.vocab)
        np.save(dest / "units.npy", np.array(unit_ids[k], dtype=np.int64))
    return sigs


