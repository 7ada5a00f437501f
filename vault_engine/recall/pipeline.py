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

import datetime as dt
import json
import mmap
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_engine import artifacts as A
from vault_engine.errors import AlayaError, UsageError
from vault_engine.primitives import fit_lines, to_datetime
from vault_engine.store.relations import query_relations, relation_similarity

SESSION_TURN_WEIGHTS = (1.0, 0.5, 0.25)  # a session scores from its best three turns
COMMON_TERM_RATIO = 0.35  # query words in more than this share of units leave the dense query


class NotCompiledError(AlayaError):
    """There are no artifacts to recall from."""


@dataclass(frozen=True)
class RecallQuery:
    text: str = ""
    concepts: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    depth: int | None = None
    from_nodes: tuple[str, ...] = ()
    top_k: int | None = None
    namespaces: tuple[str, ...] = ()
    all_namespaces: bool = False
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    as_of: dt.datetime | None = None
    mode: str = "hybrid"  # hybrid | bm25 | vector
    expand: bool = True

    @property
    def query_text(self) -> str:
        return " ".join(x for x in (self.text, *self.concepts) if x).strip()

    @classmethod
    def from_json(cls, obj: Any) -> RecallQuery:
        """The agent JSON mode: {"query"|"text", "concepts", "relations", "depth",
        "from_nodes", "top_k", "namespace", "type", "tag", "kind", "as_of"}."""
        if not isinstance(obj, Mapping):
            raise UsageError("recall JSON input must be an object",
                             fix='e.g. {"concepts": ["gateway restart"], "relations": ["CAUSED_BY"]}')

        def strs(key: str, *alts: str) -> tuple[str, ...]:
            for k in (key, *alts):
                v = obj.get(k)
                if v is None:
                    continue
                if isinstance(v, str):
                    return tuple(x.strip() for x in v.split(",") if x.strip())
                if isinstance(v, list) and all(isinstance(x, str) for x in v):
                    return tuple(v)
                raise UsageError(f"`{k}` must be a string or a list of strings",
                                 fix=f'"{k}": ["…"]')
            return ()

        def integer(key: str) -> int | None:
            v = obj.get(key)
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise UsageError(f"`{key}` must be a non-negative integer", fix=f'"{key}": 2')
            return v

        known = {"query", "text", "concepts", "relations", "rel", "depth", "from_nodes",
                 "top_k", "namespace", "namespaces", "type", "types", "tag", "tags", "kind",
                 "kinds", "as_of", "mode", "all_namespaces"}
        unknown = set(obj) - known
        if unknown:
            raise UsageError(f"unknown recall keys: {sorted(unknown)}",
                             fix="see docs/recall.md for the JSON input")
        text = obj.get("query", obj.get("text", ""))
        if not isinstance(text, str):
            raise UsageError("`query` must be a string", fix='"query": "…"')
        as_of = parse_as_of(obj["as_of"]) if obj.get("as_of") else None
        return cls(text=text, concepts=strs("concepts"), relations=tuple(
            r.upper() for r in strs("relations", "rel")), depth=integer("depth"),
            from_nodes=strs("from_nodes"), top_k=integer("top_k"),
            namespaces=strs("namespace", "namespaces"), types=strs("type", "types"),
            tags=strs("tag", "tags"), kinds=strs("kind", "kinds"), as_of=as_of,
            mode=str(obj.get("mode") or "hybrid"),
            all_namespaces=bool(obj.get("all_namespaces")))


def parse_as_of(value: Any) -> dt.datetime:
    when = to_datetime(value)
    if when is None:
        raise UsageError(f"--as-of {value!r} is not a date", fix="use YYYY-MM-DD or ISO 8601")
    return when


@dataclass
class Hit:
    node: int
    score: float
    units: list[tuple[int, float]] = field(default_factory=list)  # (unit, fused score)
    depth: int = 0
    matched_rel: str | None = None
    rel_similarity: float | None = None
    via: int | None = None
    cosine: float | None = None
    h: float = 0.0


