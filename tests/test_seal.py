"""Every pickle alaya loads is sealed by this machine (vault_engine/seal.py; docs/security.md,
"Artifacts alaya loads"). A pickle planted where alaya looks — raw, sealed by another
machine's key, with a cut MAC, or sealed with a key others could read — is never unpickled:
the marker file its payload would create never appears, and the command still answers."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine import artifacts as A
from vault_engine import seal
from vault_engine.errors import NOTICES

from .test_architecture import ROOT, source_files

ALAYA = str(Path(sys.executable).parent / "alaya")


class Plant:
    """Unpickling this creates `marker` (a folder): proof that the pickle ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (self.marker,))


def run(vault: Path, *args: str) -> object:
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], catch_exceptions=False)


@pytest.fixture
def built(vault_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A compiled vault with two linked cards (their parse and compile caches written)."""
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    assert run(vault_path, "new", "--title", "Gateway restart", "--type", "gotcha",
               "--claim", "Restart drops notices").exit_code == 0
    assert run(vault_path, "new", "--title", "网关通知", "--type", "fact",
               "--claim", "重启前先通知 Telegram").exit_code == 0
    assert run(vault_path, "link", "Gateway restart", "网关通知", "--rel", "DEPENDS_ON").exit_code == 0
    assert run(vault_path, "compile").exit_code == 0
    assert (vault_path / ".alaya" / A.RECORD_CACHE).read_bytes().startswith(seal.MAGIC)
    return vault_path


def other_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, make: object) -> object:
    """`make()` run as another machine would: with a key of its own."""
    mine = os.environ["ALAYA_CONFIG_DIR"]
    monkeypatch.setenv("ALAYA_CONFIG_DIR", str(tmp_path / "other-machine"))
    try:
        return make()  # type: ignore[operator]
    finally:
        monkeypatch.setenv("ALAYA_CONFIG_DIR", mine)


def planted_cache(kind: str, vault: Path, purpose: str, marker: Path,
                  monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> bytes:
    """The bytes of a cache file carrying the payload, in one of the four ways."""
    payload = pickle.dumps(Plant(marker))
    if kind == "raw":
        return payload
    if kind == "other-key":
        blob = other_machine(monkeypatch, tmp_path,
                             lambda: seal.dumps(vault, purpose, Plant(marker)))
        assert isinstance(blob, bytes) and blob.startswith(seal.MAGIC)
        return blob
    own = seal.dumps(vault, purpose, Plant(marker))
    assert own is not None
    if kind == "cut-mac":
        return own[:len(seal.MAGIC) + 16]
    assert kind == "readable-key"
    seal.key_path().chmod(0o644)  # the seal is right, but others could have made it
    return own


KINDS = ["raw", "other-key", "cut-mac", "readable-key"]


@pytest.mark.parametrize("kind", KINDS)
def test_planted_compile_cache_never_runs(built: Path, kind: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    cache = built / ".alaya" / A.RECORD_CACHE
    cache.write_bytes(planted_cache(kind, built, "records", marker, monkeypatch, tmp_path))
    result = run(built, "compile", "--full", "--json")
    assert not marker.exists()
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["notes"] >= 2 and stats["parsed"] == stats["notes"]  # rebuilt from the notes
    if kind == "readable-key":
        assert result.stderr.count("not used as this machine's key") == 1
        assert "group or others may read or write it (mode 644)" in result.stderr
        assert cache.read_bytes().startswith(seal.MAGIC)  # left as it was: never rewritten …
        assert seal.load(cache, built, "records") is None  # … and never loaded
    else:
        # a fresh cache of our own replaced it, and the next compile starts from it
        assert cache.read_bytes().startswith(seal.MAGIC)
        again = json.loads(run(built, "compile", "--full", "--json").stdout)
        assert not marker.exists() and again["notes"] == stats["notes"]
        state = seal.load(cache, built, "records")
        assert isinstance(state, dict) and len(state["records"]) == stats["notes"]


@pytest.mark.parametrize("kind", KINDS)
def test_planted_note_cache_never_runs(built: Path, kind: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_engine.store.vault import PARSED_CACHE

    marker = tmp_path / "ran"
    cache = built / ".alaya" / PARSED_CACHE
    assert seal.load(cache, built, "notes") is not None  # a real one was there
    before = json.loads(run(built, "lint", "--format", "json").stdout)
    cache.write_bytes(planted_cache(kind, built, "notes", marker, monkeypatch, tmp_path))
    shown = run(built, "show", "网关通知", "--json")
    linted = run(built, "lint", "--format", "json")
    assert not marker.exists()
    assert shown.exit_code == 0 and json.loads(shown.stdout)["title"] == "网关通知"
    assert json.loads(linted.stdout) == before  # the same answer, from the notes themselves


def graph_planted(kind: str, vault: Path, marker: Path, monkeypatch: pytest.MonkeyPatch,
                  tmp_path: Path) -> A.Build:
    """The current build's graph.pickle replaced by the payload, its manifest seal `kind`."""
    build = A.current_build(vault / ".alaya")
    assert build is not None
    payload = pickle.dumps(Plant(marker))
    build.path(A.GRAPH).write_bytes(payload)
    manifest = build.manifest()
    good = manifest[A.SEALS][A.GRAPH]
    if kind == "raw":
        seal_hex = good  # the old seal: it does not match the new bytes
    elif kind == "other-key":
        seal_hex = other_machine(monkeypatch, tmp_path, lambda: seal.sign(vault, "graph", payload))
    elif kind == "cut-mac":
        seal_hex = str(seal.sign(vault, "graph", payload))[:32]
    else:
        seal_hex = seal.sign(vault, "graph", payload)
        seal.key_path().chmod(0o644)
    manifest[A.SEALS][A.GRAPH] = seal_hex
    build.path(A.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return build


@pytest.mark.parametrize("kind", KINDS)
def test_planted_graph_is_reported_and_compile_rebuilds_it(
        built: Path, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    graph_planted(kind, built, marker, monkeypatch, tmp_path)
    out = tmp_path / "g.graphml"
    refused = run(built, "export", "--format", "graphml", "--output", str(out), "--json")
    assert not marker.exists()
    if kind == "readable-key":
        # no usable key: nothing is unpickled, the graph is built in memory instead
        assert refused.exit_code == 0, refused.output
        assert json.loads(refused.stdout)["nodes"] >= 2
        assert refused.stderr.count("not used as this machine's key") == 1
        return
    assert refused.exit_code == 1
    error = json.loads(refused.stdout)
    assert error["error"] == "SealError" and "not sealed by this machine's key" in error["message"]
    assert error["fix"] == "run `alaya compile` to rebuild it" and not out.exists()
    # the vault did not change, yet compile does not call the planted build up to date
    compiled = json.loads(run(built, "compile", "--json").stdout)
    assert compiled["build"] and not compiled.get("up_to_date")
    exported = run(built, "export", "--format", "graphml", "--output", str(out), "--json")
    assert exported.exit_code == 0 and not marker.exists()
    graph = nx.read_graphml(out)
    assert sorted(d["title"] for _, d in graph.nodes(data=True) if d.get("kind") == "card") == \
        ["Gateway restart", "网关通知"]


def test_planted_graph_is_not_carried_into_the_next_build(
        built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A body edit leaves the graph's inputs alone, so a compile copies the previous graph —
    only if its seal holds; a planted one is rebuilt, never published under a new seal."""
    marker = tmp_path / "ran"
    planted = graph_planted("other-key", built, marker, monkeypatch, tmp_path)
    card = next((built / "cards").rglob("Gateway restart.md"))
    card.write_text(card.read_text("utf-8") + "\nMore words in the body.\n", encoding="utf-8")
    assert run(built, "compile").exit_code == 0
    build = A.current_build(built / ".alaya")
    assert build is not None and build.build_id != planted.build_id
    assert build.path(A.GRAPH).read_bytes() != planted.path(A.GRAPH).read_bytes()
    assert build.graph().number_of_nodes() >= 2 and not marker.exists()


def test_a_sealed_graph_is_copied_when_unchanged(built: Path) -> None:
    first = A.current_build(built / ".alaya")
    assert first is not None and first.graph_sealed()
    card = next((built / "cards").rglob("Gateway restart.md"))
    card.write_text(card.read_text("utf-8") + "\nA body edit.\n", encoding="utf-8")
    assert run(built, "compile").exit_code == 0
    second = A.current_build(built / ".alaya")
    assert second is not None and second.build_id != first.build_id
    assert second.path(A.GRAPH).read_bytes() == first.path(A.GRAPH).read_bytes()
    assert second.manifest()[A.SEALS] == first.manifest()[A.SEALS] and second.graph_sealed()
    # and it is still the plain networkx pickle the design names
    with second.path(A.GRAPH).open("rb") as fh:
        assert isinstance(pickle.load(fh), nx.MultiDiGraph)


def test_the_installed_command_never_runs_a_planted_pickle(built: Path, tmp_path: Path) -> None:
    """The real process: every pickle location planted at once, then the commands that read
    them — nothing runs, each answers."""
    from vault_engine.store.vault import PARSED_CACHE

    marker = tmp_path / "ran"
    payload = pickle.dumps(Plant(marker))
    (built / ".alaya" / A.RECORD_CACHE).write_bytes(payload)
    (built / ".alaya" / PARSED_CACHE).write_bytes(payload)
    build = A.current_build(built / ".alaya")
    assert build is not None
    build.path(A.GRAPH).write_bytes(payload)
    env = dict(os.environ, NO_COLOR="1")

    def alaya(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([ALAYA, "--vault", str(built), *args], capture_output=True,
                              text=True, env=env, timeout=300)

    shown = alaya("show", "Gateway restart", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["title"] == "Gateway restart"
    exported = alaya("export", "--format", "graphml", "--output", str(tmp_path / "g.graphml"))
    assert exported.returncode == 1 and "Traceback" not in exported.stderr
    assert exported.stderr.strip().splitlines()[-1].startswith("✗ ")
    assert "graph.pickle is not sealed by this machine's key" in exported.stderr
    assert alaya("compile").returncode == 0
    recalled = alaya("recall", "gateway restart", "--json")
    assert recalled.returncode == 0
    assert "Gateway restart" in [n["title"] for n in json.loads(recalled.stdout)["nodes"]]
    assert alaya("export", "--format", "graphml", "--output",
                 str(tmp_path / "g.graphml")).returncode == 0
    assert not marker.exists()


# -- the key -------------------------------------------------------------------------------
def test_key_is_made_once_private_and_outside_the_vault(tmp_path: Path) -> None:
    key = seal.machine_key(tmp_path / "vault")
    path = seal.key_path()
    assert key is not None and len(key) == 32
    assert path.parent == Path(os.environ["ALAYA_CONFIG_DIR"])
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert seal.machine_key(tmp_path / "vault") == key
    assert [p.name for p in path.parent.iterdir()] == [seal.KEY_FILE]  # no temp file left


def test_config_folder_follows_xdg_then_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ALAYA_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert seal.key_path() == tmp_path / "xdg" / "alaya" / seal.KEY_FILE
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")
    assert seal.key_path() == Path.home() / ".config" / "alaya" / seal.KEY_FILE
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert seal.machine_key() is not None
    assert (Path(os.environ["HOME"]) / ".config" / "alaya" / seal.KEY_FILE).exists()


_RACE = """
import os, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
from vault_engine import seal
print(seal.machine_key().hex())
"""


def test_concurrent_processes_agree_on_one_key(tmp_path: Path) -> None:
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _RACE, str(ROOT), str(go)],
                              stdout=subprocess.PIPE, text=True) for _ in range(8)]
    go.touch()
    keys = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(keys) == 1 and len(next(iter(keys))) == 64
    assert keys == {seal.key_path().read_text().strip()}
    assert [p.name for p in seal.key_path().parent.iterdir()] == [seal.KEY_FILE]


def refused(vault: Path) -> str:
    NOTICES.clear()
    assert seal.machine_key(vault) is None
    assert len(NOTICES) == 1
    return NOTICES.pop()


def test_key_readable_by_others_is_refused(tmp_path: Path) -> None:
    assert seal.machine_key() is not None
    seal.key_path().chmod(0o644)
    assert "group or others may read or write it (mode 644)" in refused(tmp_path)
    seal.key_path().chmod(0o620)
    assert "mode 620" in refused(tmp_path)


def test_key_of_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert seal.machine_key() is not None
    if os.geteuid() == 0:
        os.chown(seal.key_path(), 65534, 65534)  # really someone else's
    else:
        monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)  # we are someone else
    assert "not to you" in refused(tmp_path)


def test_key_in_a_folder_others_may_write_is_refused(tmp_path: Path) -> None:
    assert seal.machine_key() is not None
    seal.key_path().parent.chmod(0o777)
    assert "its folder is writable by others" in refused(tmp_path)


def test_key_inside_the_vault_is_refused(vault_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_CONFIG_DIR", str(vault_path / "cards" / "keys"))
    assert "inside the vault" in refused(vault_path)
    assert not (vault_path / "cards" / "keys").exists()  # nothing made in the vault


def test_symlinked_or_malformed_key_is_refused(tmp_path: Path) -> None:
    path = seal.key_path()
    path.parent.mkdir(mode=0o700, parents=True)
    real = tmp_path / "elsewhere.key"
    real.write_text("ab" * 32)
    real.chmod(0o600)
    path.symlink_to(real)
    assert "a symlink" in refused(tmp_path / "vault")
    path.unlink()
    path.write_text("not a key\n")
    path.chmod(0o600)
    assert "64 hex digits" in refused(tmp_path / "vault")


@contextlib.contextmanager
def read_only_home(where: Path) -> Iterator[Path]:
    """A home folder nobody may write: a tmpfs remounted read-only where root allows it,
    else a folder without write permission."""
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
                             capture_output=True).returncode == 0
    if mounted:
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
    else:
        where.chmod(0o500)
    try:
        yield where
    finally:
        if mounted:
            subprocess.run(["umount", str(where)], check=True)
        else:
            where.chmod(0o700)


@pytest.mark.parametrize("how", ["read-only home", "a file in the way"])
def test_no_key_can_be_made_alaya_still_works_and_loads_no_pickle(
        built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """No config folder can be made (a read-only home, or a file where it would go): every
    command works, nothing is unpickled, and it is said once per command."""
    with contextlib.ExitStack() as stack:
        if how == "read-only home":
            home = stack.enter_context(read_only_home(tmp_path / "ro-home"))
            monkeypatch.setenv("ALAYA_CONFIG_DIR", str(home / ".config" / "alaya"))
        else:
            blocker = tmp_path / "not-a-folder"
            blocker.write_text("")
            monkeypatch.setenv("ALAYA_CONFIG_DIR", str(blocker / "alaya"))
        without_a_key(built, tmp_path)


def without_a_key(built: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (built / ".alaya" / A.RECORD_CACHE).write_bytes(pickle.dumps(Plant(marker)))
    (built / ".alaya" / A.CURRENT).unlink()  # a first build, made without a key
    compiled = run(built, "compile", "--json")
    assert compiled.exit_code == 0 and json.loads(compiled.stdout)["notes"] >= 2
    assert compiled.stderr.count("no machine key can be made here") == 1
    out = tmp_path / "g.graphml"
    exported = run(built, "export", "--format", "graphml", "--output", str(out), "--json")
    assert exported.exit_code == 0 and json.loads(exported.stdout)["edges"] >= 1
    assert exported.stderr.count("alaya loads no pickle") == 1
    build = A.current_build(built / ".alaya")
    assert build is not None and build.manifest()[A.SEALS] == {A.GRAPH: None}
    assert run(built, "show", "Gateway restart").exit_code == 0
    assert not marker.exists()


# -- the guard: nothing else in the code loads an executable format ------------------------
EXECUTABLE_LOADS = {("pickle", "load"), ("pickle", "loads"), ("pickle", "Unpickler"),
                    ("marshal", "load"), ("marshal", "loads"), ("shelve", "open"),
                    ("dill", "load"), ("dill", "loads"), ("joblib", "load"),
                    ("torch", "load"), ("cloudpickle", "loads")}


def executable_loads(files: list[Path], allowed: Path) -> list[str]:
    """Every call that can run code from bytes — pickle/marshal/shelve/dill/joblib/torch
    loads, and np.load with allow_pickle=True — outside `allowed` (seal.py)."""
    found = []
    for f in files:
        if f == allowed:
            continue
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                name = owner.id if isinstance(owner, ast.Name) else ""
                if (name, node.func.attr) in EXECUTABLE_LOADS:
                    found.append(f"{f.name}:{node.lineno} {name}.{node.func.attr}")
                if node.func.attr == "load" and any(
                        k.arg == "allow_pickle" and not (isinstance(k.value, ast.Constant)
                                                         and k.value.value is False)
                        for k in node.keywords):
                    found.append(f"{f.name}:{node.lineno} load(allow_pickle=…)")
            if isinstance(node, ast.ImportFrom) and node.module in {m for m, _ in EXECUTABLE_LOADS}:
                found += [f"{f.name}:{node.lineno} from {node.module} import {a.name}"
                          for a in node.names if (node.module, a.name) in EXECUTABLE_LOADS]
    return found


def test_only_the_seal_module_unpickles() -> None:
    assert executable_loads(source_files(ROOT), ROOT / "vault_engine" / "seal.py") == []


def test_the_unpickle_guard_can_fail(tmp_path: Path) -> None:
    planted = tmp_path / "bad.py"
    planted.write_text("import pickle, numpy as np\nfrom marshal import loads\n"
                       "pickle.load(open('x', 'rb'))\nnp.load('a.npy', allow_pickle=True)\n")
    assert sorted(executable_loads([planted], tmp_path / "seal.py")) == [
        "bad.py:2 from marshal import loads", "bad.py:3 pickle.load", "bad.py:4 load(allow_pickle=…)"]


def test_doctor_names_a_foreign_graph_and_a_refused_key(built: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def checks() -> dict[str, dict[str, object]]:
        out = run(built, "doctor", "--json")
        return {c["name"]: c for c in json.loads(out.stdout)["checks"]}

    assert checks()["machine-key"]["ok"] is True and "graph-seal" not in checks()
    graph_planted("other-key", built, tmp_path / "ran", monkeypatch, tmp_path)
    found = checks()["graph-seal"]
    assert found["ok"] is False and found["fix"] == "alaya compile"
    assert "not sealed by this machine's key" in str(found["message"])
    assert run(built, "compile").exit_code == 0 and "graph-seal" not in checks()
    seal.key_path().chmod(0o644)
    key = checks()["machine-key"]
    assert key["ok"] is False and "mode 644" in str(key["message"])
    assert str(key["fix"]).startswith(f"rm {seal.key_path()}")
    assert not (tmp_path / "ran").exists()


def test_arrays_holding_python_objects_are_never_loaded(built: Path, tmp_path: Path) -> None:
    """`np.load` with a pickle inside: every .npy of the build replaced by an object array
    whose elements would run the payload. Recall refuses them unread, in one line with the
    fix, and answers again after `alaya compile --full`."""
    import numpy as np

    marker = tmp_path / "ran"
    build = A.current_build(built / ".alaya")
    assert build is not None
    planted = sorted(build.root.rglob("*.npy"))
    assert len(planted) > 20
    for path in planted:
        np.save(path, np.array([Plant(marker), Plant(marker)], dtype=object), allow_pickle=True)
    env = dict(os.environ, NO_COLOR="1")
    refused = subprocess.run([ALAYA, "--vault", str(built), "recall", "gateway", "--json"],
                             capture_output=True, text=True, env=env, timeout=300)
    assert not marker.exists()
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    error = json.loads(refused.stdout)
    assert error["error"] == "UnreadableArtifactError"
    assert "not an array alaya wrote" in error["message"]
    assert error["fix"] == "run `alaya compile --full`"
    assert run(built, "compile", "--full").exit_code == 0
    answer = run(built, "recall", "gateway restart", "--json")
    assert answer.exit_code == 0 and not marker.exists()
    assert "Gateway restart" in [n["title"] for n in json.loads(answer.stdout)["nodes"]]
