"""After a write command: refresh the artifacts, so the next recall reads what was written
(compilers/refresh.py says why a compile and not an overlay)."""

from __future__ import annotations

from typing import Any

from vault_engine.store.vault import Vault

from .output import echo, style, warn


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


def queue_proposals(vault: Any, proposals: list[Any], message: str) -> str | None:
    """Proposals for a person's notes go to the review queue (the proposal branch); a vault
    where that cannot work (no git history yet) keeps them in the report only."""
    if not proposals:
        return None
    from vault_engine.collab.review import queue
    from vault_engine.errors import AlayaError

    try:
        return queue(vault, proposals, message)
    except AlayaError as exc:
        echo(style(f"! proposals kept in the report only: {exc}", fg="yellow"), err=True)
        return None


def shared_screen(vault: Vault) -> Any:
    """What the writers an agent calls (`new`, `link`, `promote-shared`, and their MCP tools)
    screen their text with: an agent's injection bound for `shared` is refused
    (text/injection.py, docs/security.md §3)."""
    from vault_engine.text.injection import shared_screen as screen

    return screen(vault.caller.is_owner)