class RecallIndex:
    """The artifacts recall needs, opened lazily and memory-mapped. Cheap to keep resident."""

    def __init__(self, build: A.Build, *, resident: bool = False) -> None:
        import numpy as np

        self.build = build
        # resident (alaya serve): the HOT index is read into RAM once; a one-shot process
        # memory-maps every tier instead of reading vectors it will mostly not touch
        self.resident = resident
        folder = build.path(A.RECALL)
        if not folder.exists():
            raise NotCompiledError("the artifacts predate recall support",
                                   fix="run `alaya compile` again")
        self.folder = folder
        # small facts every query needs; the node list (large) is read only when asked for
        info = json.loads((folder / "info.json").read_text(encoding="utf-8"))
        self.rel_types: list[str] = info["relation_types"]
        self.embedder_id: str | None = info.get("embedder")
        self.compiled_at: str | None = info.get("compiled_at")
        self.n_nodes = int(info["nodes"])
        self._meta: dict[str, Any] | None = None

        def load(name: str) -> Any:
            return np.load(folder / name, mmap_mode="r")

        self.unit_offsets = load("unit_offsets.npy")
        # small and hit on every query: in RAM, not memory-mapped (element access on a memmap
        # costs a Python call each)
        self.unit_node = np.array(load("unit_node.npy"))
        self.node_unit = np.array(load("node_unit.npy"))
        self.node_units = np.bincount(self.unit_node[self.unit_node >= 0],
                                      minlength=self.n_nodes)
        # per-unit namespace and tier (builds since format 7; older ones decode the row)
        self.namespaces: list[str] = info.get("namespaces") or []
        self.unit_ns = np.array(load("unit_ns.npy")) if (folder / "unit_ns.npy").exists() \
            else None
        self.unit_tier = np.array(load("unit_tier.npy")) \
            if (folder / "unit_tier.npy").exists() else None
        self.adj = {d: (load(f"{d}_indptr.npy"), load(f"{d}_indices.npy"),
                        load(f"{d}_types.npy"), load(f"{d}_weights.npy")) for d in ("out", "in")}
        self._units_fh = build.path(A.UNITS).open("rb")
        size = build.path(A.UNITS).stat().st_size
        self._units = mmap.mmap(self._units_fh.fileno(), 0, access=mmap.ACCESS_READ) \
            if size else b""
        self._rows: dict[int, dict[str, Any]] = {}
        self._vec: dict[str, Any] = {}
        self._context: Any = None
        self._lexical: Any = None

    # -- nodes ----------------------------------------------------------------------------
    @property
    def meta(self) -> dict[str, Any]:
        if self._meta is None:
            self._meta = json.loads((self.folder / "meta.json").read_text(encoding="utf-8"))
            self._meta["index"] = {k: i for i, k in enumerate(self._meta["nodes"])}
        return self._meta

    @property
    def node_index(self) -> dict[str, int]:
        return self.meta["index"]  # type: ignore[no-any-return]

    def node_key(self, node: int) -> str:
        """A node's id — from one of its unit rows when it has units (no need for the list)."""
        unit = int(self.node_unit[node])
        return str(self.row(unit)["note"]) if unit >= 0 else str(self.meta["nodes"][node])

    def node_kind(self, node: int) -> str:
        unit = int(self.node_unit[node])
        return str(self.row(unit)["kind"]) if unit >= 0 else str(self.meta["kinds"][node])

    # -- rows and vectors ---------------------------------------------------------------
    def row(self, unit: int) -> dict[str, Any]:
        row = self._rows.get(unit)
        if row is None:
            start, end = int(self.unit_offsets[unit]), int(self.unit_offsets[unit + 1])
            row = json.loads(self._units[start:end])
            self._rows[unit] = row
        return row

    @property
    def n_units(self) -> int:
        return len(self.unit_offsets) - 1

    def vectors(self, tier: str) -> Any:
        if tier not in self._vec:
            index = self.build.vector_index(tier, mmap=not (tier == "HOT" and self.resident))
            self._vec[tier] = index
        return self._vec[tier]

    def unit_vector(self, unit: int) -> Any:
        tier: Any = ("HOT", "WARM", "COLD")[int(self.unit_tier[unit])] \
            if self.unit_tier is not None else self.row(unit).get("tier")
        index = self.vectors(tier) if tier in ("HOT", "WARM") else None
        if index is None:
            return None
        try:
            return index.reconstruct(int(unit))
        except RuntimeError:
            return None

    def context(self) -> tuple[Any, Any] | None:
        """(row of each unit in the context vectors or -1, the context vectors): session turns
        read with the turn before them. None when the build has none."""
        if self._context is None:
            import numpy as np

            path = self.folder / "context_vectors.npy"
            if not path.exists():
                self._context = False
            else:
                # resident (serve): read into RAM once; a one-shot recall maps them
                rows_path = self.folder / "context_row.npy"
                self._context = (np.load(rows_path), np.load(path)) if self.resident else (
                    np.load(rows_path, mmap_mode="r"), np.load(path, mmap_mode="r"))
        return self._context or None

    def doc_freq(self, token: str) -> int:
        """How many units contain a token (summed over the shards' sparse columns)."""
        if not hasattr(self, "_df"):
            from .bm25 import open_doc_freq

            self._df = open_doc_freq(str(self.build.path(A.LEXICAL)))
        if self._df is not None:
            import numpy as np

            from .bm25 import token_hash

            hashes, dfs = self._df
            h = np.uint64(token_hash(token))
            i = int(np.searchsorted(hashes, h))
            return int(dfs[i]) if i < len(hashes) and hashes[i] == h else 0
        total = 0
        for retriever, _units in self.lexical():
            for token_id in retriever.ids_for([token]):
                indptr = retriever.indptr
                total += int(indptr[token_id + 1] - indptr[token_id])
        return total

    def notes_lexical(self) -> Any:
        if not hasattr(self, "_notes_lexical"):
            import numpy as np

            from .bm25 import SavedBM25

            path = self.build.path(A.LEXICAL_NOTES)
            present = (path / "nodes.npy").exists()
            self._notes_lexical = SavedBM25(str(path)) if present else False
            self.notes_lexical_nodes = np.load(path / "nodes.npy") if present else None
        return self._notes_lexical

    def notes_lexical_rows(self) -> dict[int, int] | None:
        """Graph node → its row in the whole-note BM25 index (built once per index)."""
        if not hasattr(self, "_note_rows"):
            nodes = self.notes_lexical_nodes if self.notes_lexical() else None
            self._note_rows = None if nodes is None else {
                int(n): i for i, n in enumerate(nodes.tolist())}
        return self._note_rows

    def lexical(self) -> list[tuple[Any, Any]]:
        """The BM25 shards: (SavedBM25 of a bm25s index, global unit id of each of its documents)."""
        if self._lexical is None:
            import numpy as np

            from .bm25 import SavedBM25, open_pack

            root = self.build.path(A.LEXICAL)
            packed = open_pack(str(root), resident=self.resident) if root.exists() else None
            if packed is not None:
                self._lexical = packed
                return packed
            shards = []
            for folder in sorted(root.glob("shard-*")) if root.exists() else []:
                shards.append((SavedBM25(str(folder)),
                               np.load(folder / "units.npy")))
            self._lexical = shards
        return self._lexical  # type: ignore[no-any-return]

    # -- graph ----------------------------------------------------------------------------
    def neighbours(self, node: int, direction: str = "out") -> Iterable[tuple[int, str, float]]:
        indptr, indices, types, weights = self.adj[direction]
        for j in range(int(indptr[node]), int(indptr[node + 1])):
            yield int(indices[j]), self.rel_types[int(types[j])], float(weights[j])


