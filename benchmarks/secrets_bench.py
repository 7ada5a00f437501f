"""The redactor on text that holds no credential, and its speed against the detector before it.

- **false positives**: every turn of LoCoMo (`/work/shared/data/locomo-dev/conv-*.json`,
  2,760 turns of everyday English conversation) and of the Chinese sets
  (`benchmarks/zh/*/sessions/*.json`) is redacted; a turn that changes is a false positive —
  except the zh turns that hold a planted secret (`secrets.json`), which are counted as
  recall instead (each planted value must be gone);
- **speed**: the same turns through `find_secrets` of this checkout and of the previous
  detector (`vault_engine/text/secrets.py` as a git revision has it, `--baseline-rev`,
  default `main`), alternating rounds in one process.

    .venv/bin/python benchmarks/secrets_bench.py [--locomo DIR] [--rounds 5] [--json]

`--ingest-50mb CHECKOUT` also times `alaya ingest` of a 50 MB session (50 turns of 1 MB, the
shape of tests/test_ingest.py's) into a fresh vault, this checkout against CHECKOUT (e.g.
`git worktree add --detach /tmp/main-check main`), each with PYTHONPATH at its own code and
the same interpreter, alternating rounds.
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def locomo_turns(folder: Path) -> list[tuple[str, str]]:
    out = []
    for f in sorted(folder.glob("conv-*.json")):
        data = json.loads(f.read_text(encoding="utf-8"))
        for key, turns in data.items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    out.append((f"{f.stem}/{t.get('dia_id')}", str(t.get("text", ""))))
    return out


def zh_turns() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(clean turns, turns with a planted secret as (where, value))."""
    planted: dict[tuple[str, int], list[str]] = {}
    for f in glob.glob(str(ROOT / "benchmarks/zh/*/secrets.json")):
        for s in json.loads(Path(f).read_text(encoding="utf-8")):
            planted.setdefault((s["session"], int(s["turn"])), []).append(s["value"])
    clean, secret = [], []
    for f in sorted(glob.glob(str(ROOT / "benchmarks/zh/*/sessions/*.json"))):
        data = json.loads(Path(f).read_text(encoding="utf-8"))
        sid = data.get("id") or Path(f).stem
        for i, t in enumerate(data["turns"], 1):
            values = planted.get((sid, i)) or planted.get((Path(f).stem, i))
            where = f"{Path(f).parent.parent.name}/{sid}#{i}"
            if values:
                secret.extend((f"{where}\t{t['content']}", v) for v in values)
            else:
                clean.append((where, str(t["content"])))
    return clean, secret


def old_detector(rev: str) -> types.ModuleType:
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:vault_engine/text/secrets.py"],
                         capture_output=True, text=True, check=True).stdout
    module = types.ModuleType("old_secrets")
    sys.modules["old_secrets"] = module
    exec(compile(src, "old_secrets.py", "exec"), module.__dict__)  # noqa: S102 — our own code
    return module


def flagged(find, turns: list[tuple[str, str]]) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    out = []
    for where, text in turns:
        for h in find(text):
            out.append({"where": where, "kind": h.kind, "value": text[h.start:h.end],
                        "snippet": text[max(0, h.start - 30):h.end + 30]})
    return out


