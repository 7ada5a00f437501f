"""`alaya init`: make a vault from `vault_template/`, or adopt a folder of notes in place.

Files are copied only where missing — an existing file is never overwritten (a .gitignore,
.gitattributes or AGENTS.md gets alaya's lines in a marked block instead) — then the folder
becomes a git repository (or stays the one it is) and one commit, authored by alaya, holds
alaya's files. On an existing vault nothing changes and the result says so.
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


# Files a person may already have: alaya adds its lines in a marked block, never replaces them.
GIT_BLOCK_START = "# >>> alaya (managed by `alaya init`; edit outside this block) >>>"
GIT_BLOCK_END = "# <<< alaya <<<"
AGENTS_BLOCK = "agents"
MERGED_FILES = (".gitignore", ".gitattributes", "AGENTS.md")


@dataclass(frozen=True)
class InitResult:
    root: Path
    created: tuple[str, ...]
    already: bool
    commit: str | None
    extended: tuple[str, ...] = ()  # existing files that got alaya's marked block
    kept: tuple[str, ...] = ()  # template files not added, with the reason ("path: why")
    adopted: int = 0  # notes that were already in the folder (never touched)
    commit_error: str | None = None  # the files are written; the commit failed


def with_git_block(text: str, lines: str) -> str:
    """`text` (a .gitignore or .gitattributes) with alaya's lines in its marked block."""
    body = lines if lines.endswith("\n") else lines + "\n"
    block = f"{GIT_BLOCK_START}\n{body}{GIT_BLOCK_END}\n"
    start = text.find(GIT_BLOCK_START)
    end = text.find(GIT_BLOCK_END, start + 1) if start >= 0 else -1
    if start >= 0 and end >= 0:
        stop = end + len(GIT_BLOCK_END)
        stop += 1 if text[stop:stop + 1] == "\n" else 0
        return text[:start] + block + text[stop:]
    sep = "" if not text or text.endswith("\n") else "\n"
    return f"{text}{sep}\n{block}" if text.strip() else block


def _merged(rel: str, existing: str, template: str) -> str:
    """The existing file with alaya's part added — or unchanged when it already has it (a
    vault an earlier alaya made, whose files are the template's)."""
    first = template.splitlines()[0] if template else ""
    if rel == "AGENTS.md":
        if existing.startswith(first):
            return existing  # alaya's own AGENTS.md
    elif GIT_BLOCK_START not in existing:
        have = {line.strip() for line in existing.splitlines()}
        if all(line.strip() in have for line in template.splitlines()
               if line.strip() and not line.lstrip().startswith("#")):
            return existing
    if rel == "AGENTS.md":
        from .blocks import replace_block

        return replace_block(existing, AGENTS_BLOCK, template, path=rel)
    return with_git_block(existing, template)


def init_vault(path: Path, *, commit: bool = True) -> InitResult:
    """Make `path` an alaya vault, or adopt the notes (and git repository) already there.

    Nothing that exists is overwritten: missing template files are added; an existing
    .gitignore, .gitattributes or AGENTS.md gets alaya's lines in a marked block at its end
    (its own bytes stay as they were); a folder that already has Obsidian settings keeps
    them. Only alaya's files are committed, as alaya, and never one the vault's .gitignore
    ignores. `core.quotepath` is turned off so Chinese file names read plainly in git.
    """
    root = Path(path).expanduser().resolve()
    if root.exists() and not root.is_dir():
        from vault_engine.errors import UsageError

        raise UsageError(f"{root} is a file, not a folder", fix="pass a folder for the vault")
    already = (root / CONFIG_FILE).exists() and history.is_repo(root)
    folders = {root / p for rel, _ in template_files() for p in Path(rel).parents}
    existed = {f for f in folders if f.exists()}
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from vault_engine.errors import refused_write

        raise (refused_write(exc, root) or exc) from exc
    had_obsidian = (root / ".obsidian").is_dir()
    adopted = sum(1 for p in root.rglob("*.md")
                  if ".git" not in p.parts and ".alaya" not in p.parts) if not already else 0
    created: list[str] = []
    extended: list[str] = []
    kept: list[str] = []
    originals: dict[str, bytes] = {}
    made_repo = not history.is_repo(root)
    try:
        sha, error = _populate(root, already, had_obsidian, created, extended, kept,
                               originals, commit)
    except Exception as exc:
        from vault_engine.errors import refused_write

        refused = refused_write(exc, getattr(exc, "filename", None) or root)
        if refused is None:
            raise
        # the disk refused: as if it never ran
        _undo(root, created, originals, made_repo, sorted(folders - existed, key=str))
        raise refused from exc
    return InitResult(root=root, created=tuple(created),
                      already=already and not (created or extended),
                      commit=sha, extended=tuple(extended), kept=tuple(kept), adopted=adopted,
                      commit_error=error)


def _populate(root: Path, already: bool, had_obsidian: bool, created: list[str],
              extended: list[str], kept: list[str], originals: dict[str, bytes],
              commit: bool) -> tuple[str | None, str | None]:
    """The template files, the repository and its first commit (init_vault's work)."""
    for rel, src in template_files():
        dest = root / rel
        if rel.startswith(".obsidian/") and had_obsidian:
            if not dest.exists():
                kept.append(f"{rel}: this vault has its own Obsidian settings")
            continue
        if dest.exists():
            if rel in MERGED_FILES and dest.is_file():
                old = dest.read_text(encoding="utf-8", errors="surrogateescape")
                new = _merged(rel, old, src.read_text(encoding="utf-8"))
                if new != old:
                    originals[rel] = dest.read_bytes()
                    atomic_write(dest, new.encode("utf-8", errors="surrogateescape"))
                    extended.append(rel)
            continue
        created.append(rel)
        atomic_write(dest, src.read_bytes())
    was_repo = history.is_repo(root)
    history.init_repo(root)
    history.configure_repo(root)
    from .merge import register_driver

    register_driver(root)  # per-machine git config; .gitattributes comes from the template
    changed = created + extended
    ignored = set(history.ignored(root, created))
    kept += [f"{rel}: ignored by the vault's .gitignore (written, not committed)"
             for rel in created if rel in ignored]
    sha = error = None
    to_commit = [rel for rel in changed if rel not in ignored]
    if commit and to_commit:
        config = load_config(root)
        message = ("init: alaya vault from template" if not already and not was_repo
                   else "init: adopt this vault" if not already
                   else "init: add missing template files")
        message += "\n\n" + "\n".join(to_commit)
        from vault_engine.errors import GitError

        try:
            sha = history.commit_paths(root, to_commit, message, config.git_identity())
        except GitError as exc:
            error = exc.message
    return sha, error


def _undo(root: Path, created: list[str], originals: dict[str, bytes], made_repo: bool,
          new_folders: list[Path]) -> None:
    """Take back what an init the disk refused had done: the files it created (first: that
    frees space), the files it extended, the repository and the folders it made."""
    import contextlib
    import shutil

    for rel in created:
        with contextlib.suppress(OSError):
            (root / rel).unlink(missing_ok=True)
    for rel, data in originals.items():
        with contextlib.suppress(OSError):
            atomic_write(root / rel, data)
    if made_repo:
        shutil.rmtree(root / ".git", ignore_errors=True)
    for folder in sorted(new_folders, key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only the folders it made (empty again by now)
