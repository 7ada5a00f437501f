"""The embedding cache: (embedder id, text hash) → vector, in SQLite under `.alaya/cache/`.

Unchanged text is never embedded twice. New vectors are committed batch by batch, so Ctrl-C or
a crash in the middle of a long first compile loses nothing already embedded and the next run
resumes where this one stopped.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from vault_engine.providers.embedding import Embedder

Progress = Callable[[str, int, int], None]


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


class EmbeddingCache:
    def __init__(self, path: Path, embedder_id: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (embedder TEXT NOT NULL, "
                        "key BLOB NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL, "
                        "PRIMARY KEY (embedder, key))")
        self.embedder_id = embedder_id

    def close(self) -> None:
        self.db.close()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 500):
            chunk = unique[i:i + 500]
            rows = self.db.execute(
                f"SELECT key, vec FROM vectors WHERE embedder = ? AND key IN "
                f"({','.join('?' * len(chunk))})", [self.embedder_id, *chunk])
            for key, blob in rows:
                found[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, items: Sequence[tuple[bytes, np.ndarray]]) -> None:
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO vectors (embedder, key, dim, vec) VALUES (?, ?, ?, ?)",
                [(self.embedder_id, k, int(v.shape[0]), v.astype(np.float32).tobytes())
                 for k, v in items])


def embed_texts(texts: Sequence[str], embedder: Embedder, cache: EmbeddingCache, *,
                batch_size: int = 16, progress: Progress | None = None,
                memory: dict[bytes, np.ndarray] | None = None) -> tuple[np.ndarray, int]:
    """Vectors for `texts` (row per text), embedding only what the cache lacks.

    `memory` is an optional in-process dict in front of SQLite (the watcher keeps one).
    Returns (matrix, number of texts actually embedded).
    """
    keys = [text_key(t) for t in texts]
    have: dict[bytes, np.ndarray] = {}
    if memory is not None:
        have = {k: memory[k] for k in keys if k in memory}
    lookup = [k for k in keys if k not in have]
    if lookup:
        have.update(cache.get_many(lookup))
    missing: dict[bytes, str] = {}
    for k, t in zip(keys, texts, strict=True):
        if k not in have and k not in missing:
            missing[k] = t
    todo = list(missing.items())
    done = 0
    if progress:
        progress("embed", 0, len(todo))
    for i in range(0, len(todo), batch_size):
        batch = todo[i:i + batch_size]
        vecs = embedder.embed_passages([t for _, t in batch])
        cache.put_many([(k, v) for (k, _), v in zip(batch, vecs, strict=True)])
        for (k, _), v in zip(batch, vecs, strict=True):
            have[k] = np.asarray(v, dtype=np.float32)
        done += len(batch)
        if progress:
            progress("embed", done, len(todo))
    if memory is not None:
        memory.update(have)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32), 0
    return np.stack([have[k] for k in keys]).astype(np.float32), len(todo)
