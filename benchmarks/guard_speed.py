"""Ingest, context and recall with the injection guard, against a baseline checkout measured in
the same run (issue 25: within 10 % of the code before it).

Each side runs its own code (PYTHONPATH = its checkout, the same interpreter and packages),
alternating round by round so both see the same load:

- **ingest, in-process**: every session of benchmarks/zh (all splits) and benchmarks/agentops
  into a fresh vault — redaction, the injection detector, rendering, one commit;
- **ingest, one process**: `alaya ingest` of one session (what a hook pays: start-up,
  imports and the detector's first use included);
- **context, one process**: `alaya --agent ops context --query …` on the compiled vault;
- **recall, one process**: `alaya recall … --json` on the compiled vault.

    git archive main | tar -x -C /tmp/alaya-main    # the baseline checkout
    .venv/bin/python benchmarks/guard_speed.py --baseline /tmp/alaya-main --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALAYA = str(Path(sys.executable).parent / "alaya")
INGEST = """
import json, sys, time, pathlib, glob
root = pathlib.Path(sys.argv[1]); vault = pathlib.Path(sys.argv[2])
from vault_engine.store.init_vault import init_vault
from vault_engine.store.vault import Vault
from vault_engine.sessions.ingest import ingest
files = sorted(glob.glob(str(root / 'benchmarks/zh/*/sessions/*.json'))) + \\
    sorted(glob.glob(str(root / 'benchmarks/agentops/sessions/*.json')))
inputs = [(f, open(f, 'rb').read()) for f in files]
init_vault(vault)
t = time.perf_counter()
ingest(Vault.open(vault), inputs)
print(json.dumps({"s": time.perf_counter() - t, "sessions": len(inputs),
                  "turns": sum(len(json.loads(d)["turns"]) for _, d in inputs)}))
"""


def env_for(checkout: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALAYA_")}
    env.update(PYTHONPATH=str(checkout), ALAYA_EMBED_PROVIDER="hash", PYTHONDONTWRITEBYTECODE="1")
    return env


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"{cmd}: {out.stderr[-800:]}")
    return time.perf_counter() - start


def one_round(side: str, checkout: Path, work: Path, n: int) -> dict[str, float]:
    env = env_for(checkout)
    vault = work / f"{side}-{n}"
    shutil.rmtree(vault, ignore_errors=True)
    out = subprocess.run([sys.executable, "-c", INGEST, str(ROOT), str(vault)], env=env,
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-800:])
    row = {"ingest_inprocess_s": json.loads(out.stdout.strip().splitlines()[-1])["s"]}
    if n == 0:
        timed([ALAYA, "--vault", str(vault), "compile"], env)
        (work / f"{side}-compiled").unlink(missing_ok=True)
        (work / f"{side}-compiled").symlink_to(vault)
    compiled = work / f"{side}-compiled"
    one = work / f"{side}-one-{n}"
    shutil.rmtree(one, ignore_errors=True)
    timed([ALAYA, "init", str(one)], env)
    session = ROOT / "benchmarks" / "zh" / "dev" / "sessions" / "zh-ops-oncall-rotation.json"
    row["ingest_process_s"] = timed([ALAYA, "--vault", str(one), "ingest", str(session)], env)
    row["context_process_s"] = timed([ALAYA, "--vault", str(compiled), "--agent", "ops", "context",
                                      "--query", "on-call rotation next week"], env)
    row["recall_process_s"] = timed([ALAYA, "--vault", str(compiled), "recall",
                                     "redis 内存 告警", "--json"], env)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, required=True, help="a checkout of the baseline")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/alaya-guard-speed"))
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[dict[str, float]]] = {"baseline": [], "branch": []}
    for n in range(args.rounds):
        for side, checkout in (("baseline", args.baseline), ("branch", ROOT)):
            rows[side].append(one_round(side, checkout, args.workdir, n))
            print(side, n, json.dumps(rows[side][-1]), file=sys.stderr)
    result: dict[str, object] = {"rounds": args.rounds}
    for key in rows["branch"][0]:
        base = statistics.median(r[key] for r in rows["baseline"])
        new = statistics.median(r[key] for r in rows["branch"])
        result[key] = {"baseline_median": round(base, 3), "branch_median": round(new, 3),
                       "ratio": round(new / base, 3)}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
