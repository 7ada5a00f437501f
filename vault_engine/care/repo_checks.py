"""`alaya doctor` on the git repository itself: is .git/config intact, did a sync die, did the
last sync refuse what a remote brought, and which settings would make git run a program that
alaya did not register — named the way git's own safe-directory warning names a repository
it does not trust."""

from __future__ import annotations

import json
import re
from pathlib import Path

from vault_engine.store import repo_recovery as recovery
from vault_engine.store.history import run_git
from vault_engine.store.merge import driver_command

from .doctor_model import Check, Repair

# keys whose value git runs as a program (or that make it run one); `<x>` is any name
EXECUTABLE = re.compile(
    r"^(core\.(fsmonitor|hookspath|pager|editor|sshcommand|askpass|gitproxy|"
    r"alternaterefscommand)|credential\..*helper|diff\.external|diff\..+\.(command|textconv)|"
    r"filter\..+\.(clean|smudge|process)|merge\..+\.driver|gpg\.(.+\.)?program|"
    r"sequence\.editor|pager\..+|alias\..+|remote\..+\.(uploadpack|receivepack)|"
    r"uploadpack\.packobjectshook|gpg\.ssh\.defaultkeycommand|include\.path|"
    r"includeif\..+\.path)$", re.IGNORECASE)


def executable_settings(root: Path) -> list[str]:
    """`key = value` of every local git setting that runs a program, but alaya's own driver
    as this alaya registers it."""
    raw = run_git(root, "config", "--local", "--list", check=False)
    ours = driver_command()
    out = []
    for line in raw.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition("=")
        if not EXECUTABLE.match(key):
            continue
        if key.lower() == "merge.alaya.driver" and value == ours:
            continue
        out.append(f"{key} = {value}")
    return out


def hooks(root: Path) -> list[str]:
    folder = Path(run_git(root, "rev-parse", "--git-path", "hooks", check=False).decode().strip())
    folder = folder if folder.is_absolute() else root / folder
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if p.is_file() and not p.name.endswith(".sample") and p.stat().st_mode & 0o111)


def checks(root: Path, state_dir: Path, *, owner: bool) -> list[Check]:
    out: list[Check] = []
    if not recovery.config_intact(root):
        out.append(Check("git-config", False, ".git/config lost git's own settings (an "
                         "interrupted rewrite by some tool leaves it empty): remotes and "
                         "alaya's merge driver may be gone", "alaya doctor --fix  (restores "
                         "the core settings and the remotes this machine recorded)"))
    gone = [name for name in recovery.recorded_remotes(state_dir)
            if not run_git(root, "config", "--local", "--get", f"remote.{name}.url",
                           check=False).strip()]
    if gone:
        out.append(Check("git-remote", False, f"remote(s) {', '.join(gone)} synced before are "
                         "no longer in .git/config", "alaya doctor --fix"))
    journal = recovery.pending(state_dir)
    if journal is not None:
        out.append(Check("sync-interrupted", False, "a sync was killed before it finished: "
                         "git may have left lock files and half-checked-out files",
                         "alaya sync  (or alaya doctor --fix) cleans up after it without "
                         "losing a card; never `git commit -a` first"))
    refused = _refused(state_dir)
    if refused:
        listed = refused.get("refused")
        items = tuple(f"{r.get('path')} ({str(r.get('commit', ''))[:10]}): {r.get('why')}"
                      for r in (listed if isinstance(listed, list) else [])
                      if isinstance(r, dict)) if owner else ()
        out.append(Check("sync-refused", False, f"the last sync refused {refused.get('upstream')}"
                         f" ({str(refused.get('commit', ''))[:10]}): it brings what this "
                         "machine never takes from a remote, so nothing of it was merged",
                         "ask whoever pushed it to remove those paths; for alaya.toml's "
                         "guarded settings read the change and run `alaya sync "
                         "--accept-config`", severity="warning", items=items))
    if owner:
        found = executable_settings(root)
        if found:
            out.append(Check("git-programs", False, "the vault's .git/config makes git run "
                             "programs alaya did not register — anyone who could write this "
                             "file chose them", "if you did not set them: git config --unset "
                             "KEY (alaya sync re-registers its own merge driver)",
                             severity="warning", items=tuple(found)))
        run = hooks(root)
        if run:
            out.append(Check("git-hooks", True, f"git runs these hooks in this vault: "
                             f"{', '.join(run)} (alaya's own commits run none; a merge during "
                             "`alaya sync` runs the merge hooks)", severity="warning"))
    return out


def _refused(state_dir: Path) -> dict[str, object] | None:
    try:
        data = json.loads((state_dir / recovery.REFUSED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def repairs(root: Path, state_dir: Path) -> list[Repair]:
    """What `doctor --fix` does for the repository (the caller holds the vault lock)."""
    out: list[Repair] = []
    journal = recovery.pending(state_dir)
    if journal is not None:
        for line in recovery.recover(root, state_dir, journal):
            out.append(Repair("sync-interrupted", line))
    for line in recovery.restore_config(root, state_dir):
        out.append(Repair("git-config", line))
    return out


__all__ = ["checks", "executable_settings", "hooks", "repairs"]
