"""The BM25 artifact: what compile saves (bm25s indexes in shards, packed into a few arrays,
with hashed vocabularies) and how recall reads it without importing bm25s.

The tokenizer shared by compile and recall is vault_engine.text.tokens.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

try:  # hashlib's blake2b is this one; `import hashlib` would also load OpenSSL (~3 ms of
    # every one-shot recall) for the sha/md5 constructors recall never calls
    from _blake2 import blake2b as _blake2b
except ImportError:  # an interpreter without the _blake2 module
    from hashlib import blake2b as _blake2b


@lru_cache(maxsize=65536)
def token_hash(token: str) -> int:
    """A stable 64-bit hash of a token: how a saved index's vocabulary is looked up without
    parsing its JSON (vocab_hash.npy)."""
    return int.from_bytes(_blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")


class SavedBM25:
    """A BM25 index that bm25s built and saved (`BM25.save`), opened for scoring without
    importing bm25s: its score matrix memory-mapped (CSC: one column of precomputed BM25 term
    weights per token), its parameters read from JSON, its vocabulary looked up through
    `vocab_hash.npy` / `vocab_local.npy` (sorted token hashes and their ids, written by the
    compiler) so a query reads no vocabulary JSON — the JSON is the fallback. `get_scores` is
    the sum over the query's token columns — what `bm25s.BM25.get_scores` computes (tested).
    `namespace`: the one namespace of its documents (None: a build from before shards were
    per namespace, or an index that is not a shard)."""

    namespace: str | None

    def __init__(self, folder: str) -> None:
        import json
        import os

        import numpy as np

        from .npy import load_npy

        self.folder = folder
        with open(os.path.join(folder, "params.index.json"), encoding="utf-8") as fh:
            params = json.load(fh)
        self.num_docs = int(params["num_docs"])
        self.dtype = np.dtype(params.get("dtype", "float32"))
        self.data = load_npy(os.path.join(folder, "data.csc.index.npy"))
        self.indices = load_npy(os.path.join(folder, "indices.csc.index.npy"))
        self.indptr = load_npy(os.path.join(folder, "indptr.csc.index.npy"))
        nnoc = os.path.join(folder, "nonoccurrence_array.index.npy")
        self.nonoccurrence = load_npy(nnoc, mmap=False) if os.path.exists(nnoc) else None
        hashes = os.path.join(folder, "vocab_hash.npy")
        self._hashes = load_npy(hashes) if os.path.exists(hashes) else None
        self._local = load_npy(os.path.join(folder, "vocab_local.npy")) \
            if self._hashes is not None else None
        self._vocab: dict[str, int] | None = None
        self.namespace = shard_namespace(folder)

    @classmethod
    def from_arrays(cls, folder: str, num_docs: int, dtype: str,
                    arrays: dict[str, Any], namespace: str | None = None) -> SavedBM25:
        import numpy as np

        self = cls.__new__(cls)
        self.folder = folder
        self.namespace = namespace
        self.num_docs = num_docs
        self.dtype = np.dtype(dtype)
        self.data, self.indices, self.indptr = arrays["data"], arrays["indices"], arrays["indptr"]
        self.nonoccurrence = None
        self._hashes, self._local = arrays["vocab_hash"], arrays["vocab_local"]
        self._vocab = None
        return self

    @property
    def vocab_dict(self) -> dict[str, int]:
        if self._vocab is None:
            import json
            import os

            with open(os.path.join(self.folder, "vocab.index.json"), encoding="utf-8") as fh:
                self._vocab = json.load(fh)
        return self._vocab

    def ids_for(self, tokens: list[str]) -> list[int]:
        """The index's ids of the tokens it knows (unknown tokens are left out)."""
        if self._hashes is None or self._local is None:
            vocab = self.vocab_dict
            return [vocab[t] for t in tokens if t in vocab and vocab[t] < len(self.indptr) - 1]
        import numpy as np

        if not tokens or not len(self._hashes):
            return []
        q = np.array([token_hash(t) for t in tokens], dtype=np.uint64)
        pos = np.searchsorted(self._hashes, q)
        pos[pos >= len(self._hashes)] = 0
        found = np.asarray(self._hashes[pos]) == q
        columns = len(self.indptr) - 1
        return [int(x) for x in np.asarray(self._local[pos[found]]) if x < columns]

    def get_scores(self, token_ids: list[int]) -> Any:
        import numpy as np

        # the query's columns gathered, then one weighted bincount (np.add.at, which bm25s
        # uses, is several times slower)
        spans = [(int(self.indptr[t]), int(self.indptr[t + 1])) for t in token_ids]
        spans = [(a, b) for a, b in spans if b > a]
        if spans:
            idx = np.concatenate([self.indices[a:b] for a, b in spans])
            val = np.concatenate([self.data[a:b] for a, b in spans])
            scores = np.bincount(idx, weights=val, minlength=self.num_docs).astype(self.dtype)
        else:
            scores = np.zeros(self.num_docs, dtype=self.dtype)
        if self.nonoccurrence is not None and token_ids:
            scores += self.nonoccurrence[np.asarray(token_ids)].sum()
        return scores


