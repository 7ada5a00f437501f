"""Shared by the benchmark scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def report(results: Any, out: Path | None) -> None:
    """Print the results as JSON and, with --out, write them to a file too."""
    text = json.dumps(results, indent=1, ensure_ascii=False)
    print(text)
    if out:
        out.write_text(text + "\n", encoding="utf-8")