_INDEX_CACHE: dict[str, RecallIndex] = {}


def open_index(state_dir: Path, *, resident: bool = False) -> RecallIndex:
    """The current build's RecallIndex (kept per build id, so a resident process reuses it)."""
    build = A.current_build(state_dir)
    if build is None:
        raise NotCompiledError("the vault has not been compiled yet",
                               fix="run `alaya compile` (or keep `alaya watch` running)")
    cached = _INDEX_CACHE.get(str(build.root))
    if cached is None:
        _INDEX_CACHE.clear()
        cached = RecallIndex(build, resident=resident)
        _INDEX_CACHE[str(build.root)] = cached
    return cached


@dataclass
class RecallSettings:
    alpha: float = 0.5
    beta: float = 0.3
    gamma: float = 0.2
    rrf_k: int = 60
    top_k: int = 10
    depth: int = 1
    rel_threshold: float = 0.75
    mmr_lambda: float = 0.7
    default_namespace: str = "shared"
    fusion: str = "weighted"  # weighted | rrf (docs/recall.md: why weighted is the default)
    dense_weight: float = 0.7  # weighted fusion: share of the dense score
    context_weight: float = 0.5  # share of a turn's dense score read with the turn before it
    session_bm25_weight: float = 0.4  # a note's BM25 evidence over all its units
    date_weight: float = 0.3  # notes dated on a day or month the query names
    complete_scores: bool = True  # score every candidate on both sides (see _complete)

    @classmethod
    def from_config(cls, config: Any) -> RecallSettings:
        r = config.section("recall")
        return cls(alpha=r["alpha"], beta=r["beta"], gamma=r["gamma"], rrf_k=r["rrf_k"],
                   top_k=r["top_k"], depth=r["depth"],
                   rel_threshold=r["rel_similarity_threshold"], mmr_lambda=r["mmr_lambda"],
                   default_namespace=config.get("vault", "default_namespace"),
                   fusion=r["fusion"], dense_weight=r["dense_weight"],
                   context_weight=r["context_weight"],
                   session_bm25_weight=r["session_bm25_weight"], date_weight=r["date_weight"])


