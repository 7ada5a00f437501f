"""The format of the compiled artifacts under `.alaya/`, defined once.

`compilers/` writes it; recall, traverse, status and introspect read it through this module.

```
.alaya/
  current.json              {"schema": 1, "build": "<build-id>"} — swapped atomically
  builds/<build-id>/        one complete, immutable set of artifacts
    manifest.json           schema, embedder, per-note hashes, counts, timings
    units.jsonl             one recall target per line (row i = FAISS id i)
    vectors-hot.faiss       IndexIDMap2(IndexFlatIP) over HOT units (loaded into RAM)
    vectors-warm.faiss      the same over WARM units (memory-mapped, IO_FLAG_MMAP_IFC)
    lexical/shard-NN/       bm25s index over every unit (HOT, WARM and COLD), in shards of
                            ~2,500 units by note; units.npy maps rows to unit ids
    graph.pickle            networkx MultiDiGraph of cards, entities, sessions, notes (a
                            plain pickle; its seal, the MAC under this machine's key, is
                            the manifest's `seals`: vault_engine/seal.py)
    agent-digest.json       the compact view for agents that read files
    claims.jsonl            one claim per line
    config.json             alaya.toml as the compile read it: its text and TOML parse
  agent-digest.json         the digest every agent may read: `shared` notes only
  digest/<agent>.json       one per agent: `shared` plus that agent's own namespaces
                            (both replaced atomically with each build; the build's own
                            agent-digest.json is the whole vault, for the engine)
  cache/embeddings.sqlite   (embedder id, text hash) → vector; survives every build
  cache/records.pickle      per-note parse results keyed by path + checksum (sealed inline)
  telemetry/recall.jsonl    append-only recall events
  lock, compile.lock        the vault write lock and the compile lock
```

Publishing writes a whole new build directory, then replaces `current.json` in one
`os.replace`: a reader sees the old set or the new set, never a mix. The previous build is kept
for readers still holding it; older ones are deleted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .primitives import record

SCHEMA_VERSION = 1
# bumped whenever a build's set of files or their layout changes (11: Chinese BM25 words;
# 12: node_ns.npy and the agents' digests; 13: the folder and note stamps of recall/,
# vault_engine/stamps.py; 14: recall/unit_timed.npy; 15: recall/node_kind.npy,
# unit_superseded.npy and the node_speakers arrays, config.json; 16: BM25 shards and
# whole-note indexes per namespace, lexical/pack.json's doc_freq per namespace)
FORMAT = 16
CURRENT = "current.json"
BUILDS = "builds"
MANIFEST = "manifest.json"
UNITS = "units.jsonl"
VECTORS = {"HOT": "vectors-hot.faiss", "WARM": "vectors-warm.faiss"}
LEXICAL = "lexical"
LEXICAL_NOTES = "lexical-notes"  # BM25 with one document per note (a whole session)
GRAPH = "graph.pickle"
SEALS = "seals"  # manifest key: artifact name → hex MAC under this machine's key (seal.py)
DIGEST = "agent-digest.json"
PUBLIC_DIGEST = "agent-digest.json"  # .alaya/agent-digest.json: shared notes only
PUBLIC_CLAIMS = "claims.jsonl"  # .alaya/claims.jsonl: the claims of shared notes only
AGENT_DIGESTS = "digest"  # .alaya/digest/<agent>.json: shared + that agent's own
CLAIMS = "claims.jsonl"
RECALL = "recall"  # compact arrays for recall (compilers/recall_index.py)
CONFIG_SNAPSHOT = "config.json"  # config.toml_snapshot: recall reuses the parse
EMBED_CACHE = "cache/embeddings.sqlite"
RECORD_CACHE = "cache/records.pickle"
TELEMETRY = "telemetry/recall.jsonl"
COMPILE_LOCK = "compile.lock"
TIERS = ("HOT", "WARM", "COLD")


@record(frozen=True)
class Build:
    """One published set of artifacts."""

    root: Path  # .alaya/builds/<id>
    build_id: str

    def path(self, name: str) -> Path:
        return self.root / name

    @property
    def vault_root(self) -> Path:
        return self.root.parent.parent.parent  # <vault>/.alaya/builds/<id>

    def manifest(self) -> dict[str, Any]:
        return json.loads(self.path(MANIFEST).read_text(encoding="utf-8"))

    def units(self) -> list[dict[str, Any]]:
        with self.path(UNITS).open(encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    def digest(self) -> dict[str, Any]:
        return json.loads(self.path(DIGEST).read_text(encoding="utf-8"))

    def graph(self) -> Any:
        """The networkx graph — only ever a pickle this machine's compile wrote: its MAC in
        the manifest is checked before anything is unpickled (SealError otherwise)."""
        from . import seal

        mac = (self.manifest().get(SEALS) or {}).get(GRAPH)
        return seal.load_signed(self.path(GRAPH), self.vault_root, "graph", mac)

    def graph_sealed(self, manifest: dict[str, Any] | None = None) -> bool:
        """Does this build's graph carry this machine's seal (checked on the bytes, never
        unpickled)? `manifest`: this build's, when the caller has it parsed already."""
        from . import seal

        try:
            data = self.path(GRAPH).read_bytes()
        except OSError:
            return False
        mac = ((manifest if manifest is not None else self.manifest()).get(SEALS) or {}).get(GRAPH)
        return seal.verify(self.vault_root, "graph", data, mac)

    def config_snapshot(self) -> dict[str, Any] | None:
        """alaya.toml as this build's compile read it (config.toml_snapshot), if saved."""
        try:
            data = json.loads(self.path(CONFIG_SNAPSHOT).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def unit_namespaces(self) -> tuple[list[str], Any, Any] | None:
        """(namespace names, each unit's namespace index, each unit's tier code 0 HOT 1 WARM
        2 COLD) from the recall arrays; None for a build without them."""
        import numpy as np

        folder = self.path(RECALL)
        try:
            info = json.loads((folder / "info.json").read_text(encoding="utf-8"))
            return (list(info.get("namespaces") or []), np.load(folder / "unit_ns.npy"),
                    np.load(folder / "unit_tier.npy"))
        except (OSError, ValueError):
            return None

    def vector_index(self, tier: str, mmap: bool = True) -> Any:
        """The FAISS index of a tier (None if the tier has no vectors)."""
        import faiss

        path = self.path(VECTORS[tier])
        if not path.exists():
            return None
        flags = faiss.IO_FLAG_MMAP_IFC if mmap else 0
        return faiss.read_index(str(path), flags)


def current_build(state_dir: Path) -> Build | None:
    pointer = state_dir / CURRENT
    try:
        data = json.loads(pointer.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    root = state_dir / BUILDS / str(data.get("build", ""))
    if not data.get("build") or not (root / MANIFEST).exists():
        return None
    return Build(root=root, build_id=str(data["build"]))
