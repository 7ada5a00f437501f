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
             stats: CompileStats, timer: Timer) -> None:
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