def _rank_vector(index: RecallIndex, qvec: Any, k: int) -> list[tuple[int, float]]:
    import numpy as np

    out: list[tuple[int, float]] = []
    q = np.asarray(qvec, dtype=np.float32).reshape(1, -1)
    for tier in ("HOT", "WARM"):
        idx = index.vectors(tier)
        if idx is None or idx.ntotal == 0:
            continue
        if idx.d != q.shape[1]:
            raise NotCompiledError(f"the query vector has {q.shape[1]} dimensions, the index "
                                   f"{idx.d}", fix="compile again with the current embedder")
        scores, ids = idx.search(q, min(k, idx.ntotal))
        out += [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
    out.sort(key=lambda x: -x[1])
    return out[:k]


def _lexical_scores(index: RecallIndex, text: str) -> Any:
    """BM25 score of every unit for `text` (None when nothing in the query is indexed)."""
    import numpy as np

    from .bm25 import tokenize

    shards = index.lexical()
    tokens = tokenize(text)
    if not shards or not tokens:
        return None
    scores = np.zeros(index.n_units, dtype=np.float32)
    found = False
    for retriever, units in shards:
        ids = retriever.ids_for(tokens)
        if ids:
            scores[units] = retriever.get_scores(ids)
            found = True
    return scores if found else None


def _rank_lexical(scores: Any, k: int) -> list[tuple[int, float]]:
    import numpy as np

    if scores is None:
        return []
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return sorted(((int(i), float(scores[i])) for i in top if scores[i] > 0),
                  key=lambda x: -x[1])


def _node_lexical(index: RecallIndex, text: str) -> Any:
    """BM25 over whole notes (a session as one document), scaled 0–1: a session whose turns
    together cover the query's words, even if no single turn does."""

    from .bm25 import tokenize

    retriever = index.notes_lexical()
    if not retriever:
        return {}
    ids = retriever.ids_for(tokenize(text))
    if not ids:
        return {}
    scores = retriever.get_scores(ids)
    top = float(scores.max()) if len(scores) else 0.0
    if top <= 0:
        return {}
    rows = index.notes_lexical_rows()
    if rows is None:
        return {}
    return _Scaled(scores, rows, top)


class _Scaled:
    """A note's whole-note BM25 scaled 0–1, looked up only for the notes that are candidates
    (building a dict over every matching note costs more than the rest of the scoring)."""

    def __init__(self, scores: Any, rows: dict[int, int], top: float) -> None:
        self.scores, self.rows, self.top = scores, rows, top

    def get(self, node: int, default: float = 0.0) -> float:
        row = self.rows.get(node)
        return default if row is None else float(self.scores[row]) / self.top


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_DATE_IN_QUERY_RE = re.compile(
    r"(?i)\b(?:(\d{1,2})\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
    r"(?:\s+(\d{1,2})(?:st|nd|rd|th)?)?(?:,?\s+(\d{4}))?\b|\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")


def dates_in_query(text: str) -> list[tuple[int | None, int, int | None]]:
    """(year, month, day) the query names ("in May 2023", "on 8 May", "2023-05-08")."""
    out = []
    for m in _DATE_IN_QUERY_RE.finditer(text or ""):
        if m.group(2):
            month = [x[:3] for x in _MONTHS].index(m.group(2).lower()[:3]) + 1
            if m.group(2).lower() == "may" and not (m.group(1) or m.group(3) or m.group(4)):
                continue  # "may" alone is a verb far more often than a month
            day = m.group(1) or m.group(3)
            out.append((int(m.group(4)) if m.group(4) else None, month,
                        int(day) if day else None))
        else:
            out.append((int(m.group(5)), int(m.group(6)),
                        int(m.group(7)) if m.group(7) else None))
    return out


def _date_match(when: str | None, dates: Sequence[tuple[int | None, int, int | None]]) -> float:
    stamp = to_datetime(when)
    if stamp is None:
        return 0.0
    best = 0.0
    for year, month, day in dates:
        if stamp.month != month or (year is not None and stamp.year != year):
            continue
        best = max(best, 1.0 if day is None or abs(stamp.day - day) <= 1 else 0.5)
    return best


def _weighted(rankings: Sequence[tuple[float, list[tuple[int, float]]]]) -> dict[int, float]:
    """Score fusion: each ranking's scores scaled to 0–1 (by its best), weighted, summed."""
    fused: dict[int, float] = {}
    for weight, ranking in rankings:
        if not ranking:
            continue
        top = max(s for _, s in ranking) or 1.0
        low = min(s for _, s in ranking)
        span = (top - low) or top or 1.0
        for unit, score in ranking:
            fused[unit] = fused.get(unit, 0.0) + weight * (score - low) / span
    return fused


def dense_query(index: RecallIndex, text: str) -> str:
    """The query without words that nearly every unit contains (speaker names at the start of
    every turn, a project's own name): they pull every passage equally close and drown what
    the question is about. BM25 weighs them down by itself; the dense side cannot."""
    from .bm25 import tokenize

    if not index.lexical():
        return text
    n = max(1, index.n_units)
    words = re.findall(r"[\w'’-]+|[^\w\s]", text)
    kept = []
    for word in words:
        toks = tokenize(word)
        common = any(index.doc_freq(t) / n > COMMON_TERM_RATIO for t in toks)
        if not common:
            kept.append(word)
    out = " ".join(kept).strip()
    return out or text


def _complete(index: RecallIndex, rankings: list[list[tuple[int, float]]], lexical: Any,
              qvec: Any) -> list[list[tuple[int, float]]]:
    """Both scores for every candidate: a unit one retriever found but the other ranked below
    its cut-off gets its real score from the other side (its BM25 score is already computed;
    its cosine is one reconstructed vector away) instead of nothing."""
    import numpy as np

    vec, lex = rankings
    seen_vec = {u for u, _ in vec}
    q = np.asarray(qvec, dtype=np.float32)
    extra = []
    for unit, _ in lex:
        if unit not in seen_vec:
            v = index.unit_vector(unit)
            if v is not None:
                extra.append((unit, float(np.dot(v, q))))
    seen_lex = {u for u, _ in lex}
    lex_extra = [(u, float(lexical[u])) for u, _ in vec if u not in seen_lex and lexical[u] > 0]
    return [sorted(vec + extra, key=lambda x: -x[1]), sorted(lex + lex_extra, key=lambda x: -x[1])]


def _blend_context(index: RecallIndex, ranking: list[tuple[int, float]], qvec: Any,
                   weight: float) -> list[tuple[int, float]]:
    """A turn's dense score blended with the query's cosine to the turn read together with the
    one before it: an answer ("I've had them for three years") is found through the question
    it answers ("How long have you had your turtles?"). Turns without a context vector (a
    session's first turn, cards, entities) keep their own score."""
    import numpy as np

    ctx = index.context()
    if ctx is None or not weight or not ranking:
        return ranking
    rows_of, vectors = ctx
    units = np.fromiter((u for u, _ in ranking), dtype=np.int64, count=len(ranking))
    rows = np.asarray(rows_of[units])
    has = rows >= 0
    if not has.any():
        return ranking
    scores = np.fromiter((s for _, s in ranking), dtype=np.float32, count=len(ranking))
    q = np.asarray(qvec, dtype=np.float32).reshape(-1)
    scores[has] = (1.0 - weight) * scores[has] + weight * (np.asarray(vectors[rows[has]]) @ q)
    order = np.argsort(-scores, kind="stable")
    return [(int(units[i]), float(scores[i])) for i in order]


def _rrf(rankings: Sequence[list[tuple[int, float]]], k: int) -> dict[int, float]:
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, (unit, _score) in enumerate(ranking):
            fused[unit] = fused.get(unit, 0.0) + 1.0 / (k + rank + 1)
    return fused


def _passes(row: Mapping[str, Any], q: RecallQuery, namespaces: set[str] | None) -> bool:
    if namespaces is not None and row.get("namespace", "shared") not in namespaces:
        return False
    if q.types and row.get("type") not in q.types:
        return False
    if q.tags and not set(q.tags) & set(row.get("tags") or []):
        return False
    if q.kinds and row.get("kind") not in q.kinds:
        return False
    if q.as_of is not None:
        valid = row.get("valid") or []
        if valid:
            ok = False
            for start, end in valid:
                s, e = to_datetime(start), to_datetime(end)
                if (s is None or s <= q.as_of) and (e is None or q.as_of < e):
                    ok = True
            if not ok:
                return False
        else:
            when = to_datetime(row.get("when"))
            if when is not None and when > q.as_of:
                return False
    return True


def recall(state_dir: Path, query: RecallQuery, *, embedder: Any = None,
           settings: RecallSettings | None = None, telemetry: bool = True,
           resident: bool = False) -> dict[str, Any]:
    """Run a recall and return the documented JSON object."""
    start = time.perf_counter()
    settings = settings or RecallSettings()
    index = open_index(state_dir, resident=resident)
    top_k = query.top_k or settings.top_k
    text = query.query_text
    warnings: list[str] = []
    if not text and not query.from_nodes:
        raise UsageError("nothing to recall: give a query, --concepts or --from-nodes",
                         fix='alaya recall "gateway restart"')
    namespaces: set[str] | None = None
    if not query.all_namespaces:
        namespaces = {"shared", settings.default_namespace, *query.namespaces}

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
                qvec = embedder.embed_query(dense_query(index, text))
            except AlayaError as exc:
                warnings.append(f"embedder unavailable ({exc.message}): answered from BM25 "
                                "and the graph only")
    depth = settings.depth if query.depth is None else query.depth
    k_search = max(200, top_k * 20)
    rankings: list[list[tuple[int, float]]] = []
    cos: dict[int, float] = {}
    if qvec is not None:
        vec = _rank_vector(index, qvec, k_search)
        cos = dict(vec)
        rankings.append(vec)
    lexical_scores = None
    if text and query.mode in ("hybrid", "bm25"):
        lexical_scores = _lexical_scores(index, text)
        rankings.append(_rank_lexical(lexical_scores, k_search))
    if settings.complete_scores and qvec is not None and lexical_scores is not None:
        rankings = _complete(index, rankings, lexical_scores, qvec)
    if qvec is not None:
        rankings[0] = _blend_context(index, rankings[0], qvec, settings.context_weight)
    if settings.fusion == "rrf":
        fused = _rrf(rankings, settings.rrf_k)
    else:
        weights = ([settings.dense_weight] if qvec is not None else []) + (
            [1.0 - settings.dense_weight] if len(rankings) > (qvec is not None) else [])
        fused = _weighted(list(zip(weights, rankings, strict=False)))

    # units → nodes (a session scores from its best turns). Only the namespace to check: from
    # the per-unit array, without decoding rows; other filters read the row.
    by_node: dict[int, list[tuple[int, float]]] = {}
    unit_ns = index.unit_ns
    ns_only = not (query.types or query.tags or query.kinds or query.as_of is not None)
    allowed_ns = None if namespaces is None else {
        i for i, n in enumerate(index.namespaces) if n in namespaces}
    for unit, score in fused.items():
        if ns_only and unit_ns is not None:
            if allowed_ns is not None and int(unit_ns[unit]) not in allowed_ns:
                continue
        elif not _passes(index.row(unit), query, namespaces):
            continue
        by_node.setdefault(int(index.unit_node[unit]), []).append((unit, score))
    best = max(fused.values(), default=1.0) or 1.0
    import numpy as np

    hits: dict[int, Hit] = {}
    node_lex: Any = {}
    lex_top = float(lexical_scores.max()) if lexical_scores is not None else 0.0
    if settings.session_bm25_weight and lex_top > 0:
        node_lex = _node_lexical(index, text)  # notes of several units (sessions)

    def note_bm25(node: int) -> float:
        """A note's BM25 as one document: its unit's for a one-unit note."""
        if lex_top <= 0 or lexical_scores is None:
            return 0.0
        if index.node_units[node] > 1:
            return node_lex.get(node, 0.0)
        unit = int(index.node_unit[node])
        return float(lexical_scores[unit]) / lex_top if unit >= 0 else 0.0
    dates = dates_in_query(text)
    for node, units in by_node.items():
        if node < 0:
            continue
        units.sort(key=lambda x: -x[1])
        score = sum(w * s / best for w, (_, s) in zip(SESSION_TURN_WEIGHTS, units, strict=False))
        score += settings.session_bm25_weight * note_bm25(node)
        if dates:
            score += settings.date_weight * _date_match(index.row(units[0][0]).get("when"),
                                                        dates)
        hits[node] = Hit(node=node, score=score, units=units[:3],
                         cosine=cos.get(units[0][0]))

    # seeds for expansion: the best hits, or the nodes we were asked to continue from
    seeds: list[Hit]
    if query.from_nodes:
        seeds = []
        for ref in query.from_nodes:
            node = _resolve_node(index, ref)
            seeds.append(Hit(node=node, score=1.0, cosine=None))
        hits = {} if not text else hits
        depth = max(depth, 1)
    else:
        seeds = sorted(hits.values(), key=lambda h: -h.score)[:top_k]
    wanted = tuple(query.relations)
    if query.expand and depth > 0 and seeds:
        _expand(index, seeds, hits, wanted, depth, settings, query, namespaces,
                exclude_seeds=bool(query.from_nodes))

    # heuristic distance: for every hit when navigating (it orders them), else only for the
    # candidates that can still be shown
    qv = np.asarray(qvec, dtype=np.float32) if qvec is not None else None
    candidates = list(hits.values()) if wanted else sorted(
        hits.values(), key=lambda h: (-h.score, h.node))[:top_k * 3]
    for hit in candidates:
        if hit.cosine is None and qv is not None:
            unit = hit.units[0][0] if hit.units else int(index.node_unit[hit.node])
            unit_vec = index.unit_vector(unit) if unit >= 0 else None
            if unit_vec is not None:
                hit.cosine = float(np.dot(unit_vec, qv))
        concept = 1.0 - hit.cosine if hit.cosine is not None else 1.0 - min(1.0, hit.score)
        # With relations asked for, a node reached through none of them is a full relation
        # step away; without, relation distance plays no part.
        rel_sim = hit.rel_similarity if hit.rel_similarity is not None else (
            0.0 if wanted else 1.0)
        hit.h = (settings.alpha * max(0.0, concept) + settings.beta * (1.0 - rel_sim)
                 + settings.gamma * 0.1 * hit.depth)

    if wanted:  # navigation: nearest by the heuristic distance first (seed 000 §4.4)
        ranked = sorted(candidates, key=lambda h: (h.h, -h.score, h.node))
    else:
        ranked = sorted(candidates, key=lambda h: (-h.score, h.h, h.node))
    ranked = _mmr(index, ranked, top_k, settings.mmr_lambda)
    nodes = [_node_json(index, h) for h in ranked]
    explorable = _explorable(index, ranked, wanted, text, {h.node for h in ranked})
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
        "warnings": warnings,
    }
    if telemetry:
        from vault_engine.telemetry import append_event

        append_event(state_dir, {
            "ts": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "query": query.query_text or ",".join(query.from_nodes),
            "hits": [{"id": n["id"], "score": n["score"], "tier": n["tier"],
                      "depth": n["depth"]} for n in nodes],
            "latency_ms": result["latency_ms"], "expanded": bool(query.expand and depth > 0)})
    return result


