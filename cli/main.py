"""`alaya`: the command group, global options, and errors → exit codes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from vault_engine.errors import AlayaError
from vault_engine.store.namespaces import Caller
from vault_engine.store.vault import Vault

from .output import echo, emit_json, fail

__version__ = "0.1.0"


class AppContext:
    """What every command is handed: the vault's folder and the caller, resolved once from
    `--agent` / ALAYA_AGENT (store/namespaces.py `Caller.resolve`)."""

    def __init__(self, vault_path: Path, caller: Caller | None = None) -> None:
        self.vault_path = vault_path
        self.caller = caller if caller is not None else Caller.owner()

    def vault(self) -> Vault:
        return Vault.open(self.vault_path, caller=self.caller)

    def writer(self, propose: bool = False) -> Vault:
        """Where a knowledge-writing command writes: the vault, or — with --propose or
        `[vault] review = true` — the proposal branch a person reviews (`alaya review`)."""
        vault = self.vault()
        if propose or vault.config.get("vault", "review"):
            from vault_engine.collab.review import proposal_vault

            return proposal_vault(vault)
        return vault


# Commands are imported when used: `alaya recall` must not pay for the compiler's imports.
COMMANDS = {
    "init": "notes_cmds:init", "new": "notes_cmds:new", "show": "notes_cmds:show",
    "link": "notes_cmds:link", "unlink": "notes_cmds:unlink", "doctor": "doctor_cmd:doctor",
    "compile": "compile_cmd:compile_cmd", "watch": "compile_cmd:watch",
    "ingest": "lifecycle_cmds:ingest", "distill": "lifecycle_cmds:distill",
    "trace": "lifecycle_cmds:trace", "import": "lifecycle_cmds:import_cmd",
    "demo": "demo_cmd:demo", "recall": "recall_cmd:recall", "traverse": "nav_cmds:traverse",
    "schema": "nav_cmds:schema", "status": "nav_cmds:status", "export": "nav_cmds:export",
    "serve": "nav_cmds:serve", "lint": "lint_cmd:lint",
    "introspect": "care_cmds:introspect", "restore": "care_cmds:restore",
    "feedback": "care_cmds:feedback", "eval": "eval_cmd:eval_cmd", "mcp": "agents_cmds:mcp",
    "context": "agents_cmds:context", "capture": "agents_cmds:capture",
    "promote-shared": "agents_cmds:promote_shared", "sync": "agents_cmds:sync",
    "review": "review_cmd:review",
}


class AlayaGroup(click.Group):
    """Lazy commands; engine errors become a message (text or JSON) and the right exit code."""

    def list_commands(self, ctx: click.Context | None) -> list[str]:  # type: ignore[override]
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context | None, name: str) -> click.Command | None:  # type: ignore[override]
        if name in COMMANDS and name not in self.commands:
            import importlib

            module_name, attr = COMMANDS[name].split(":")
            module = importlib.import_module(f"cli.{module_name}")
            self.add_command(getattr(module, attr), name)
        return self.commands.get(name)

    def invoke(self, ctx: click.Context) -> Any:
        from vault_engine.store.history import set_command

        try:
            return super().invoke(ctx)
        except AlayaError as exc:
            # a git error that is the disk refusing a write (a full disk under .git) says so
            _fail(ctx, _git_refused(exc, getattr(ctx.obj, "vault_path", None)) or exc)
        except Exception as exc:
            # the last line of defence: a write the machine refused (no space, read-only,
            # no permission) somewhere no gateway maps it is still one line and exit 3
            refused = _refused(exc, getattr(ctx.obj, "vault_path", None))
            if refused is None:
                raise
            _fail(ctx, refused)
        finally:
            set_command(None)
            _warn_uncommitted()
            _notices()


def _fail(ctx: click.Context, exc: AlayaError) -> None:
    """The error as the command's last line (what else there is to say comes before it)."""
    _warn_uncommitted()
    _notices()
    if _json_requested(ctx):
        emit_json(exc.to_dict())
    else:
        echo(fail(str(exc)), err=True)
    sys.exit(exc.exit_code)


