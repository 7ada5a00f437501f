"""The compiled artifacts recall reads (`RecallIndex`): unit rows, vectors per tier, the BM25
shards, context vectors and the graph adjacency, opened lazily and memory-mapped — cheap to
keep resident in `alaya serve`, cheap to open in a one-shot process."""

from __future__ import annotations

import json
import mmap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vault_engine import artifacts as A
from vault_engine.errors import NotCompiledError

from .npy import load_npy


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
            return load_npy(folder / name)

        def ram(name: str) -> Any:
            """Small and hit on every query: read into RAM (None when the build has none)."""
            try:
                return load_npy(folder / name, mmap=False)
            except FileNotFoundError:
                return None

        self.unit_offsets = load("unit_offsets.npy")
        self.unit_node = load_npy(folder / "unit_node.npy", mmap=False)
        self.node_unit = load_npy(folder / "node_unit.npy", mmap=False)
        self.node_units = np.bincount(self.unit_node[self.unit_node >= 0],
                                      minlength=self.n_nodes)
        # per-unit namespace and tier (builds since format 7; older ones decode the row)
        self.namespaces: list[str] = info.get("namespaces") or []
        self.unit_ns = ram("unit_ns.npy")
        self.unit_tier = ram("unit_tier.npy")
        # 1 for a turn that says when (builds since format 13; before: none)
        self.unit_timed = ram("unit_timed.npy")
        self.node_ns = ram("node_ns.npy")
        # a ranking factor per node (< 1 for poor feedback); builds before it: none
        self.node_quality = ram("node_quality.npy")
        # each node's kind, each unit's superseded flag, who spoke in each session (builds
        # since format 15; older ones decode the rows, which say the same)
        self.kinds: list[str] | None = info.get("kinds")
        self.node_kind_code = ram("node_kind.npy") if self.kinds is not None else None
        self.unit_superseded = ram("unit_superseded.npy")
        self.speakers: list[str] | None = info.get("speakers")
        self.speakers_indptr = ram("node_speakers_indptr.npy") \
            if self.speakers is not None else None
        self.speakers_of = ram("node_speakers.npy") if self.speakers_indptr is not None \
            else None
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

    def node_namespace(self, node: int) -> str:
        if self.node_ns is not None:
            return self.namespaces[int(self.node_ns[node])]
        unit = int(self.node_unit[node])
        return str(self.row(unit).get("namespace") or "shared") if unit >= 0 else "shared"

    def visible(self, node: int, namespaces: set[str] | None) -> bool:
        """Is a node in one of `namespaces` (None: every namespace)?"""
        return namespaces is None or self.node_namespace(node) in namespaces

    def node_kind(self, node: int) -> str:
        if self.node_kind_code is not None:
            return self.kinds[self.node_kind_code[node]]  # type: ignore[index]
        unit = int(self.node_unit[node])
        return str(self.row(unit)["kind"]) if unit >= 0 else str(self.meta["kinds"][node])

    def node_speakers(self, node: int) -> list[str]:
        """The name forms of who spoke in a node (a session's speakers; none for others)."""
        if self.speakers_of is not None:
            a, b = self.speakers_indptr[node], self.speakers_indptr[node + 1]  # type: ignore[index]
            return [self.speakers[i] for i in self.speakers_of[a:b].tolist()]  # type: ignore[index]
        unit = int(self.node_unit[node])
        return list(self.row(unit).get("speakers") or []) if unit >= 0 else []

    def superseded(self, unit: int) -> bool:
        """Is a unit's card one every claim of which a later card superseded?"""
        if self.unit_superseded is not None:
            return bool(self.unit_superseded[unit])
        return bool(self.row(unit).get("superseded"))

    def unit_passes(self, unit: int, query: Any, namespaces: set[str] | None) -> bool:
        """`query.passes` for a unit: from the per-unit namespace array when the namespace is
        all there is to check (the common query), else from its row."""
        from .query import passes

        if self.unit_ns is not None and not (query.types or query.tags or query.kinds
                                             or query.as_of is not None):
            return namespaces is None or self.namespaces[self.unit_ns[unit]] in namespaces
        return passes(self.row(unit), query, namespaces)

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
            path = self.folder / "context_vectors.npy"
            if not path.exists():
                self._context = False
            else:
                # resident (serve): read into RAM once; a one-shot recall maps them
                rows_path = self.folder / "context_row.npy"
                mapped = not self.resident
                self._context = (load_npy(rows_path, mmap=mapped), load_npy(path, mmap=mapped))
        return self._context or None

    # -- what a scope may see -------------------------------------------------------------
    def searches_all(self, namespaces: set[str] | None) -> bool:
        """Does a search over `namespaces` (None: every one) see every unit of the build?"""
        return namespaces is None or set(self.namespaces) <= namespaces

    def unit_mask(self, namespaces: set[str] | None) -> Any:
        """A boolean array: is each unit in one of `namespaces`? (kept per scope, for serve)"""
        import numpy as np

        key = frozenset(namespaces or ())
        masks = self.__dict__.setdefault("_masks", {})
        if key not in masks:
            if self.unit_ns is not None:
                allowed = [i for i, n in enumerate(self.namespaces) if n in key]
                masks[key] = np.isin(self.unit_ns, np.array(allowed, dtype=self.unit_ns.dtype))
            else:
                masks[key] = np.array([str(self.row(u).get("namespace") or "shared") in key
                                       for u in range(self.n_units)], dtype=bool)
        return masks[key]

    def unit_bitmap(self, namespaces: set[str] | None) -> Any:
        """The units of `namespaces` as a FAISS IDSelectorBitmap's bytes (bit i: unit i)."""
        import numpy as np

        key = frozenset(namespaces or ())
        bitmaps = self.__dict__.setdefault("_bitmaps", {})
        if key not in bitmaps:
            bitmaps[key] = np.packbits(self.unit_mask(namespaces), bitorder="little")
        return bitmaps[key]

    def lexical_for(self, namespaces: set[str] | None) -> list[tuple[Any, Any]]:
        """The BM25 shards a search over `namespaces` reads: those of its namespaces (a build
        from before shards were per namespace: all of them, which the caller filters)."""
        shards = self.lexical()
        if namespaces is None:
            return shards
        return [(r, u) for r, u in shards if r.namespace is None or r.namespace in namespaces]

    def searched_units(self, namespaces: set[str] | None) -> int:
        """How many units a search over `namespaces` reads."""
        if self.searches_all(namespaces):
            return self.n_units
        shards = self.lexical_for(namespaces)
        if shards and all(r.namespace is not None for r, _ in shards):
            return sum(int(r.num_docs) for r, _ in shards)
        return int(self.unit_mask(namespaces).sum())

    def doc_freq(self, token: str, namespaces: set[str] | None = None) -> int:
        """How many units of `namespaces` (None: every one) contain a token (summed over
        their shards' sparse columns)."""
        if not hasattr(self, "_df"):
            from .bm25 import open_doc_freq

            self._df = open_doc_freq(str(self.build.path(A.LEXICAL)))
        if self._df is not None and (namespaces is None or all(
                ns is not None for ns, _, _ in self._df)):
            import numpy as np

            from .bm25 import token_hash

            h = np.uint64(token_hash(token))
            total = 0
            for ns, hashes, dfs in self._df:
                if namespaces is not None and ns not in namespaces:
                    continue
                i = int(np.searchsorted(hashes, h))
                total += int(dfs[i]) if i < len(hashes) and hashes[i] == h else 0
            return total
        total = 0
        mask = None if namespaces is None else self.unit_mask(namespaces)
        for retriever, units in self.lexical_for(namespaces):
            for token_id in retriever.ids_for([token]):
                indptr = retriever.indptr
                a, b = int(indptr[token_id]), int(indptr[token_id + 1])
                if mask is None or retriever.namespace is not None:
                    total += b - a
                else:  # a shard of several namespaces: count only the searched ones' units
                    total += int(mask[units[retriever.indices[a:b]]].sum())
        return total

    def notes_lexical(self) -> list[tuple[Any, Any]]:
        """Whole-note BM25, one index per namespace: (SavedBM25, graph node of each row)."""
        if not hasattr(self, "_notes_lexical"):
            from .bm25 import SavedBM25

            path = self.build.path(A.LEXICAL_NOTES)
            found = []
            if (path / "nodes.npy").exists():  # a build from before they were per namespace
                found.append(path)
            elif path.exists():
                found += sorted(p for p in path.glob("ns-*") if (p / "nodes.npy").exists())
            self._notes_lexical = [(SavedBM25(str(p)), load_npy(p / "nodes.npy", mmap=False))
                                   for p in found]
        return self._notes_lexical  # type: ignore[no-any-return]

    def notes_lexical_rows(self) -> dict[int, tuple[int, int]]:
        """Graph node → (its index, its row) in the whole-note BM25 indexes (built once)."""
        if not hasattr(self, "_note_rows"):
            self._note_rows = {int(n): (g, i) for g, (_, nodes) in enumerate(self.notes_lexical())
                               for i, n in enumerate(nodes.tolist())}
        return self._note_rows

    def lexical(self) -> list[tuple[Any, Any]]:
        """The BM25 shards: (SavedBM25 of a bm25s index, global unit id of each of its documents)."""
        if self._lexical is None:

            from .bm25 import SavedBM25, open_pack

            root = self.build.path(A.LEXICAL)
            packed = open_pack(str(root), resident=self.resident) if root.exists() else None
            if packed is not None:
                self._lexical = packed
                return packed
            shards = []
            for folder in sorted(root.glob("shard-*")) if root.exists() else []:
                shards.append((SavedBM25(str(folder)),
                               load_npy(folder / "units.npy", mmap=False)))
            self._lexical = shards
        return self._lexical  # type: ignore[no-any-return]

    # -- freshness ------------------------------------------------------------------------
    def staleness(self, root: Path, results: list[tuple[int, str | None]]) -> Any:
        """Has the vault at `root` changed since this build? (vault_engine/stamps.py)"""
        from vault_engine import stamps

        path = self.folder / stamps.NODE_STAMP
        if not hasattr(self, "_node_stamp"):
            self._node_stamp = load_npy(path) if path.exists() else None
        return stamps.check(self.folder, root, results, self._node_stamp)

    # -- graph ----------------------------------------------------------------------------
    def neighbours(self, node: int, direction: str = "out") -> Iterable[tuple[int, str, float]]:
        indptr, indices, types, weights = self.adj[direction]
        a, b = int(indptr[node]), int(indptr[node + 1])
        if a == b:
            return
        # one slice per array, not one memory-mapped element access per edge
        names = self.rel_types
        for target, kind, weight in zip(indices[a:b].tolist(), types[a:b].tolist(),
                                        weights[a:b].tolist(), strict=True):
            yield target, names[kind], weight


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