def ingest_50mb(baseline: Path, rounds: int) -> dict[str, object]:
    import os
    import shutil
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="alaya-50mb-"))
    chunk = "x" * (1024 * 1024)
    big = {"id": "session-big", "timestamp": 1775000000000,
           "turns": [{"role": "user" if i % 2 else "assistant", "content": f"turn {i} " + chunk}
                     for i in range(50)]}
    src = work / "big.json"
    src.write_text(json.dumps(big))
    times: dict[str, list[float]] = {"new": [], "old": []}
    for r in range(rounds):
        for name, checkout in (("old", baseline), ("new", ROOT)):
            env = {k: v for k, v in os.environ.items() if not k.startswith("ALAYA_")}
            env.update(PYTHONPATH=str(checkout), ALAYA_EMBED_PROVIDER="hash",
                       PYTHONDONTWRITEBYTECODE="1")
            vault = work / f"v-{name}-{r}"
            run = [sys.executable, "-c", "import sys; from cli.main import main; main()"]
            subprocess.run([*run, "init", str(vault)], env=env, check=True, capture_output=True)
            t = time.perf_counter()
            out = subprocess.run([*run, "--vault", str(vault), "ingest", str(src)],
                                 env=env, capture_output=True, text=True)
            times[name].append(time.perf_counter() - t)
            if out.returncode != 0:
                raise SystemExit(out.stderr[-600:])
            shutil.rmtree(vault)
    shutil.rmtree(work)
    return {k: {"median_s": round(statistics.median(v), 2), "runs": [round(x, 2) for x in v]}
            for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", default="/work/shared/data/locomo-dev")
    ap.add_argument("--baseline-rev", default="main")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--ingest-50mb", type=Path, default=None, metavar="CHECKOUT")
    args = ap.parse_args()
    from vault_engine.redaction import find_secrets, redact

    loco = locomo_turns(Path(args.locomo))
    clean, secret = zh_turns()
    report: dict[str, object] = {
        "locomo_turns": len(loco), "zh_clean_turns": len(clean),
        "zh_planted": len(secret),
        "locomo_fp": flagged(find_secrets, loco), "zh_fp": flagged(find_secrets, clean)}
    missed = [w.split("\t")[0] for w, v in secret if v in redact(w.split("\t", 1)[1])]
    report["zh_planted_missed"] = missed
    old = old_detector(args.baseline_rev)
    old.find_secrets("warm up: password is Xy7#pQ2w")
    find_secrets("warm up: password is Xy7#pQ2w")
    texts = [t for _, t in loco] + [t for _, t in clean] + [w.split("\t", 1)[1] for w, _ in secret]
    times: dict[str, list[float]] = {"new": [], "old": []}
    for _ in range(args.rounds):
        for name, fn in (("old", old.find_secrets), ("new", find_secrets)):
            t = time.perf_counter()
            for text in texts:
                fn(text)
            times[name].append(time.perf_counter() - t)
    report["speed"] = {k: {"median_ms": round(statistics.median(v) * 1000, 1),
                           "per_turn_us": round(statistics.median(v) / len(texts) * 1e6, 1)}
                       for k, v in times.items()}
    report["old_locomo_fp"] = len(flagged(old.find_secrets, loco))
    report["old_zh_fp"] = len(flagged(old.find_secrets, clean))
    if args.ingest_50mb:
        report["ingest_50mb"] = ingest_50mb(args.ingest_50mb, args.rounds)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return
    print(f"LoCoMo: {len(report['locomo_fp'])} redactions in {len(loco)} turns "  # type: ignore[arg-type]
          f"(previous detector: {report['old_locomo_fp']})")
    print(f"zh: {len(report['zh_fp'])} redactions in {len(clean)} turns without a planted "  # type: ignore[arg-type]
          f"secret (previous: {report['old_zh_fp']}); planted secrets missed: "
          f"{len(missed)}/{len(secret)}")
    for fp in [*report["locomo_fp"], *report["zh_fp"]]:  # type: ignore[misc]
        print(f"  FP {fp['where']} [{fp['kind']}] {fp['value']!r}: …{fp['snippet']}…")
    for m in missed:
        print(f"  missed {m}")
    s = report["speed"]
    print(f"speed over {len(texts)} turns, median of {args.rounds}: new {s['new']['median_ms']} ms "  # type: ignore[index]
          f"({s['new']['per_turn_us']} µs/turn), previous {s['old']['median_ms']} ms "  # type: ignore[index]
          f"({s['old']['per_turn_us']} µs/turn)")
    if "ingest_50mb" in report:
        i = report["ingest_50mb"]
        print(f"alaya ingest of a 50 MB session, median of {args.rounds}: new "  # type: ignore[index]
              f"{i['new']['median_s']} s, previous {i['old']['median_s']} s")  # type: ignore[index]


if __name__ == "__main__":
    main()