def recall_in_vault(root: Path, query: Mapping[str, Any], *,
                    telemetry: bool = True) -> dict[str, Any]:
    """Recall in the vault at `root` for a query object (the JSON of `alaya recall -`): the
    vault's settings, its configured embedder (BM25 and the graph if there is none)."""
    from vault_engine.config import load_config
    from vault_engine.providers.embedding import get_embedder

    config = load_config(root)
    q = RecallQuery.from_json(query)
    embedder = get_embedder(config) if q.mode != "bm25" else None
    return recall(root / ".alaya", q, embedder=embedder,
                  settings=RecallSettings.from_config(config), telemetry=telemetry)


def _resolve_node(index: RecallIndex, ref: str) -> int:
    ref = ref.strip().removeprefix("[[").removesuffix("]]")
    if ref in index.node_index:
        return index.node_index[ref]
    wanted = ref.casefold()
    for node, unit in enumerate(index.node_unit):
        if unit >= 0 and str(index.row(int(unit)).get("title", "")).casefold() == wanted:
            return node
    raise UsageError(f"--from-nodes: no node {ref!r} in the compiled vault",
                     fix="pass node ids from a previous recall's nodes[].id")


def _expand(index: RecallIndex, seeds: list[Hit], hits: dict[int, Hit], wanted: Sequence[str],
            depth: int, settings: RecallSettings, query: RecallQuery,
            namespaces: set[str] | None, exclude_seeds: bool) -> None:
    """Breadth-first along edges; with `wanted` relations only along close types."""
    frontier = [(s, 0) for s in seeds]
    seen = {s.node for s in seeds}
    while frontier:
        parent, d = frontier.pop(0)
        if d >= depth:
            continue
        directions = ("out",) if wanted else ("out", "in")
        for direction in directions:
            for target, rel, weight in index.neighbours(parent.node, direction):
                if wanted:
                    sim = max(relation_similarity(rel, w) for w in wanted)
                    if sim < settings.rel_threshold:
                        continue
                else:
                    sim = 1.0 if direction == "out" else 0.8
                unit = int(index.node_unit[target])
                if unit >= 0 and not _passes(index.row(unit), query, namespaces):
                    continue
                score = parent.score * weight * sim * 0.8
                existing = hits.get(target)
                if target in seen and existing is not None:
                    if wanted and existing.matched_rel is None and existing is not parent:
                        # a direct hit that is also reached along an asked-for relation is
                        # a relation match: say so (navigation ranks it by that)
                        existing.matched_rel, existing.rel_similarity = rel, round(sim, 3)
                        existing.via, existing.depth = parent.node, d + 1
                    elif existing.depth > 0 and score > existing.score:
                        existing.score = score
                    continue
                seen.add(target)
                hit = Hit(node=target, score=score, depth=d + 1, matched_rel=rel,
                          rel_similarity=round(sim, 3), via=parent.node,
                          units=[(unit, 0.0)] if unit >= 0 else [])
                hits[target] = hit
                frontier.append((hit, d + 1))
    if exclude_seeds:
        for s in seeds:
            hits.pop(s.node, None)