def _refused(exc: BaseException, vault: Path | None) -> AlayaError | None:
    """`exc`, or what caused it, as the machine refusing access (vault_engine.errors); where
    the error names no file, the vault is named."""
    from vault_engine.errors import refused_write

    for seen in (exc, exc.__cause__):
        if seen is None:
            continue
        refused = refused_write(seen, getattr(seen, "filename", None) or vault, op="access")
        if refused is not None:
            return refused
    return None


GIT_ERRORS = ("GitError", "SyncError", "ReviewError")  # what the engine says when git fails


def _git_refused(exc: AlayaError, vault: Path | None) -> AlayaError | None:
    """A git failure while the vault's disk refuses writes (git's own words vary: "unpack-
    objects failed", "unable to update local ref" …): the disk's refusal, with its fix."""
    from vault_engine.errors import disk_refusal, refusal

    if type(exc).__name__ not in GIT_ERRORS or vault is None:
        return None
    refused = _refused(exc, Path(vault) / ".git")
    if refused is not None:
        return refused
    code = disk_refusal(Path(vault) / ".git")
    return refusal(code, Path(vault) / ".git") if code is not None else None


def _notices() -> None:
    """What the engine asked to say once (the machine key, telemetry not recorded …)."""
    from vault_engine.errors import NOTICES

    for text in NOTICES:
        echo(f"! {text}", err=True)
    NOTICES.clear()


def _warn_uncommitted() -> None:
    """Say which files alaya wrote but did not commit: a person's untracked note, or one whose
    uncommitted edits overlap alaya's (committing it would put their text under alaya's name)."""
    from vault_engine.store import history

    for rel in history.UNCOMMITTED:
        echo(f"! {rel}: written, not committed — it holds your uncommitted work; commit it "
             "yourself when it is ready", err=True)
    history.UNCOMMITTED.clear()


def _json_requested(ctx: click.Context) -> bool:
    # ctx.meta is shared by every nested context; `pass_json` records the flag there.
    return bool(ctx.meta.get("alaya.json"))


@click.group(cls=AlayaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--vault", "vault_path", type=click.Path(path_type=Path), default=None,
              envvar="ALAYA_VAULT", show_envvar=True,
              help="Vault folder. Default: $ALAYA_VAULT, else the vault around the working "
                   "directory (nearest alaya.toml upwards), else ~/.alaya.")
@click.option("--agent", default=None, metavar="NAME",
              help="Run as agent NAME (the same as ALAYA_AGENT=NAME): it reads and writes "
                   "`shared` and its own namespaces only (NAME, NAME-main, NAME-ephemeral). "
                   "Without it: the owner, who sees everything.")
@click.version_option(__version__, prog_name="alaya")
@click.pass_context
def cli(ctx: click.Context, vault_path: Path | None, agent: str | None) -> None:
    """alaya — long-term memory for AI agents in a markdown vault under git.

    Notes are Obsidian-style markdown with YAML frontmatter: cards with claims and evidence,
    typed relations as wikilinks, entities and sessions. Every change is a git commit.

    Exit codes: 0 ok, 1 findings or failure, 2 usage error, 3 the machine refused a write
    (no space left, a read-only file system, permission denied: the error names the path;
    nothing is half-written). Add --json to any command for machine-readable output.
    NO_COLOR disables colour.
    """
    import os

    from vault_engine.store.history import set_command

    from .locate import find_vault

    set_command(ctx.invoked_subcommand)  # the Alaya-Command: trailer of this run's commits
    # the caller, resolved once (a bad or blank name is a usage error before anything runs)
    # and handed to every command through the context — the environment is never written
    caller = Caller.resolve(agent, os.environ)
    ctx.obj = AppContext(vault_path or Path(find_vault()), caller)


def command_names() -> list[str]:
    return sorted(COMMANDS)


def main() -> None:  # console entry point
    cli(prog_name="alaya")
