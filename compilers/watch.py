"""`alaya watch`: a thin shell around the incremental compile.

The filtering (`relevant`) and the debouncing (`Batcher`) are pure and tested on their own; the
loop only moves watchdog events into the batcher and calls `compile_vault` when a batch is
ready: after `debounce` seconds of quiet, or `max_wait` seconds after the first change of a
burst (a `git checkout` of a thousand files compiles once or twice, not a thousand times).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compilers.options import CompileOptions, CompileStats
from compilers.pipeline import compile_vault
from compilers.state import CompileState
from vault_engine.artifacts import RECORD_CACHE
from vault_engine.store.vault import TMP_MARKER, Vault

# Editor and OS droppings that never affect artifacts.
_IGNORED_SUFFIXES = (".swp", ".swx", ".swo", "~", ".tmp", ".crdownload", ".part")
_IGNORED_NAMES = frozenset({"4913", ".DS_Store", "Thumbs.db"})


def relevant(rel: str) -> bool:
    """Does a change at vault-relative `rel` matter to the artifacts?

    Ignored: anything under a dot-folder (`.git/`, `.alaya/`, `.obsidian/` with its workspace
    files, `.trash/`), dotfiles, alaya's own temp files, editor swap files.
    Relevant: markdown notes, `alaya.toml`, and folders (a deleted folder deletes notes).
    """
    parts = rel.replace("\\", "/").strip("/").split("/")
    if not parts or parts == [""]:
        return False
    if any(p.startswith(".") for p in parts):
        return False
    name = parts[-1]
    if TMP_MARKER in name or name in _IGNORED_NAMES or name.endswith(_IGNORED_SUFFIXES):
        return False
    if "." not in name:
        return True  # a folder (or an extensionless file): let the compile decide
    return name.endswith(".md") or rel == "alaya.toml"


@dataclass
class Batcher:
    """Collects changed paths; says when a batch is ready (quiet period or max wait)."""

    debounce: float = 0.5
    max_wait: float = 5.0
    pending: set[str] = field(default_factory=set)
    first: float | None = None
    last: float | None = None

    def add(self, rel: str, now: float) -> None:
        self.pending.add(rel)
        self.first = now if self.first is None else self.first
        self.last = now

    def ready(self, now: float) -> bool:
        if not self.pending or self.first is None or self.last is None:
            return False
        return now - self.last >= self.debounce or now - self.first >= self.max_wait

    def drain(self) -> list[str]:
        out = sorted(self.pending)
        self.pending.clear()
        self.first = self.last = None
        return out


OnCompile = Callable[[list[str], CompileStats], None]
OnError = Callable[[list[str], BaseException], None]


def watch(vault: Vault, stop: threading.Event, *, on_compile: OnCompile, on_error: OnError,
          debounce: float = 0.5, max_wait: float = 5.0, options: CompileOptions | None = None,
          initial: bool = True, save_every: float = 30.0,
          tick: Callable[[], Any] | None = None) -> None:
    """Compile once, then after every batch of relevant changes, until `stop` is set.
    `tick` is called between batches (the introspection schedule, compilers/schedule.py)."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    batcher = Batcher(debounce, max_wait)
    cond = threading.Condition()
    root = vault.root

    def rel_of(path: str | bytes) -> str | None:
        p = Path(path.decode() if isinstance(path, bytes) else path)
        try:
            return p.resolve().relative_to(root).as_posix() if p.is_absolute() else None
        except ValueError:
            return None

    observer = Observer()
    # Watch the root itself shallowly and each top-level folder recursively, so inotify never
    # descends into .git/ or .alaya/ (whose churn would cost watches and wake-ups).
    top: dict[str, Any] = {}

    def follow(folder: Path) -> None:
        if folder.name.startswith(".") or folder.is_symlink() or folder.name in top:
            return
        try:
            top[folder.name] = observer.schedule(handler, str(folder), recursive=True)
        except OSError:
            pass  # vanished before we could watch it

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if event.event_type in ("opened", "closed_no_write"):
                return
            for path in (event.src_path, getattr(event, "dest_path", "") or ""):
                rel = rel_of(path) if path else None
                if not rel:
                    continue
                if event.is_directory and "/" not in rel:
                    arrived = (event.event_type == "created"
                               or (event.event_type == "moved" and path == event.dest_path))
                    if arrived:
                        follow(root / rel)
                    elif event.event_type in ("deleted", "moved") and rel in top:
                        with contextlib.suppress(KeyError, OSError):
                            observer.unschedule(top.pop(rel))
                if relevant(rel):
                    with cond:
                        batcher.add(rel, time.monotonic())
                        cond.notify()

    handler = Handler()
    observer.schedule(handler, str(root), recursive=False)
    for child in sorted(root.iterdir()):
        if child.is_dir():
            follow(child)

    # Records, fragments and vectors stay in memory between compiles; the on-disk cache is
    # refreshed at most every `save_every` seconds and when the watcher stops.
    state = CompileState.load(vault.state_dir / RECORD_CACHE)
    saved = {"at": time.monotonic()}

    def run(changes: list[str]) -> None:
        try:
            stats = compile_vault(vault, options, state=state)
            if time.monotonic() - saved["at"] > save_every:
                state.save(vault.state_dir / RECORD_CACHE)
                saved["at"] = time.monotonic()
        except Exception as exc:  # the watcher survives anything one compile throws
            on_error(changes, exc)
        else:
            on_compile(changes, stats)

    observer.start()
    try:
        if initial:
            run([])
        while not stop.is_set():
            with cond:
                cond.wait(timeout=0.1)
                batch = batcher.drain() if batcher.ready(time.monotonic()) else None
            if batch:
                run(batch)
            elif tick is not None:
                tick()
    finally:
        observer.stop()
        observer.join(timeout=5)
        state.save(vault.state_dir / RECORD_CACHE)