def _mmr(index: RecallIndex, ranked: list[Hit], k: int, lam: float) -> list[Hit]:
    """Maximal marginal relevance over the top candidates (vectors of each hit's best unit)."""
    import numpy as np

    pool = ranked[:k * 3]
    if len(pool) <= k or lam >= 1.0:
        return pool[:k]
    order = {id(h): i for i, h in enumerate(pool)}
    vecs: list[Any] = []
    for h in pool:
        unit = h.units[0][0] if h.units else int(index.node_unit[h.node])
        v = index.unit_vector(unit) if unit >= 0 else None
        vecs.append(None if v is None else np.asarray(v, dtype=np.float32))
    # relevance from the position in the ranking, so MMR keeps whichever order was chosen
    # (by score for search, by heuristic distance for navigation)
    relevance = [1.0 - i / len(pool) for i in range(len(pool))]
    chosen: list[int] = []
    left = list(range(len(pool)))
    while left and len(chosen) < k:
        def value(i: int) -> float:
            redundancy = 0.0
            if vecs[i] is not None:
                sims = [float(np.dot(vecs[i], vecs[j])) for j in chosen if vecs[j] is not None]
                redundancy = max(sims, default=0.0)
            return lam * relevance[i] - (1 - lam) * redundancy

        pick = max(left, key=value)
        chosen.append(pick)
        left.remove(pick)
    # MMR chooses which k; they are shown in the ranking's own order
    return sorted((pool[i] for i in chosen), key=lambda h: order[id(h)])


