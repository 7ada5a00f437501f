"""The watcher: pure filter and batching, then the real watchdog observer on real files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from compilers.watch import Batcher, relevant, watch
from vault_engine import artifacts as A
from vault_engine.providers.embedding import HashEmbedder
from vault_engine.store.vault import Vault

OPTIONS = CompileOptions(embedder=HashEmbedder(64))


@pytest.mark.parametrize("rel,expected", [
    ("cards/gotcha/A.md", True), ("alaya.toml", True), ("cards/gotcha", True),
    (".git/index", False), (".alaya/builds/x/manifest.json", False),
    (".obsidian/workspace.json", False), (".trash/old.md", False),
    ("cards/.A.md.alaya-tmp-abc", False), ("cards/A.md.swp", False), ("cards/A.md~", False),
    ("cards/4913", False), ("attachments/diagram.png", False), ("", False),
])
def test_relevant(rel: str, expected: bool) -> None:
    assert relevant(rel) is expected


def test_batcher_debounces_and_caps_the_wait() -> None:
    b = Batcher(debounce=0.5, max_wait=2.0)
    assert not b.ready(0.0)
    b.add("a.md", 0.0)
    b.add("b.md", 0.3)
    assert not b.ready(0.6)  # only 0.3 s of quiet
    assert b.ready(0.8)
    assert b.drain() == ["a.md", "b.md"] and not b.ready(10)
    for i in range(30):  # a burst that never goes quiet still compiles after max_wait
        b.add(f"n{i}.md", i * 0.1)
    assert b.ready(2.0)


class Watching:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.stop = threading.Event()
        self.compiles: list[list[str]] = []
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        watch(self.vault, self.stop, on_compile=lambda ch, st: self.compiles.append(ch),
              on_error=lambda ch, exc: self.errors.append(str(exc)), debounce=0.2,
              max_wait=2.0, options=OPTIONS)

    def __enter__(self) -> Watching:
        self.thread.start()
        self.wait(lambda: len(self.compiles) >= 1)
        time.sleep(0.3)  # let the observer settle
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()

    def wait(self, predicate, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return
            time.sleep(0.05)
        raise AssertionError("timed out waiting for the watcher")


def _unit_notes(vault: Vault) -> set[str]:
    build = A.current_build(vault.state_dir)
    return {u["note"] for u in build.units()} if build else set()


def test_real_watcher_recompiles_on_save_delete_and_bad_notes(vault_path: Path) -> None:
    vault = Vault.open(vault_path)
    with Watching(vault) as w:
        (vault_path / "cards" / "fact").mkdir(parents=True)
        (vault_path / "cards" / "fact" / "A.md").write_text("---\nid: card-a\ntitle: A\n---\nx\n")
        w.wait(lambda: "card-a" in _unit_notes(vault))
        assert any("cards/fact/A.md" in c for c in w.compiles)
        # a malformed note is skipped, the watcher keeps going
        (vault_path / "cards" / "fact" / "bad.md").write_text("---\ntitle: [x\n---\n")
        (vault_path / "cards" / "fact" / "B.md").write_text("---\nid: card-b\ntitle: B\n---\ny\n")
        w.wait(lambda: "card-b" in _unit_notes(vault))
        # a deleted folder removes its notes
        shutil.rmtree(vault_path / "cards" / "fact")
        w.wait(lambda: "card-a" not in _unit_notes(vault))
        # changes under ignored folders do not trigger compiles
        before = len(w.compiles)
        (vault_path / ".obsidian" / "workspace.json").write_text("{}")
        time.sleep(0.8)
        assert len(w.compiles) == before
    assert w.errors == []


def test_real_watcher_coalesces_a_burst(vault_path: Path) -> None:
    vault = Vault.open(vault_path)
    with Watching(vault) as w:
        folder = vault_path / "cards" / "burst"
        folder.mkdir(parents=True)
        for i in range(300):  # like a git checkout
            (folder / f"n{i}.md").write_text(f"---\nid: card-n{i}\ntitle: N {i}\n---\n")
        w.wait(lambda: len({n for n in _unit_notes(vault) if n.startswith("card-n")}) == 300)
        assert len(w.compiles) - 1 <= 5  # a handful of batches, not 300 compiles


def test_watch_result_equals_full_compile(vault_path: Path, tmp_path: Path) -> None:
    """Parity: the artifacts the watcher leaves equal a from-scratch compile."""
    vault = Vault.open(vault_path)
    with Watching(vault) as w:
        for i in range(5):
            (vault_path / "cards" / f"p{i}.md").write_text(
                f"---\nid: card-p{i}\ntitle: P {i}\n---\nsee [[P {(i + 1) % 5}]]\n")
        w.wait(lambda: len([n for n in _unit_notes(vault) if n.startswith("card-p")]) == 5)
        (vault_path / "cards" / "p0.md").write_text("---\nid: card-p0\ntitle: P 0\n---\nedited\n")
        w.wait(lambda: "edited" in json.dumps(A.current_build(vault.state_dir).units()))
    watched = A.current_build(vault.state_dir)
    clone = tmp_path / "clone"
    shutil.copytree(vault_path, clone, ignore=shutil.ignore_patterns(".alaya"))
    compile_vault(Vault.open(clone), OPTIONS)
    fresh = A.current_build(Vault.open(clone).state_dir)
    for name in (A.DIGEST, A.GRAPH, A.UNITS, A.CLAIMS):
        assert watched.path(name).read_bytes() == fresh.path(name).read_bytes(), name


def test_watch_command_stops_cleanly_on_sigterm(vault_path: Path) -> None:
    alaya = Path(sys.executable).parent / "alaya"
    env = dict(os.environ, ALAYA_EMBED_PROVIDER="hash", NO_COLOR="1")
    proc = subprocess.Popen([str(alaya), "--vault", str(vault_path), "watch", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        first = json.loads(proc.stdout.readline())
        assert first["event"] == "compiled"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_new_top_level_folder_is_followed(vault_path: Path) -> None:
    vault = Vault.open(vault_path)
    with Watching(vault) as w:
        (vault_path / "projects" / "alpha").mkdir(parents=True)
        time.sleep(0.3)  # the folder is now watched; a note inside it must be seen
        (vault_path / "projects" / "alpha" / "Plan.md").write_text("---\nid: note-plan\n---\nx\n")
        w.wait(lambda: "note-plan" in _unit_notes(vault))
