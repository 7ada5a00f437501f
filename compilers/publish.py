"""Compile stage 5, publish: the manifest written into the finished build directory, the
directory renamed into place, then `current.json` swapped atomically — readers never see a
half-built index — and builds beyond the last two removed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from vault_engine import artifacts as A
from vault_engine.store.vault import atomic_write

from .options import CompileStats, Timer

KEEP_BUILDS = 2


def publish(state: Path, tmp: Path, build_id: str, manifest: dict[str, Any],
            stats: CompileStats, timer: Timer,
            digests: dict[str | None, str] | None = None, claims: str | None = None) -> None:
    timer.lap("publish")
    timer.total()
    manifest["timings_ms"] = stats.ms
    (tmp / A.MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, separators=(",", ":"))
                                  + "\n",
                                  encoding="utf-8")
    final = state / A.BUILDS / build_id
    os.replace(tmp, final)
    try:
        atomic_write(state / A.CURRENT, json.dumps({"schema": A.SCHEMA_VERSION,
                                                    "build": build_id}).encode())
    except BaseException:
        shutil.rmtree(final, ignore_errors=True)  # never published: no build left half-way
        raise
    if digests is not None:
        try:
            publish_digests(state, digests, claims)
        except BaseException:
            # the build is published, the agents' digests are not all of it: without the
            # public digest the next compile is not "up to date" and writes them again
            (state / A.PUBLIC_DIGEST).unlink(missing_ok=True)
            raise
    builds = sorted((p for p in (state / A.BUILDS).iterdir() if p.is_dir()),
                    key=lambda p: p.stat().st_mtime_ns)
    for old in builds[:-KEEP_BUILDS]:
        if old.name != build_id:
            shutil.rmtree(old, ignore_errors=True)


def publish_digests(state: Path, digests: dict[str | None, str],
                    claims: str | None = None) -> None:
    """`.alaya/agent-digest.json` and `.alaya/claims.jsonl` (shared only) and
    `.alaya/digest/<agent>.json`, each replaced atomically; the digest of an agent that no
    longer has notes is removed."""
    if claims is not None:
        atomic_write(state / A.PUBLIC_CLAIMS, claims.encode("utf-8"), durable=False)
    folder = state / A.AGENT_DIGESTS
    for name, text in digests.items():
        target = state / A.PUBLIC_DIGEST if name is None else folder / f"{name}.json"
        atomic_write(target, text.encode("utf-8"), durable=False)
        if name is not None:
            os.chmod(target, 0o600)  # one agent's memory: not for every local user either
    if folder.is_dir():
        for old in folder.glob("*.json"):
            if old.stem not in digests:
                old.unlink(missing_ok=True)