_CHUNK_RE = re.compile(r"\s+")
_DATE_PREFIX_RE = re.compile(r"^\[[^\]]*\]\s*")


def _node_json(index: RecallIndex, hit: Hit) -> dict[str, Any]:
    unit = hit.units[0][0] if hit.units else int(index.node_unit[hit.node])
    row = index.row(unit) if unit >= 0 else {}
    kind = index.node_kind(hit.node)
    key = index.node_key(hit.node)
    out: dict[str, Any] = {
        "id": key, "title": row.get("title", key),
        "kind": kind, "type": row.get("type"), "path": row.get("path"),
        "score": round(hit.score, 4), "h_distance": round(hit.h, 4),
        "matched_rel": hit.matched_rel, "rel_similarity": hit.rel_similarity,
        "depth": hit.depth, "via": index.node_key(hit.via) if hit.via is not None else None,
        "tier": row.get("tier"), "namespace": row.get("namespace"),
        "source_sessions": row.get("source_sessions") or [],
        "snippet": row.get("snippet", ""),
    }
    if kind == "session":
        anchors = [index.row(u).get("anchor") for u, _ in hit.units if u >= 0]
        out["session_id"] = key
        out["anchors"] = [a for a in anchors if a]
        out["turns"] = [{"anchor": index.row(u).get("anchor"),
                         "text": index.row(u).get("snippet", ""),
                         "before": _turn_before(index, u)} for u, _ in hit.units if u >= 0]
    return out


