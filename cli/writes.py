"""After a write command: refresh the artifacts, so the next recall reads what was written
(compilers/refresh.py says why a compile and not an overlay)."""

from __future__ import annotations

from typing import Any

from vault_engine.store.vault import Vault

from .output import echo, warn


def after_write(vault: Vault, target: Vault | None = None, *, quiet: bool = False,
                refresher: Any = None) -> dict[str, Any]:
    """Refresh `vault` after a command wrote to `target` (default: the same vault). A write
    proposed for review (another worktree) leaves the vault's artifacts alone. Returns the
    `refresh` object of the command's JSON; without `quiet` (text output) a failure is also
    printed as a warning."""
    from compilers.refresh import Refresh, Refresher

    if target is not None and target.root != vault.root:
        result = Refresh(skipped="proposed for review: `alaya recall --pending` reads it")
    else:
        result = (refresher or Refresher(vault))()
    if result.error and not quiet:
        echo(warn(f"the write is saved, but the artifacts were not refreshed ({result.error}); "
                  "recall says stale until `alaya compile` succeeds"), err=True)
    return result.as_dict()
