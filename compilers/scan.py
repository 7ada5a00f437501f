"""Compile stage 1, scan: stat every note; a file whose size and mtime match the record cache is
not read, one whose bytes hash the same is not parsed; only changed notes are parsed. A note
that cannot be read or parsed is reported (`Malformed`) and the rest compiles."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from vault_engine.errors import NoteParseError
from vault_engine.store.notes import checksum, decode_note, parse_note
from vault_engine.store.vault import Vault

from .options import CompileStats, Malformed
from .records import NoteRecord, build_record


def scan(vault: Vault, cache: dict[str, tuple[int, int, NoteRecord]], stats: CompileStats,
         full: bool = False) -> dict[str, tuple[int, int, NoteRecord]]:
    """Every note's record, re-parsing only what changed."""
    limit = int(vault.config.get("vault", "max_note_bytes"))
    fresh: dict[str, tuple[int, int, NoteRecord]] = {}
    base = str(vault.root)
    for rel in vault.note_paths():
        full_path = os.path.join(base, rel)
        try:
            st = os.stat(full_path)
        except OSError:
            continue  # deleted between walk and stat
        old = cache.get(rel)
        if not full and old is not None and old[0] == st.st_mtime_ns and old[1] == st.st_size:
            fresh[rel] = old
            stats.unchanged += 1
            continue
        if st.st_size > limit:
            stats.malformed.append(Malformed(rel, None, f"file is {st.st_size:,} bytes, over the "
                                             f"{limit:,}-byte limit", "split it or raise [vault] "
                                             "max_note_bytes"))
            continue
        try:
            with open(full_path, "rb") as fh:
                data = fh.read()
            digest = checksum(data)
            if not full and old is not None and old[2].checksum == digest:
                fresh[rel] = (st.st_mtime_ns, st.st_size, old[2])
                stats.unchanged += 1
                continue
            note = parse_note(rel, decode_note(data, rel), check=digest)
        except NoteParseError as exc:
            stats.malformed.append(Malformed(rel, exc.line, exc.message, exc.fix or ""))
            continue
        except OSError as exc:
            stats.malformed.append(Malformed(rel, None, f"cannot read: {exc.strerror}",
                                             "check the file's permissions"))
            continue
        fresh[rel] = (st.st_mtime_ns, st.st_size, build_record(note))
        stats.parsed += 1
    stats.deleted = len(set(cache) - set(fresh))
    return fresh


def first_seen_times(prev: dict[str, Any] | None, records: list[NoteRecord], now: str) -> dict[str, str]:
    old = (prev or {}).get("notes", {})
    return {r.path: (old.get(r.path) or {}).get("first_seen") or now for r in records}


def parse_time(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