PACK = "pack.json"
PACK_ARRAYS = ("data", "indices", "indptr", "vocab_hash", "vocab_local", "units")
_SHARD_FILES = {"data": "data.csc.index.npy", "indices": "indices.csc.index.npy",
                "indptr": "indptr.csc.index.npy", "vocab_hash": "vocab_hash.npy",
                "vocab_local": "vocab_local.npy", "units": "units.npy"}


def shard_namespace(folder: str) -> str | None:
    """The namespace a shard folder's documents are all of (its `namespace` file), or None."""
    import os

    try:
        with open(os.path.join(folder, "namespace"), encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return None


def pack_shards(folder: str) -> None:
    """Concatenate every shard's arrays into six files plus `pack.json` (each shard's
    ranges and namespace), so a one-shot recall opens 7 files instead of 6 per shard (379 at
    100k cards, ~50 ms of header parsing). The shard folders stay: they are what an
    incremental compile reuses, and the fallback when there is no pack. The document
    frequencies the dense query's common-word filter reads are kept per namespace, so a
    recall counts only the namespaces it searches."""
    import json
    import os

    import numpy as np

    if not os.path.isdir(folder):
        return
    names = sorted(d for d in os.listdir(folder) if d.startswith("shard-"))
    parts: dict[str, list[Any]] = {k: [] for k in PACK_ARRAYS}
    pos = dict.fromkeys(PACK_ARRAYS, 0)
    shards = []
    for name in names:
        path = os.path.join(folder, name)
        if not os.path.exists(os.path.join(path, "vocab_hash.npy")):
            return  # an index without hashed vocabulary: keep the per-shard layout
        with open(os.path.join(path, "params.index.json"), encoding="utf-8") as fh:
            params = json.load(fh)
        entry: dict[str, Any] = {"name": name, "num_docs": int(params["num_docs"]),
                                 "dtype": params.get("dtype", "float32"),
                                 "namespace": shard_namespace(path)}
        for key in PACK_ARRAYS:
            arr = np.load(os.path.join(path, _SHARD_FILES[key]))
            parts[key].append(arr)
            entry[key] = [pos[key], pos[key] + len(arr)]
            pos[key] += len(arr)
        if os.path.exists(os.path.join(path, "nonoccurrence_array.index.npy")):
            return  # bm25l/bm25+ indexes: not packed (alaya builds lucene BM25)
        shards.append(entry)
    if not shards:
        return
    dtypes = {"data": np.float32, "indices": np.int32, "indptr": np.int64,
              "vocab_hash": np.uint64, "vocab_local": np.int32, "units": np.int64}
    for key in PACK_ARRAYS:
        np.save(os.path.join(folder, f"pack-{key}.npy"),
                np.concatenate(parts[key]).astype(dtypes[key], copy=False))
    # document frequency of every token over each namespace's shards, for the dense query's
    # common-word filter: one lookup per namespace instead of one per shard
    groups: dict[str | None, list[int]] = {}
    for n, entry in enumerate(shards):
        groups.setdefault(entry["namespace"], []).append(n)
    df_hashes, df_counts, ranges = [], [], []
    at = 0
    for namespace, members in sorted(groups.items(), key=lambda g: (g[0] is not None, g[0] or "")):
        hashes, dfs = [], []
        for n in members:
            vh, vl, ip = parts["vocab_hash"][n], parts["vocab_local"][n], parts["indptr"][n]
            counts = np.diff(ip)
            known = vl < len(counts)  # bm25s may list a token (the empty one) with no column
            hashes.append(vh[known])
            dfs.append(counts[vl[known]])
        uniq, inverse = np.unique(np.concatenate(hashes), return_inverse=True)
        df_hashes.append(uniq.astype(np.uint64))
        df_counts.append(np.bincount(inverse, weights=np.concatenate(dfs)).astype(np.int64))
        ranges.append({"namespace": namespace, "range": [at, at + len(uniq)],
                       "num_docs": sum(shards[n]["num_docs"] for n in members)})
        at += len(uniq)
    np.save(os.path.join(folder, "pack-df-hash.npy"), np.concatenate(df_hashes))
    np.save(os.path.join(folder, "pack-df.npy"), np.concatenate(df_counts))
    with open(os.path.join(folder, PACK), "w", encoding="utf-8") as fh:
        json.dump({"shards": shards, "doc_freq": ranges}, fh)


def open_pack(folder: str, *, resident: bool = False) -> list[tuple[SavedBM25, Any]] | None:
    """The shards of a packed lexical folder as (SavedBM25, global unit ids) views; memory-
    mapped, or read into RAM for a resident process (`alaya serve`)."""
    import json
    import os

    from .npy import load_npy

    meta_path = os.path.join(folder, PACK)
    if not os.path.exists(meta_path):
        return None
    with open(meta_path, encoding="utf-8") as fh:
        meta = json.load(fh)
    arrays = {k: load_npy(os.path.join(folder, f"pack-{k}.npy"), mmap=not resident)
              for k in PACK_ARRAYS}
    out = []
    for e in meta["shards"]:
        view = {k: arrays[k][e[k][0]:e[k][1]] for k in PACK_ARRAYS}
        shard = SavedBM25.from_arrays(os.path.join(folder, e["name"]), e["num_docs"],
                                      e["dtype"], view, e.get("namespace"))
        out.append((shard, view["units"]))
    return out


def open_doc_freq(folder: str) -> list[tuple[str | None, Any, Any]] | None:
    """(namespace, sorted token hashes, document frequencies) over each namespace's shards,
    when packed (namespace None: a pack of shards that say none, all in one)."""
    import json
    import os

    from .npy import load_npy

    path = os.path.join(folder, "pack-df-hash.npy")
    if not os.path.exists(path):
        return None
    hashes, dfs = load_npy(path), load_npy(os.path.join(folder, "pack-df.npy"))
    with open(os.path.join(folder, PACK), encoding="utf-8") as fh:
        ranges = json.load(fh).get("doc_freq")
    if ranges is None:  # a pack from before doc frequencies were per namespace
        return [(None, hashes, dfs)]
    return [(r["namespace"], hashes[r["range"][0]:r["range"][1]], dfs[r["range"][0]:r["range"][1]])
            for r in ranges]


def save_vocab_hashes(folder: str, vocab: dict[str, int]) -> None:
    """Write vocab_hash.npy (sorted) and vocab_local.npy (the ids in the same order)."""
    import os

    import numpy as np

    pairs = sorted((token_hash(t), i) for t, i in vocab.items())
    np.save(os.path.join(folder, "vocab_hash.npy"), np.array([h for h, _ in pairs],
                                                              dtype=np.uint64))
    np.save(os.path.join(folder, "vocab_local.npy"), np.array([i for _, i in pairs],
                                                               dtype=np.int32))
