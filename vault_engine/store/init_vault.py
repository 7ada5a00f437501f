"""`alaya init`: make a vault from `vault_template/`.

Files are copied only where missing — an existing file is never overwritten — then the vault
becomes a git repository whose first commit holds the template. On an existing vault nothing
changes and the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vault_engine.config import CONFIG_FILE, load_config
from vault_engine.errors import VaultNotFoundError

from . import history
from .vault import atomic_write

# Files in the template are stored under these names so packaging tools and git treat them
# as ordinary files; init gives them their real names.
RENAMES = {"dot-gitignore": ".gitignore", "dot-gitattributes": ".gitattributes",
           "dot-obsidian": ".obsidian", "dot-gitkeep": ".gitkeep"}


def template_dir() -> Path:
    """`vault_template/`, a sibling of this package both in a checkout and when installed."""
    path = Path(__file__).resolve().parents[2] / "vault_template"
    if not path.is_dir():
        raise VaultNotFoundError(f"vault template missing at {path}",
                                 fix="reinstall alaya-vault (`pip install --force-reinstall .`)")
    return path


def template_files() -> list[tuple[str, Path]]:
    """(vault-relative destination, source file) for every template file."""
    root = template_dir()
    out = []
    for src in sorted(root.rglob("*")):
        if not src.is_file() or "__pycache__" in src.parts:
            continue
        parts = [RENAMES.get(p, p) for p in src.relative_to(root).parts]
        out.append(("/".join(parts), src))
    return out


@dataclass(frozen=True)
class InitResult:
    root: Path
    created: tuple[str, ...]
    already: bool
    commit: str | None


def init_vault(path: Path, *, commit: bool = True) -> InitResult:
    root = Path(path).expanduser().resolve()
    already = (root / CONFIG_FILE).exists() and history.is_repo(root)
    root.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    for rel, src in template_files():
        dest = root / rel
        if dest.exists():
            continue
        atomic_write(dest, src.read_bytes())
        created.append(rel)
    was_repo = history.is_repo(root)
    history.init_repo(root)
    from .merge import register_driver

    register_driver(root)  # per-machine git config; .gitattributes comes from the template
    sha = None
    if commit and (created or not was_repo):
        config = load_config(root)
        message = ("init: alaya vault from template" if not already
                   else "init: add missing template files")
        message += "\n\n" + "\n".join(created)
        sha = history.commit_paths(root, created, message, config.git_identity())
    return InitResult(root=root, created=tuple(created), already=already and not created,
                      commit=sha)
