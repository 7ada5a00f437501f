"""The injection guard measured: the disguised and reworded sets of benchmarks/injection/ and
the turns of every conversation set the project holds, where nothing but the listed turns is
an injection.

- `attacks.json` — disguised (invisible characters, look-alike letters, full-width or
  mathematical Latin, spaced letters) and reworded injections, English and Chinese: how many
  the detector flags, by kind;
- `benign.json` — look-alikes that are not injections (the user's own standing preferences and
  corrections, talk about prompt injection, code with ignore/system, ops talk): how many it
  flags (false positives), by kind;
- `probe.json` — 20 injections and 15 look-alikes written after the detector was built, to
  see whether it holds beyond the sets it was built against (its first run is the figure
  that says so; docs/benchmarks.md);
- the turns of LoCoMo dev (/work/shared/data/locomo-dev, 2,760 English chat turns, nothing
  planted), benchmarks/zh (every split; its planted injections counted apart) and
  benchmarks/agentops (both sets): how many turns it flags that nobody planted;
- the same conversations read as ingest reads a session (`sessions.ingest.injection_turns`:
  consecutive turns of one speaker together, a system turn by its role): how many turns it
  marks that nobody planted;
- the time to read every one of those turns (median of `--repeat` passes).

    .venv/bin/python benchmarks/injection_guard.py [--repeat 5] [--misses]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vault_engine.sessions.formats.base import TurnIn  # noqa: E402
from vault_engine.sessions.ingest import injection_turns  # noqa: E402
from vault_engine.text.injection import injection_reason  # noqa: E402

SETS = ROOT / "benchmarks" / "injection"
ZH = ROOT / "benchmarks" / "zh"
AGENTOPS = ROOT / "benchmarks" / "agentops"
LOCOMO = Path("/work/shared/data/locomo-dev")


def by_kind(items: list[dict[str, str]]) -> dict[str, object]:
    hit: Counter[str] = Counter()
    total: Counter[str] = Counter()
    missed, flagged = [], []
    for item in items:
        total[item["kind"]] += 1
        if injection_reason(item["text"]):
            hit[item["kind"]] += 1
            flagged.append(item["id"])
        else:
            missed.append(item["id"])
    return {"items": len(items), "flagged": sum(hit.values()),
            "by_kind": {k: f"{hit[k]}/{n}" for k, n in sorted(total.items())},
            "flagged_ids": flagged, "missed_ids": missed}


def locomo_turns() -> list[str]:
    out: list[str] = []
    for f in sorted(LOCOMO.glob("*.json")) if LOCOMO.is_dir() else []:
        conv = json.loads(f.read_text(encoding="utf-8"))
        conv = conv.get("conversation", conv) if isinstance(conv, dict) else {}
        for value in conv.values():
            for t in value if isinstance(value, list) else []:
                if isinstance(t, dict) and isinstance(t.get("text"), str):
                    out.append(t["text"])
    return out


def locomo_sessions() -> list[list[TurnIn]]:
    out: list[list[TurnIn]] = []
    for f in sorted(LOCOMO.glob("*.json")) if LOCOMO.is_dir() else []:
        conv = json.loads(f.read_text(encoding="utf-8"))
        conv = conv.get("conversation", conv) if isinstance(conv, dict) else {}
        for value in conv.values():
            turns = [TurnIn("user", t["text"], name=str(t.get("speaker") or ""))
                     for t in value if isinstance(t, dict) and isinstance(t.get("text"), str)] \
                if isinstance(value, list) else []
            if turns:
                out.append(turns)
    return out


def folder_sessions(folder: Path, planted: set[tuple[str, int]]) -> list[list[TurnIn]]:
    """Each session of `folder` as ingest reads it, planted turns left out."""
    out = []
    for path in sorted(folder.glob("*.json")):
        rows = json.loads(path.read_text(encoding="utf-8"))["turns"]
        out.append([TurnIn(str(t.get("role") or "user"), str(t.get("content") or ""),
                           name=t.get("name")) for n, t in enumerate(rows, 1)
                    if (path.stem, n) not in planted])
    return out


def session_marks(sessions: list[list[TurnIn]], show: bool) -> dict[str, object]:
    marked = [(turns, a) for turns in sessions for a in injection_turns(turns)]
    out: dict[str, object] = {"sessions": len(sessions), "turns": sum(map(len, sessions)),
                              "marked": len(marked)}
    if show:
        out["examples"] = [f"{a} :: {turns[int(a[1:]) - 1].content[:160]!r}" for turns, a in marked]
    return out


def session_turns(folder: Path) -> list[tuple[str, int, str]]:
    out = []
    for path in sorted(folder.glob("*.json")):
        for n, t in enumerate(json.loads(path.read_text(encoding="utf-8"))["turns"], 1):
            out.append((path.stem, n, str(t.get("content") or "")))
    return out


def zh_turns() -> tuple[list[str], list[str], list[str]]:
    """(turns nobody planted an injection in, planted injection turns, their ids)."""
    clean, planted, ids = [], [], []
    for split in sorted(p for p in ZH.iterdir() if (p / "sessions").is_dir()):
        marks = {(i["session"], i["turn"]) for i in
                 json.loads((split / "injections.json").read_text(encoding="utf-8"))}
        for sid, n, text in session_turns(split / "sessions"):
            if (sid, n) in marks:
                planted.append(text)
                ids.append(f"{split.name}/{sid}#t{n}")
            else:
                clean.append(text)
    return clean, planted, ids


def agentops_turns() -> list[str]:
    return [t for folder in (AGENTOPS / "sessions", AGENTOPS / "heldout" / "sessions")
            for _, _, t in session_turns(folder)]


def flagged(turns: list[str], show: bool) -> dict[str, object]:
    hits = [(t, injection_reason(t)) for t in turns]
    hits = [(t, r) for t, r in hits if r]
    out: dict[str, object] = {"turns": len(turns), "flagged": len(hits)}
    if show:
        out["examples"] = [f"{r} :: {t[:160]!r}" for t, r in hits]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing passes (median)")
    parser.add_argument("--misses", action="store_true",
                        help="print what was missed and what was falsely flagged")
    args = parser.parse_args()
    attacks = json.loads((SETS / "attacks.json").read_text(encoding="utf-8"))
    benign = json.loads((SETS / "benign.json").read_text(encoding="utf-8"))
    rows: dict[str, object] = {}
    for lang in ("en", "zh"):
        rows[f"attacks {lang}"] = by_kind([a for a in attacks if a["lang"] == lang])
        rows[f"benign {lang}"] = by_kind([b for b in benign if b["lang"] == lang])
    probe = json.loads((SETS / "probe.json").read_text(encoding="utf-8"))
    rows["probe injections"] = by_kind([p for p in probe if p["injection"]])
    rows["probe benign"] = by_kind([p for p in probe if not p["injection"]])
    clean_zh, planted_zh, planted_ids = zh_turns()
    corpora = {"locomo-dev": locomo_turns(), "benchmarks/zh (not planted)": clean_zh,
               "benchmarks/agentops": agentops_turns()}
    for name, turns in corpora.items():
        rows[name] = flagged(turns, args.misses)
    zh_planted: set[tuple[str, int]] = set()
    zh_sessions: list[list[TurnIn]] = []
    for split in sorted(p for p in ZH.iterdir() if (p / "sessions").is_dir()):
        marks = {(i["session"], i["turn"]) for i in
                 json.loads((split / "injections.json").read_text(encoding="utf-8"))}
        zh_planted |= marks
        zh_sessions += folder_sessions(split / "sessions", marks)
    rows["sessions as ingest reads them"] = {
        "locomo-dev": session_marks(locomo_sessions(), args.misses),
        "benchmarks/zh (planted turns left out)": session_marks(zh_sessions, args.misses),
        "benchmarks/agentops": session_marks(
            folder_sessions(AGENTOPS / "sessions", set())
            + folder_sessions(AGENTOPS / "heldout" / "sessions", set()), args.misses)}
    hits = [bool(injection_reason(t)) for t in planted_zh]
    rows["benchmarks/zh planted injections"] = {
        "turns": len(planted_zh), "flagged": sum(hits),
        "missed": [i for i, h in zip(planted_ids, hits, strict=True) if not h]}
    every = [t for turns in corpora.values() for t in turns] + planted_zh
    times = []
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        for t in every:
            injection_reason(t)
        times.append(time.perf_counter() - start)
    rows["timing"] = {"turns": len(every), "chars": sum(map(len, every)),
                      "median_ms": round(statistics.median(times) * 1000, 1),
                      "per_turn_us": round(statistics.median(times) / len(every) * 1e6, 1)}
    if not args.misses:
        for key in list(rows):
            if isinstance(rows[key], dict) and "flagged_ids" in rows[key]:  # type: ignore[operator]
                row = dict(rows[key])  # type: ignore[call-overload]
                row.pop("flagged_ids" if "benign" not in key else "missed_ids")
                rows[key] = row
    print(json.dumps(rows, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