def _turn_before(index: RecallIndex, unit: int) -> str | None:
    """The turn before a session turn (the question an answer answers), or None for the
    first: an answer shown alone ("Three years now.") often says nothing of its subject."""
    prev = unit - 1
    if prev < 0 or int(index.unit_node[prev]) != int(index.unit_node[unit]):
        return None
    return str(index.row(prev).get("snippet", "")) or None


def _explorable(index: RecallIndex, hits: Sequence[Hit], wanted: Sequence[str], text: str,
                shown: set[int]) -> list[dict[str, Any]]:
    counts: dict[str, set[int]] = {}
    for h in hits:
        for target, rel, _w in index.neighbours(h.node, "out"):
            if target not in shown:
                counts.setdefault(rel, set()).add(target)
    cues = list(wanted) or query_relations(text)
    rows: list[tuple[float, int, str]] = []
    for rel, targets in counts.items():
        sim = max((relation_similarity(rel, c) for c in cues), default=0.3)
        rows.append((round(sim, 2), len(targets), rel))
    rows.sort(key=lambda r: (-r[0], -r[1], r[2]))
    return [{"rel": rel, "count": count, "rel_sim_to_query": sim} for sim, count, rel in rows]


def prompt_block(result: Mapping[str, Any], *, max_chars: int = 4000) -> str:
    """Memory formatted for an agent's context (seed 004): one line per memory."""
    lines = []
    for n in result["nodes"]:
        kind = n.get("type") or n["kind"]
        label = f"[{kind}]" if n["kind"] != "session" else "[episodic]"
        text = _CHUNK_RE.sub(" ", n.get("snippet") or n["title"]).strip()
        ref = f"[[{n['id']}#^{n['anchors'][0]}]]" if n.get("anchors") else f"[[{n['id']}]]"
        if n["kind"] == "session":
            before = (n.get("turns") or [{}])[0].get("before")
            if before:  # the question before the answer, without its date
                text = _DATE_PREFIX_RE.sub("", _CHUNK_RE.sub(" ", before)).strip() + " → " + text
            line = f"- {label} {text} ({ref})"
        else:
            line = f"- {label} {n['title']}"
            line += f" — {text} ({ref})" if text and text != n["title"] else f" ({ref})"
        lines.append(line)
    return "\n".join(fit_lines(lines, max_chars)[0])
