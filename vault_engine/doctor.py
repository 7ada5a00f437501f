"""`alaya doctor`: is this vault healthy, and if not, what to run to fix it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import history
from .config import CONFIG_FILE, load_config
from .errors import ConfigError
from .vault import TMP_MARKER, Vault


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    message: str
    fix: str = ""
    severity: str = "error"  # error | warning
    items: tuple[str, ...] = field(default_factory=tuple)


def diagnose(root: Path) -> list[Check]:
    checks: list[Check] = []
    root = Path(root).expanduser()
    if not root.is_dir():
        return [Check("vault", False, f"no vault at {root}", f"alaya init {root}")]
    if not (root / CONFIG_FILE).exists():
        return [Check("vault", False, f"{root} has no {CONFIG_FILE}", f"alaya init {root}")]
    checks.append(Check("vault", True, f"vault at {root.resolve()}"))

    try:
        config = load_config(root)
        if config.unknown:
            checks.append(Check("config", False, f"{CONFIG_FILE}: unknown settings "
                                + ", ".join(config.unknown),
                                "check the spelling against docs/configuration.md",
                                severity="warning"))
        else:
            checks.append(Check("config", True, f"{CONFIG_FILE} is valid"))
    except ConfigError as exc:
        checks.append(Check("config", False, str(exc), exc.fix or ""))
        config = None

    git = history.status(root)
    if not git.get("repo"):
        checks.append(Check("git", False, "the vault is not a git repository",
                            f"alaya init {root}  (adds git without touching your notes)"))
    else:
        if not git.get("has_commits"):
            checks.append(Check("git", False, "the repository has no commits",
                                f"alaya init {root}"))
        else:
            checks.append(Check("git", True, f"git repository on branch {git.get('branch')}"))
        if not git.get("identity"):
            checks.append(Check("git-identity", True,
                                "git has no user.name/user.email: alaya commits as the "
                                "[git] author in alaya.toml",
                                "git config user.name 'You' && git config user.email you@example.com",
                                severity="warning"))
        raw_uncommitted = git.get("uncommitted")
        uncommitted = [p for p in raw_uncommitted if isinstance(p, str)] if isinstance(
            raw_uncommitted, list) else []
        if uncommitted:
            checks.append(Check("uncommitted", False,
                                f"{len(uncommitted)} uncommitted change(s) in the vault",
                                "review with `git status` and commit them",
                                severity="warning", items=tuple(uncommitted[:50])))

    if config is None:
        return checks
    vault = Vault(root, config)
    index = vault.load()
    if index.issues:
        checks.append(Check("notes", False, f"{len(index.issues)} note(s) could not be read",
                            "fix each file as described, the rest of the vault still works",
                            items=tuple(f"{i.path}:{i.line or 1}: {i.message} (fix: {i.fix})"
                                        for i in index.issues)))
    else:
        checks.append(Check("notes", True, f"{len(index.notes)} notes parse cleanly"))
    bad_ids = [f"{i.path}:{i.line}: {i.message}" for n in index.notes for i in n.issues
               if i.code == "invalid-id"]
    if bad_ids:
        checks.append(Check("ids", False, f"{len(bad_ids)} invalid id(s)",
                            "use ids made of letters, digits, '-', '_' and '.'",
                            items=tuple(bad_ids)))
    dups = index.duplicate_ids()
    if dups:
        checks.append(Check("duplicate-ids", False, f"{len(dups)} id(s) used by more than one note",
                            "give each copy a new id (delete its `id:` line and run "
                            "`alaya doctor` again, or edit it by hand)",
                            items=tuple(f"{k}: " + ", ".join(n.path for n in v)
                                        for k, v in sorted(dups.items()))))
    leftovers = sorted(p.relative_to(root).as_posix() for p in root.rglob(f"*{TMP_MARKER}*")
                       if ".git" not in p.parts)
    if leftovers:
        checks.append(Check("temp-files", False,
                            f"{len(leftovers)} temp file(s) left by an interrupted write",
                            "delete them: the notes themselves were never half-written",
                            severity="warning", items=tuple(leftovers)))
    return checks
