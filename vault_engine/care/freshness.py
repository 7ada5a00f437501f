"""Do the published artifacts match the vault? (content hashes, embedder, completeness)

Used by `alaya compile --check`, `alaya status` and `alaya doctor`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vault_engine import artifacts as A
from vault_engine.errors import AlayaError
from vault_engine.primitives import checksum
from vault_engine.providers.embedding import get_embedder
from vault_engine.store.vault import Vault


@dataclass
class CheckResult:
    ok: bool
    reason: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


def readable_paths(vault: Vault, paths: list[str]) -> list[str]:
    """The paths (notes, and the files beside them) the vault's caller may read — what an
    agent is told of a change, a skipped note, a compile."""
    if vault.caller.is_owner:
        return list(paths)
    out = []
    for rel in paths:
        note = rel if rel.endswith(".md") else rel.rsplit(".", 1)[0] + ".md"
        if (vault.root / note).is_file() and _readable(vault, note):
            out.append(rel)
    return out


def _readable(vault: Vault, rel: str) -> bool:
    from vault_engine.store.namespaces import namespace_in_head

    try:
        with open(vault.root / rel, "rb") as fh:
            head = fh.read(16384).decode("utf-8", errors="replace")
    except OSError:
        return False
    return vault.caller.may_read(namespace_in_head(head))


def check_artifacts(vault: Vault, embedder_id: str | None = None) -> CheckResult:
    """Do the published artifacts match the vault? (content hashes, embedder, completeness)

    `embedder_id` defaults to the embedder alaya.toml / ALAYA_EMBED_* selects.
    """
    build = A.current_build(vault.state_dir)
    if build is None:
        return CheckResult(False, "no artifacts: run `alaya compile`")
    manifest = build.manifest()
    known = {p: v["sha256"] for p, v in manifest.get("notes", {}).items()}
    malformed = set(manifest.get("malformed", {}))
    result = CheckResult(True, "artifacts match the vault")
    seen = set()
    for rel in vault.note_paths():
        seen.add(rel)
        try:
            digest = checksum((vault.root / rel).read_bytes())
        except OSError:
            continue
        if rel in malformed and rel not in known:
            continue
        if rel not in known:
            result.added.append(rel)
        elif known[rel] != digest:
            result.changed.append(rel)
    result.deleted = sorted((set(known) | malformed) - seen)
    if not vault.caller.is_owner:  # an agent hears only of the notes it may read
        result.added = [p for p in result.added if _readable(vault, p)]
        result.changed = [p for p in result.changed if _readable(vault, p)]
        result.deleted = [p for p in result.deleted
                          if vault.caller.may_read((manifest.get("notes", {}).get(p) or {})
                                                   .get("namespace", "\x00hidden"))]
    if embedder_id is None:
        try:
            embedder_id = get_embedder(vault.config).id
        except AlayaError:
            embedder_id = manifest["embedder"]["id"]
    if result.added or result.changed or result.deleted:
        result.ok, result.reason = False, "notes changed since the last compile"
    elif embedder_id != manifest["embedder"]["id"]:
        result.ok = False
        result.reason = (f"embedder changed ({manifest['embedder']['id']} → {embedder_id}): "
                         "compile re-embeds everything")
    elif not manifest.get("vectors_complete", True):
        result.ok, result.reason = False, "vectors incomplete (embedding failed last time)"
    return result
