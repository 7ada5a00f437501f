"""Read your own writes: the incremental compile right after a write, so the next recall —
one-shot CLI, `alaya serve`, MCP — sees the new card, link, session or verdict.

Why a compile after the write rather than an overlay of uncompiled notes at query time
(docs/agents.md, docs/benchmarks.md "Read your writes"): recall stays exactly as fast and
exact as it is — the overlay would have to parse, embed and rank the new notes and patch the
graph on every query until someone compiles — and the write pays once: ~0.2 s in a fresh
process at 1k notes, ~1 s at 10k; a resident process (`alaya mcp`, `capture --follow`) keeps
the compile state in memory and pays less.

A vault that was never compiled is left alone (its first compile embeds everything: run
`alaya compile` once, or `alaya watch`); so is one with `[compile] after_write = false`.
A refresh that fails never fails the write: the write is committed, the error is reported,
and recall says `stale: true` until a compile succeeds.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from vault_engine import artifacts as A
from vault_engine.store.vault import Vault

from .state import CompileState


@dataclass
class Refresh:
    """What a refresh did: `build` is the new build id ("" when the artifacts already matched
    the vault), None when it did not run — then `skipped` says why, or `error` what failed."""

    build: str | None = None
    ms: float = 0.0
    skipped: str | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"build": self.build, "ms": self.ms, "skipped": self.skipped,
                "error": self.error}


class Refresher:
    """Compiles a vault after each write. `resident`: keep the compile state in memory
    between refreshes (saved at most every `save_every` seconds — the save costs ~0.4 s at
    10k notes, so not after every write — and by `close`)."""

    def __init__(self, vault: Vault, *, resident: bool = False,
                 save_every: float = 300.0) -> None:
        self.vault = vault
        self.resident = resident
        self.save_every = save_every
        self._state: CompileState | None = None
        self._saved = time.monotonic()
        self._dirty = False
        self._lock = threading.Lock()  # an MCP server runs tools on worker threads

    def __call__(self, *, first: bool = False) -> Refresh:
        """Refresh after a write. `first`: compile a vault that was never compiled too (a
        resident server answering its first recall)."""
        vault = self.vault
        if not vault.config.get("compile", "after_write") and not first:
            return Refresh(skipped="[compile] after_write = false")
        if A.current_build(vault.state_dir) is None and not first:
            return Refresh(skipped="never compiled: run `alaya compile` once")
        with self._lock:
            return self._compile()

    def _compile(self) -> Refresh:
        from .pipeline import compile_vault

        vault = self.vault
        start = time.perf_counter()
        try:
            if self.resident and self._state is None:
                self._state = CompileState.load(vault.state_dir / A.RECORD_CACHE)
            stats = compile_vault(vault, state=self._state)
        except Exception as exc:  # noqa: BLE001 - the write stands; recall will say stale
            return Refresh(error=f"{type(exc).__name__}: {exc}",
                           ms=round((time.perf_counter() - start) * 1000, 1))
        if self._state is not None:
            self._dirty = True
            if time.monotonic() - self._saved > self.save_every:
                self._save()
        return Refresh(build=stats.build, ms=round((time.perf_counter() - start) * 1000, 1))

    def close(self) -> None:
        """Persist the resident compile state (the next process starts from it)."""
        with self._lock:
            self._save()

    def _save(self) -> None:
        if self._state is not None and self._dirty:
            self._state.save(self.vault.state_dir / A.RECORD_CACHE)
            self._dirty = False
        self._saved = time.monotonic()


def refresh_after_write(vault: Vault) -> Refresh:
    """One write, one refresh (a one-shot CLI command)."""
    return Refresher(vault)()
