"""Shared fixtures: an isolated home (no global git identity), real vaults in tmp_path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vault_engine.store.init_vault import init_vault
from vault_engine.store.vault import Vault

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def machine_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the run (the machine's word table is built once, not per HOME)."""
    return tmp_path_factory.mktemp("cache")


def module_machine(tmp_path_factory: pytest.TempPathFactory) -> pytest.MonkeyPatch:
    """For a module-scoped fixture: a fresh HOME without git config, the hash embedder, a
    cache of its own and no agent; the caller undoes the patch when it is done."""
    mp = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("home")
    mp.setenv("HOME", str(home))
    mp.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    mp.setenv("ALAYA_EMBED_PROVIDER", "hash")
    mp.setenv("ALAYA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    mp.delenv("ALAYA_AGENT", raising=False)
    return mp


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                 machine_cache: Path) -> Path:
    """A fresh HOME with no git config: alaya must commit without a user identity; and a
    fresh config folder, so each test has a machine key of its own (vault_engine/seal.py) —
    the folder alaya would pick in that HOME anyway."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ALAYA_CACHE_DIR", str(machine_cache))
    monkeypatch.setenv("ALAYA_CONFIG_DIR", str(home / ".config" / "alaya"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    from vault_engine.errors import NOTICES

    NOTICES.clear()  # what one test's command had to say is not the next test's
    for var in ("ALAYA_VAULT", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                "GIT_COMMITTER_EMAIL", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def vault_path(tmp_path: Path) -> Path:
    path = tmp_path / "vault"
    init_vault(path)
    return path


@pytest.fixture
def zh_vault(vault_path: Path) -> Path:
    """A vault whose wall-clock times are Shanghai time ([vault] timezone)."""
    toml = vault_path / "alaya.toml"
    toml.write_text(toml.read_text("utf-8").replace('timezone = ""', 'timezone = "Asia/Shanghai"'),
                    "utf-8")
    return vault_path


@pytest.fixture
def vault(vault_path: Path) -> Vault:
    return Vault.open(vault_path)


@pytest.fixture
def awkward_vault(tmp_path: Path) -> Path:
    """The awkward-YAML fixture vault, copied, as an initialised git vault."""
    path = tmp_path / "awkward"
    shutil.copytree(FIXTURES / "awkward", path)
    init_vault(path)
    return path


def git_log(path: Path) -> list[str]:
    import git

    repo = git.Repo(path)
    return [c.message.strip() for c in repo.iter_commits()]


def git_show_files(path: Path, rev: str = "HEAD") -> list[str]:
    import git

    repo = git.Repo(path)
    return sorted(repo.git.show("--name-only", "--format=", rev).splitlines())


PERSON = ("Ann Person", "ann@example.org")


def commit_as_person(path: Path, message: str = "my notes", who: tuple[str, str] = PERSON) -> str:
    """Commit every file in the working tree as a person would (not as alaya): alaya never
    commits a person's untracked note under its own name, so fixtures that hand-write notes
    commit them first, like the person who wrote them."""
    import git

    repo = git.Repo(path)
    repo.git.add("-A")
    env = {"GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1],
           "GIT_COMMITTER_NAME": who[0], "GIT_COMMITTER_EMAIL": who[1]}
    with repo.git.custom_environment(**env):
        repo.git.commit("-q", "--allow-empty", "-m", message)
    return str(repo.head.commit.hexsha)


def commit_as_alaya(path: Path, message: str = "distill: earlier cards") -> str:
    """Commit every file as alaya did (its author and trailer): notes a test writes by hand
    to stand for cards alaya distilled earlier, which maintenance may change."""
    import git

    repo = git.Repo(path)
    repo.git.add("-A")
    env = {"GIT_AUTHOR_NAME": "alaya", "GIT_AUTHOR_EMAIL": "alaya@localhost",
           "GIT_COMMITTER_NAME": "alaya", "GIT_COMMITTER_EMAIL": "alaya@localhost"}
    with repo.git.custom_environment(**env):
        repo.git.commit("-q", "--allow-empty", "-m",
                        f"{message}\n\nAlaya-Command: distill\nAlaya-Agent: none")
    return str(repo.head.commit.hexsha)
