"""Frontmatter round-trip on a 10k-note vault: ruamel.yaml vs alaya's line-splicing editor.

Both read every note and add one relation to it; we time the whole pass and check which one
gives back unchanged bytes for the untouched lines.

    .venv/bin/python benchmarks/frontmatter_roundtrip.py [--notes 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synth import cards  # noqa: E402
from vault_engine.store.frontmatter import FlowMap, NoteText  # noqa: E402


def split(text: str) -> tuple[str, str]:
    end = text.index("\n---\n", 4)
    return text[4:end + 1], text[end + 5:]


def alaya_pass(notes: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    identical = 0
    for text in notes:
        doc = NoteText.parse(text)
        if doc.render() == text:
            identical += 1
        doc.frontmatter.append_item("relations", FlowMap(type="DEPENDS_ON", target="[[X]]"))
        doc.render()
    return time.perf_counter() - start, identical


def ruamel_pass(notes: list[str]) -> tuple[float, int]:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 10**6
    yaml.preserve_quotes = True
    start = time.perf_counter()
    identical = 0
    for text in notes:
        fm, body = split(text)
        data = yaml.load(fm)
        out = io.StringIO()
        yaml.dump(data, out)
        if "---\n" + out.getvalue() + "---\n" + body == text:
            identical += 1
        rels = data.get("relations")
        if rels is None or not hasattr(rels, "append"):
            data["relations"] = rels = []
        rels.append({"type": "DEPENDS_ON", "target": "[[X]]"})
        out = io.StringIO()
        yaml.dump(data, out)
    return time.perf_counter() - start, identical


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    notes = cards(args.notes)
    results = {}
    for name, fn in (("alaya (PyYAML composer + line splicing)", alaya_pass),
                     ("ruamel.yaml round-trip", ruamel_pass)):
        runs = [fn(notes) for _ in range(args.repeat)]
        results[name] = (statistics.median(t for t, _ in runs), runs[0][1])
    print(f"# {args.notes} notes, median of {args.repeat}; python {platform.python_version()}, "
          f"{platform.machine()}")
    base = results["alaya (PyYAML composer + line splicing)"][0]
    print("| method | seconds | per note | × alaya | notes re-emitted byte-identical |")
    print("|---|---|---|---|---|")
    for name, (secs, same) in results.items():
        print(f"| {name} | {secs:.2f} | {secs / args.notes * 1000:.2f} ms | {secs / base:.1f} | "
              f"{same} / {args.notes} |")


if __name__ == "__main__":
    main()
