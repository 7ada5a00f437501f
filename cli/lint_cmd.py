"""`alaya lint`: rules over the vault for people, pre-commit hooks and CI."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .output import echo, emit_json, json_option, no_commit_option, pass_json, style


@click.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text",
              show_default=True, help="Output format (json: {findings, summary}; sarif: 2.1.0).")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
@click.option("--select", "select", multiple=True, metavar="CODE",
              help="Run only these rules (repeat or comma-separate). Default: [lint] select.")
@click.option("--ignore", "ignore", multiple=True, metavar="CODE",
              help="Skip these rules (repeat or comma-separate), on top of [lint] ignore.")
@click.option("--output", "output", type=click.Path(path_type=Path), default=None,
              help="Also write the json/sarif document to this file.")
@click.option("--write-report", "write_report_", is_flag=True,
              help="Also regenerate the managed block of reports/lint.md (default: [lint] "
                   "write_report, off). It is left uncommitted unless --commit or [lint] "
                   "commit_report.")
@click.option("--commit", "commit_report", is_flag=True,
              help="With --write-report: commit reports/lint.md (one commit, as alaya).")
@click.option("--no-report", is_flag=True,
              help="Never write reports/lint.md, whatever [lint] write_report says.")
@click.option("--list", "list_rules", is_flag=True, help="List the rules and exit.")
@no_commit_option
@json_option
@click.pass_obj
@pass_json
def lint(obj: Any, fmt: str, strict: bool, select: tuple[str, ...], ignore: tuple[str, ...],
         output: Path | None, write_report_: bool, commit_report: bool, no_report: bool,
         list_rules: bool, no_commit: bool, as_json: bool) -> None:
    """Check every note: ids, titles, types, links, relations, claims, evidence, staleness,
    contradictions, duplicates, MEMORY.md's budget, session integrity and leaked secrets.

    Each finding has a code, severity, path, line, message and fix (docs/lint.md lists every
    rule). Exit 1 when there are errors (with --strict: errors or warnings), else 0.
    Severities and rule selection: [lint] in alaya.toml. Lint changes no file and makes no
    commit unless asked: --write-report regenerates reports/lint.md, --commit commits it.

    \b
    Examples:
      alaya lint                               # text, for people
      alaya lint --format json                 # {"findings": [...], "summary": {...}}
      alaya lint --format sarif --output lint.sarif   # GitHub code scanning
      alaya lint --write-report --commit       # refresh and commit reports/lint.md
      alaya lint --select broken-wikilink,secret-detected --strict
    """
    from lint import public_report, run_lint
    from lint.report import to_sarif, write_report
    from lint.rules import RULES

    if list_rules:
        rows = [{"code": r.code, "severity": r.severity, "summary": r.summary}
                for r in sorted(RULES.values(), key=lambda r: r.code)]
        if as_json or fmt == "json":
            emit_json({"rules": rows})
        else:
            for r in rows:
                echo(f"{r['code']:<24} {r['severity']:<8} {r['summary']}")
        return
    vault = obj.vault()
    split = [c.strip() for x in select for c in x.split(",") if c.strip()]
    skip = [c.strip() for x in ignore for c in x.split(",") if c.strip()]
    report = run_lint(vault, select=split, ignore=skip)
    fmt = "json" if as_json else fmt
    doc: dict[str, Any] | None = None
    if fmt == "json":
        doc = report.as_dict()
    elif fmt == "sarif":
        from .main import __version__

        doc = to_sarif(report, __version__)
    if doc is not None:
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        if output is not None:
            output.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n",
                              encoding="utf-8")
    else:
        _render(report)
    wanted = write_report_ or bool(vault.config.get("lint", "write_report"))
    if wanted and not no_report:  # a note every agent reads: the shared notes' findings only
        commit = (commit_report or bool(vault.config.get("lint", "commit_report"))) \
            and not no_commit
        write_report(vault, public_report(vault, report, select=split, ignore=skip),
                     commit=commit)
    failed = report.errors or (strict and report.warnings)
    sys.exit(1 if failed else 0)


def _render(report: Any) -> None:
    colours = {"error": "red", "warning": "yellow"}
    for f in report.findings:
        where = f"{f.path}:{f.line}" if f.line else f.path
        echo(f"{style(where, bold=True)}: {style(f.severity, fg=colours[f.severity])} "
             f"[{f.code}] {f.message}")
        echo(f"    fix: {f.fix}")
    s = report.summary
    verdict = "no findings" if not report.findings else \
        f"{s['errors']} error(s), {s['warnings']} warning(s) in {s['files']} file(s)"
    echo(("" if not report.findings else "\n") + f"alaya lint: {verdict} ({s['rules']} rules)")
