"""The BM25 build: bm25s indexes over documents given as ids of the persistent vocabulary, in
shards so that one edit rebuilds one shard. The saved format and its reader are
vault_engine.recall.bm25."""

from __future__ import annotations

import hashlib
import shutil
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vault_engine import artifacts as A
from vault_engine.recall.bm25 import save_vocab_hashes

from .records import GRAPH_KINDS, NoteRecord
from .state import CompileState, signature, units_reusable


def build_lexical(path: Path, docs: Sequence[Sequence[int]], vocab: dict[str, int]) -> None:
    """BM25 (bm25s) over documents given as ids of the persistent vocabulary.

    Passing ids skips bm25s's own string → id pass over every token; the ids are renumbered
    to the tokens these documents use, so each saved index carries only its own vocabulary.
    """
    import logging

    import bm25s
    from bm25s.tokenization import Tokenized

    # bm25s sets its logger to DEBUG on import: under `alaya mcp` (whose SDK installs a log
    # handler) every compile would print "Building index from IDs objects" to the client
    logging.getLogger("bm25s").setLevel(logging.WARNING)

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
NAMESPACE_FILE = "namespace"  # in each shard folder: the one namespace its documents are of


def shard_tag(namespace: str) -> str:
    """A namespace's part of its shard folders' names (`shard-<tag>-NN`): a hash, since a
    namespace is any text a note's frontmatter gives."""
    return hashlib.blake2b(namespace.encode("utf-8"), digest_size=4).hexdigest()


def _shard_count(n_units: int, before: int) -> int:
    """How many BM25 shards for a namespace: about one per SHARD_UNITS units, kept while
    within 2× of the previous count, so a growing vault does not reshuffle every shard on
    each compile."""
    ideal = max(1, round(n_units / SHARD_UNITS))
    if before and before / 2 <= ideal <= before * 2:
        return before
    return ideal


def by_namespace(records: Sequence[NoteRecord]) -> dict[str, list[tuple[int, NoteRecord]]]:
    """Records grouped by namespace, each with its position in `records`, namespaces sorted."""
    groups: dict[str, list[tuple[int, NoteRecord]]] = {}
    for n, rec in enumerate(records):
        groups.setdefault(rec.namespace or "shared", []).append((n, rec))
    return dict(sorted(groups.items()))


def write_lexical_shards(folder: Path, records: Sequence[NoteRecord], cstate: CompileState,
                         prev_build: A.Build | None, prev: dict[str, Any] | None
                         ) -> dict[str, list[str]]:
    """The BM25 index in shards (`shard-<tag>-NN/` + `units.npy`, the global unit id of each
    row, + `namespace`), returned as each namespace's shard signatures (for the manifest).

    **One namespace per shard.** A shard's statistics (document frequencies, lengths) are
    those of its own namespace's notes only, and recall scores only the shards of the
    namespaces it searches: what an agent's recall finds, in which order and with which
    scores, never depends on notes it may not read (docs/security.md, "Taint follows
    text"). Within a namespace a note's units all go to one shard (by a hash of its path),
    and only shards whose documents changed are rebuilt: one edit rebuilds one shard. Scores
    come from each shard's own statistics — over thousands of randomly assigned units those
    match the namespace's closely (search engines score shards the same way); below
    SHARD_UNITS there is one shard per namespace.
    """
    import numpy as np

    offsets = [0]
    for rec in records:
        offsets.append(offsets[-1] + len(rec.units))
    same_format = prev is not None and prev.get("format") == A.FORMAT
    old_all = (prev or {}).get("lexical_shards") if same_format else None
    old_all = old_all if isinstance(old_all, dict) else {}
    out: dict[str, list[str]] = {}
    for namespace, group in by_namespace(records).items():
        old = old_all.get(namespace) or []
        count = _shard_count(sum(len(rec.units) for _, rec in group), len(old))
        members: list[list[NoteRecord]] = [[] for _ in range(count)]
        unit_ids: list[list[int]] = [[] for _ in range(count)]
        for n, rec in group:
            k = int(hashlib.blake2b(rec.path.encode(), digest_size=4).hexdigest(), 16) % count
            members[k].append(rec)
            unit_ids[k].extend(range(offsets[n], offsets[n + 1]))
        sigs = []
        tag = shard_tag(namespace)
        for k in range(count):
            sig = signature(u.lexical for rec in members[k] for u in rec.units)
            sigs.append(sig)
            if not unit_ids[k]:
                continue
            dest = folder / f"shard-{tag}-{k:02d}"
            source = prev_build.path(A.LEXICAL) / dest.name if prev_build else None
            if len(old) == count and old[k] == sig and source and source.exists():
                shutil.copytree(source, dest)
            else:
                build_lexical(dest, [ids for rec in members[k]
                                     for ids in cstate.unit_token_ids(rec)], cstate.vocab)
            np.save(dest / "units.npy", np.array(unit_ids[k], dtype=np.int64))
            (dest / NAMESPACE_FILE).write_text(namespace, encoding="utf-8")
        out[namespace] = sigs
    return out


def write_note_documents(folder: Path, records: Sequence[NoteRecord], cstate: CompileState,
                         prev_build: A.Build | None, prev: dict[str, Any] | None) -> str:
    """BM25 over whole notes: one document per note of several units (a whole session); for a
    one-unit note it would repeat the unit index. One index per namespace (`ns-<tag>/`, with
    `nodes.npy` — row i is graph node `nodes.npy[i]` — and `namespace`), for the reason the
    unit shards are per namespace. It has its own signature (returned, for the manifest):
    editing a card leaves it as it was."""
    import numpy as np

    graph_recs = [rec for rec in records if rec.kind in GRAPH_KINDS]
    multi = [(n, rec) for n, rec in enumerate(graph_recs) if len(rec.units) > 1]
    notes_sig = signature(f"{n}|{rec.path}|{rec.namespace}|" + "\x01".join(
        u.lexical for u in rec.units) for n, rec in multi)
    if units_reusable(prev_build, prev, "notes_lexical_sig", notes_sig, A.LEXICAL_NOTES):
        shutil.copytree(prev_build.path(A.LEXICAL_NOTES),  # type: ignore[union-attr]
                        folder)
        return notes_sig
    groups: dict[str, list[tuple[int, NoteRecord]]] = {}
    for n, rec in multi:
        groups.setdefault(rec.namespace or "shared", []).append((n, rec))
    for namespace, group in sorted(groups.items()):
        dest = folder / f"ns-{shard_tag(namespace)}"
        note_docs = [array("i", [t for ids in cstate.unit_token_ids(rec) for t in ids])
                     for _, rec in group]
        build_lexical(dest, note_docs, cstate.vocab)
        np.save(dest / "nodes.npy", np.array([n for n, _ in group], dtype=np.int32))
        (dest / NAMESPACE_FILE).write_text(namespace, encoding="utf-8")
    return notes_sig
