"""What one compile hands the next (`CompileState`, persisted in `.alaya/cache/`): parsed
records, per-note output fragments, resolved edges, the BM25 vocabulary and the vectors
already looked up — so an incremental compile redoes only what changed."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_engine import artifacts as A
from vault_engine import seal
from vault_engine.care.tiers import TierResult
from vault_engine.errors import WriteRefusedError, notice, refused_write
from vault_engine.store.links import LinkResolver
from vault_engine.store.vault import atomic_write

from .digest import Fragment, make_fragment
from .graph import Edge, resolve_edges
from .records import NoteRecord

RECORD_CACHE_VERSION = 12  # 8: Chinese BM25 words, speakers in pinyin; 9: no injected turns,
# masked secrets; 10/11: turns' time and days; 12: entity pages' facts as units


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
        sig = signature(self._link_key(r) for r in records)
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

    def fragment(self, rec: NoteRecord, tier: TierResult, out: Sequence[Edge],
                 derived: tuple[Edge, ...] = ()) -> Fragment:
        # While the resolved edges are those of the last compile (same signature), a note's
        # resolved out-edges cannot have changed: the global signature stands in for its own.
        # Edges derived from usage (CO_OCCURS) are not in it: they key the fragment themselves.
        edges_key = self.edges[0] if self.edges_reused and self.edges else (
            signature(repr(e) for e in out) if out else "")
        key = (rec.checksum, tier.tier, round(tier.temperature, 3), edges_key, derived)
        old = self.fragments.get(rec.path)
        if old is not None and old.key == key:
            return old
        frag = make_fragment(rec, tier, out, key)
        self.fragments[rec.path] = frag
        return frag

    @classmethod
    def load(cls, path: Path) -> CompileState:
        """The state `save` left in `path` — only if this machine sealed it (seal.py): a cache
        that is absent, stale, foreign or tampered with is never unpickled; the compile then
        starts from nothing."""
        data = seal.load(path, _vault_of(path), "records")
        try:
            if isinstance(data, dict) and data.get("version") == RECORD_CACHE_VERSION:
                return cls(entries=dict(data["records"]), fragments=dict(data["fragments"]),
                           edges=data.get("edges"), vocab=dict(data.get("vocab") or {}),
                           token_ids=dict(data.get("token_ids") or {}),
                           vector_keys=list(data.get("vector_keys") or []),
                           vector_matrix=data.get("vector_matrix"),
                           vectors_for=str(data.get("vectors_for") or ""))
        except (KeyError, TypeError, ValueError):
            pass
        return cls()

    def save(self, path: Path) -> None:
        """Persist the state, sealed. A cache is not knowledge: where it cannot be written (no
        key, a full or read-only disk) the next compile starts from nothing, and says so."""
        live = {p: f for p, f in self.fragments.items() if p in self.entries}
        ids = {p: t for p, t in self.token_ids.items() if p in self.entries}
        save_sealed(path, "records", {
            "version": RECORD_CACHE_VERSION, "records": self.entries, "fragments": live,
            "edges": self.edges, "vocab": self.vocab, "token_ids": ids,
            "vector_keys": self.vector_keys, "vector_matrix": self.vector_matrix,
            "vectors_for": self.vectors_for})

    def known_vectors(self, embedder_id: str) -> dict[bytes, Any]:
        if self.vectors_for != embedder_id or self.vector_matrix is None:
            return {}
        return dict(zip(self.vector_keys, self.vector_matrix, strict=False))

    def remember_vectors(self, embedder_id: str, keys: list[bytes], matrix: Any) -> None:
        self.vectors_for, self.vector_keys, self.vector_matrix = embedder_id, keys, matrix


def signature(parts: Iterable[str]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def _vault_of(cache: Path) -> Path:
    return cache.parent.parent.parent  # <vault>/.alaya/cache/<file>


def save_sealed(path: Path, purpose: str, obj: object) -> None:
    """A cache file, sealed (seal.py); not written without a key. A write the machine refuses
    is a notice, not a failure: the cache is only a head start."""
    data = seal.dumps(_vault_of(path), purpose, obj)
    if data is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, durable=False)
    except (OSError, WriteRefusedError) as exc:
        refused = refused_write(exc, path)
        if refused is None:
            raise
        notice(f"{refused} — the compile cache was not saved: the next compile re-reads "
               "every note")


def units_reusable(prev_build: A.Build | None, prev: dict[str, Any] | None, key: str, sig: str,
                   name: str) -> bool:
    """Can the previous build's artifact `name` be reused (same inputs signature)?"""
    return (prev_build is not None and prev is not None and prev.get(key) == sig
            and prev.get("format") == A.FORMAT and prev_build.path(name).exists())
