"""`alaya review`: the proposal queue — list, approve, reject, edit."""

from __future__ import annotations

from typing import Any

import click

from .output import echo, emit_json, json_option, ok, pass_json, style


class _ReviewGroup(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0].startswith("-") and args[0] not in ("-h", "--help"):
            args = ["list", *args]  # `alaya review` alone lists
        return super().parse_args(ctx, args)


@click.group(cls=_ReviewGroup)
def review() -> None:
    """Review what agents proposed (with `[vault] review = true` or `--propose`): their
    distills, new cards, links and introspection wait on the branch `alaya/proposals` until a
    person approves them — approve merges into the main branch, reject leaves no trace there.

    \b
    Examples:
      alaya review                      # pending changes, one per note, with diffs
      alaya review approve              # merge everything (git log shows the merge)
      alaya review approve card-7f3a2c1d
      alaya review reject --all
      alaya review edit card-7f3a2c1d   # fix a proposal in $EDITOR before approving
    """


@review.command("list")
@click.option("--diff/--no-diff", default=True, help="Show each note's diff.")
@json_option
@click.pass_obj
@pass_json
def list_cmd(obj: Any, diff: bool, as_json: bool) -> None:
    """List pending proposals, one item per note, with the diff against the main branch.

    \b
    Example:
      alaya review list --no-diff
    """
    from vault_engine.collab.review import as_json as items_json
    from vault_engine.collab.review import pending

    items = pending(obj.vault())
    if as_json:
        emit_json({"pending": items_json(items)})
        return
    if not items:
        echo(ok("nothing pending"))
        return
    for i in items:
        echo(style(f"[{i.status}] {i.title}", bold=True) + f"  {i.path}"
             + (f"  {style(i.id, fg='cyan')}" if i.id else ""))
        for c in i.commits:
            echo(f"    {c}")
        if diff:
            for line in i.diff.splitlines()[4:]:
                colour = "green" if line.startswith("+") else "red" if line.startswith("-") \
                    else None
                echo("    " + (style(line, fg=colour) if colour else line))
    echo(f"\n{len(items)} pending — `alaya review approve [ITEM…]` or `alaya review reject`")


def _done(action: str, sha: str | None, items: list[Any], as_json: bool) -> None:
    if as_json:
        emit_json({action: [i.path for i in items], "commit": sha})
    elif not items:
        echo(ok("nothing pending"))
    else:
        echo(ok(f"{action} {len(items)} change(s)" + (f" (commit {sha[:10]})" if sha else "")))


def _decision(name: str, action: str, doc: str) -> None:
    """`alaya review approve|reject [ITEM…] [--all]`: the same arguments, output and flow."""

    @review.command(name, help=doc)
    @click.argument("items", nargs=-1)
    @click.option("--all", "all_items", is_flag=True, help="Everything pending (the default).")
    @json_option
    @click.pass_obj
    @pass_json
    def command(obj: Any, items: tuple[str, ...], all_items: bool, as_json: bool) -> None:
        import vault_engine.collab.review as rv

        vault = obj.vault()
        sha, done = getattr(rv, name)(vault, [] if all_items else list(items))
        if sha and name == "approve":  # the main branch changed: recall sees it next
            from .writes import after_write

            after_write(vault, quiet=as_json)
        _done(action, sha, done, as_json)


_decision("approve", "approved", """Approve pending changes: all of them as one merge of the
proposal branch, or only the named items (path, id or title) in one commit.

\b
Example:
  alaya review approve card-7f3a2c1d
""")
_decision("reject", "rejected", """Reject pending changes (all, or the named items); the main
branch never sees them.

\b
Example:
  alaya review reject --all
""")


@review.command()
@click.argument("item")
@click.option("--text-file", type=click.File("r", encoding="utf-8"), default=None,
              help="Take the new text from this file ('-' for stdin) instead of $EDITOR.")
@json_option
@click.pass_obj
@pass_json
def edit(obj: Any, item: str, text_file: Any, as_json: bool) -> None:
    """Edit a proposed note before approving it ($EDITOR, or --text-file).

    \b
    Example:
      alaya review edit card-7f3a2c1d
    """
    from vault_engine.collab.review import edit as run
    from vault_engine.collab.review import pending, select_items, worktree_path

    vault = obj.vault()
    target = select_items(pending(vault), [item])[0]
    current = (worktree_path(vault) / target.path).read_text(encoding="utf-8")
    text = text_file.read() if text_file is not None else click.edit(current, extension=".md")
    if text is None or text == current:
        echo(ok("unchanged"))
        return
    sha = run(vault, item, text)
    if as_json:
        emit_json({"edited": target.path, "commit": sha})
    else:
        echo(ok(f"edited {target.path} on the proposal branch" +
                (f" (commit {sha[:10]})" if sha else "")))
