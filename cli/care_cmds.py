"""`alaya introspect`, `alaya restore`, `alaya feedback`: the vault looking after itself."""

from __future__ import annotations

from typing import Any

import click

from .output import echo, emit_json, json_option, no_commit_option, ok, pass_json, propose_option, style

PHASE_CHOICES = ["distill", "consolidate", "conflicts", "entities", "cooldown", "forget", "promote",
                 "gaps"]


@click.command()
@click.option("--phase", "phases", multiple=True, type=click.Choice(PHASE_CHOICES),
              help="Run only this phase (repeatable). Default: all eight, in order.")
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@click.option("--if-due", is_flag=True,
              help="Run only when [introspect] every_hours (default 4) have passed since the "
                   "last full run — for cron and timers; otherwise say when it is due, exit 0.")
@no_commit_option
@propose_option
@json_option
@click.pass_obj
@pass_json
def introspect(obj: Any, phases: tuple[str, ...], dry_run: bool, if_due: bool,
               no_commit: bool, propose: bool, as_json: bool) -> None:
    """Tidy the vault: distill new sessions, merge duplicates, settle contradictions (and
    check claims against later sessions), write entity pages (what the memory knows about
    each person, system or project, linked to the turns), recompute tiers, archive what is forgotten, promote
    the best memories into MEMORY.md, list knowledge gaps in reports/open-questions.md.

    One git commit per phase, each with its section of reports/introspect-<date>.md, so
    `git log -p` reads like a dream diary. Nothing is ever deleted: merged and forgotten
    cards move to archive/ (`alaya restore` brings one back). Human text in MEMORY.md is
    never touched.

    With --if-due it runs only when it is due (seed 000 §5.2: every 4 hours; the last full
    run is kept in .alaya/introspect.json); `alaya serve` and `alaya watch` run it on their
    own when due. After a run the artifacts are refreshed for the next recall.

    \b
    Examples:
      alaya introspect --dry-run
      alaya introspect --phase consolidate --phase conflicts
      alaya introspect --json
      0 * * * * alaya --vault ~/agent-memory introspect --if-due    # crontab: hourly check
    """
    from vault_engine.care.introspect.runner import PHASES
    from vault_engine.care.introspect.runner import introspect as run
    from vault_engine.errors import UsageError

    from .writes import after_write, queue_proposals

    if if_due and (phases or dry_run):
        raise UsageError("--if-due runs the whole introspection on its schedule",
                         fix="drop --phase / --dry-run, or drop --if-due")
    if if_due:
        from vault_engine.care.introspect.schedule import is_due

        due = is_due(obj.vault())
        if not due.due:
            if as_json:
                emit_json({"ran": False, **due.as_dict(), "phases": []})
            else:
                echo("Not due: the schedule is off ([introspect] every_hours = 0)"
                      if due.next_run is None else
                      f"Not due: last full run {due.as_dict()['last_run']}, next at "
                      f"{due.as_dict()['next_run']} (every {due.every_hours:g} h)")
            return
    vault = obj.writer(propose)
    chosen = phases or PHASES
    total = len(chosen)
    if not as_json:
        echo(("🧘 Planning introspection (dry run)..." if dry_run
              else "🧘 Starting introspection...") + "\n")
    step = [0]

    def show(r: Any) -> None:
        step[0] += 1
        if as_json:
            return
        echo(style(f"[{step[0]}/{total}] {r.name}", bold=True))
        for k, v in r.numbers.items():
            echo(f"   {k.replace('_', ' ')}: {v}")
        for line in r.lines[:12] if dry_run else r.lines[:5]:
            if line.strip():
                echo(f"   {line}")
        if r.commit:
            echo(f"   commit {r.commit[:10]}")
        echo("")

    results = run(vault, phases=chosen, dry_run=dry_run, commit=not no_commit, on_phase=show)
    proposals = [p for r in results for p in r.proposals]
    queued = None if dry_run or no_commit else queue_proposals(
        vault, proposals, f"introspect: propose {len(proposals)} change(s) to a person's notes")
    refresh = None if dry_run else after_write(obj.vault(), vault, quiet=as_json)
    if as_json:
        emit_json({"dry_run": dry_run, "ran": True, "refresh": refresh, "phases": [
            {"name": r.name, "numbers": r.numbers, "report": r.lines, "changed": r.changed,
             "commit": r.commit, "proposals": [p.summary for p in r.proposals]}
            for r in results], "review_commit": queued})
    elif not dry_run:
        echo(ok(f"Introspection complete — report: reports/introspect-*.md "
                f"({sum(1 for r in results if r.commit)} commit(s))"))
        if proposals:
            echo(f"   {len(proposals)} change(s) to a person's notes proposed, not made"
                 + (" — see `alaya review`" if queued else " (listed in the report)"))


@click.command()
@click.argument("ref")
@no_commit_option
@json_option
@click.pass_obj
@pass_json
def restore(obj: Any, ref: str, no_commit: bool, as_json: bool) -> None:
    """Bring an archived (merged, forgotten or deprecated) note back where it was.

    \b
    Example:
      alaya restore card-7f3a2c1d
    """
    from vault_engine.store.archive import restore as run

    from .writes import after_write

    vault = obj.vault()
    path, sha = run(vault, ref, commit=not no_commit)
    refresh = after_write(vault, quiet=as_json)
    if as_json:
        emit_json({"restored": path, "commit": sha, "refresh": refresh})
    else:
        echo(ok(f"restored to {path}" + (f" (commit {sha[:10]})" if sha else "")))


@click.command()
@click.argument("verdict", type=click.Choice(["useful", "not-useful", "correct", "deprecate"]))
@click.argument("ref")
@click.option("--claim", default=None, help="correct: which claim (e.g. c2); needed when the "
              "card has several.")
@click.option("--text", default=None, help="correct: the corrected statement.")
@click.option("--reason", default=None, help="Why (kept in the commit message or event).")
@no_commit_option
@json_option
@click.pass_obj
@pass_json
def feedback(obj: Any, verdict: str, ref: str, claim: str | None, text: str | None,
             reason: str | None, no_commit: bool, as_json: bool) -> None:
    """Tell the memory how a recalled note worked out.

    useful / not-useful keep a quality score in telemetry (useful ÷ all verdicts; below 0.2
    after 5 verdicts, introspect archives the card). correct rewrites a claim through git and
    marks the notes that depend on the card stale. deprecate archives it with a reason.

    \b
    Examples:
      alaya feedback useful card-7f3a2c1d
      alaya feedback correct card-7f3a2c1d --claim c1 --text "The TTL is 300 s since v2"
      alaya feedback deprecate card-7f3a2c1d --reason "we moved off Redis"
    """
    from vault_engine.care.feedback import feedback as run

    from .writes import after_write, queue_proposals

    vault = obj.vault()
    result = run(vault, verdict, ref, claim=claim, text=text, reason=reason,
                 commit=not no_commit)
    queued = queue_proposals(vault, result.proposals, f"feedback: propose {verdict} {result.path}")
    refresh = after_write(vault, quiet=as_json)
    if as_json:
        from dataclasses import asdict

        doc = asdict(result)
        doc["proposals"] = [p.summary for p in result.proposals]
        doc["review_commit"] = queued
        doc["refresh"] = refresh
        emit_json(doc)
    else:
        echo(ok(result.message) + (f" (commit {result.commit[:10]})" if result.commit else ""))
