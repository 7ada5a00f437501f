"""docs/seeds.md — the seed documents feature by feature — stays true to itself and to the code:
every row has one of the four statuses, the summary counts are the rows' counts, and every
module path, `alaya` verb, setting and lint rule a row names exists."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from cli.main import command_names
from lint.rules import RULES
from vault_engine.config import DEFAULTS

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "seeds.md"
STATUSES = ("implemented", "deviated", "in progress", "not done")
FEATURE_HEADER = ["feature", "seed §", "status", "where / why"]
SUMMARY_HEADER = ["seed", "features", *STATUSES]

_CELL_SPLIT = re.compile(r"(?<!\\)\|")
# a repository path: starts at a top-level folder of the project, not inside another path
_PATH_RE = re.compile(
    r"(?<![\w./-])((?:vault_engine|compilers|cli|lint|docs|benchmarks|tests)/[\w./-]*)")
_VERB_RE = re.compile(r"`alaya ([a-z][a-z-]*)")
_SETTING_RE = re.compile(r"`\[([a-z_]+)\] ([a-z_]+(?:/[a-z_]+)*)")
_LINT_RE = re.compile(r"\blint `([a-z-]+)`")
_ISSUE_RE = re.compile(r"\bissue \d+")


def _cells(line: str) -> list[str]:
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(line.strip())[1:-1]]


def parse(text: str) -> tuple[dict[str, list[dict[str, str]]], dict[str, dict[str, int]]]:
    """The feature rows per seed (`## Seed NNN — …` sections) and the summary table."""
    seeds: dict[str, list[dict[str, str]]] = {}
    summary: dict[str, dict[str, int]] = {}
    section: str | None = None
    header: list[str] | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            m = re.match(r"## Seed (\d{3}) —", line)
            section = m.group(1) if m else ("summary" if line == "## Summary" else None)
            if section and section != "summary":
                seeds.setdefault(section, [])
            header = None
            continue
        if section is None or not line.startswith("|"):
            header = None if not line.startswith("|") else header
            continue
        cells = _cells(line)
        if header is None:
            header = cells
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue  # the |---| line
        assert len(cells) == len(header), f"docs/seeds.md:{lineno}: {len(cells)} cells"
        if section == "summary" and header == SUMMARY_HEADER:
            summary[cells[0].strip("*")] = {h: int(c.strip("*"))
                                            for h, c in zip(header[1:], cells[1:], strict=True)}
        elif header == FEATURE_HEADER:
            row = dict(zip(header, cells, strict=True))
            row["line"] = str(lineno)
            seeds[str(section)].append(row)
    return seeds, summary


@pytest.fixture(scope="module")
def doc() -> tuple[dict[str, list[dict[str, str]]], dict[str, dict[str, int]]]:
    return parse(DOC.read_text(encoding="utf-8"))


def _rows(doc: tuple[dict[str, list[dict[str, str]]], dict[str, dict[str, int]]]
          ) -> list[dict[str, str]]:
    return [row for rows in doc[0].values() for row in rows]


def test_every_seed_has_rows_and_every_row_one_of_the_four_statuses(doc) -> None:  # type: ignore[no-untyped-def]
    seeds, _ = doc
    assert sorted(seeds) == ["000", "002", "003", "004"]
    assert all(len(rows) > 20 for rows in seeds.values()), {s: len(r) for s, r in seeds.items()}
    bad = [(r["line"], r["status"]) for r in _rows(doc) if r["status"] not in STATUSES]
    assert not bad, f"docs/seeds.md: rows with an unknown status (line, status): {bad}"


def test_the_summary_counts_are_the_rows_counts(doc) -> None:  # type: ignore[no-untyped-def]
    seeds, summary = doc
    assert set(summary) == {*seeds, "all"}
    total: Counter[str] = Counter()
    for seed, rows in seeds.items():
        counts = Counter(r["status"] for r in rows)
        total += counts
        expected = {"features": len(rows), **{s: counts[s] for s in STATUSES}}
        assert summary[seed] == expected, f"summary row {seed}: {summary[seed]} != {expected}"
    assert summary["all"] == {"features": sum(total.values()), **{s: total[s] for s in STATUSES}}


def test_every_repository_path_named_exists(doc) -> None:  # type: ignore[no-untyped-def]
    named = 0
    missing = []
    for row in _rows(doc):
        for path in _PATH_RE.findall(row["where / why"]):
            path = path.rstrip(".,;:")
            named += 1
            if not (ROOT / path).exists():
                missing.append(f"docs/seeds.md:{row['line']}: {path}")
    assert named > 50  # the pattern still finds the paths the rows name
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)


def test_every_alaya_verb_named_is_a_command(doc) -> None:  # type: ignore[no-untyped-def]
    verbs = set(command_names())
    named = [(row["line"], v) for row in _rows(doc) for v in _VERB_RE.findall(row["where / why"])]
    assert len(named) > 20
    unknown = [f"docs/seeds.md:{line}: alaya {v}" for line, v in named if v not in verbs]
    assert not unknown, "not alaya commands (cli.main COMMANDS):\n" + "\n".join(unknown)


def test_every_setting_and_lint_rule_named_exists(doc) -> None:  # type: ignore[no-untyped-def]
    wrong = []
    settings = rules = 0
    for row in _rows(doc):
        text = row["where / why"]
        for section, keys in _SETTING_RE.findall(text):
            if section not in DEFAULTS:  # `[episodic] …` is a prompt label, not a setting
                continue
            for key in keys.split("/"):
                settings += 1
                if key not in DEFAULTS[section]:
                    wrong.append(f"docs/seeds.md:{row['line']}: [{section}] {key}")
        for code in _LINT_RE.findall(text):
            rules += 1
            if code not in RULES:
                wrong.append(f"docs/seeds.md:{row['line']}: lint {code}")
    assert settings > 10 and rules > 5
    assert not wrong, "settings or lint rules that do not exist:\n" + "\n".join(wrong)


def test_an_in_progress_row_names_the_issue_that_builds_it(doc) -> None:  # type: ignore[no-untyped-def]
    orphans = [r["line"] for r in _rows(doc) if r["status"] == "in progress"
               and not _ISSUE_RE.search(r["where / why"])]
    assert not orphans, f"docs/seeds.md lines {orphans}: 'in progress' names no issue"

