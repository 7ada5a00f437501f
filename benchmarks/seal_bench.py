"""What sealing the pickles costs (issue 24): the commands that write or read a sealed
artifact, this checkout against another alaya (`--base`: the commit before, run from its
own source), alternating in the same rounds on two copies of one synthetic vault.

- `compile --full`-like: builds, current.json and the record cache removed (the graph is
  pickled and sealed, the record cache sealed and written);
- incremental: one card edited (the record cache unsealed and checked, then resealed; the
  unchanged graph copied with its seal checked);
- up to date: nothing changed (the previous graph's seal checked);
- `show` (the parsed-note cache, `notes.pickle`, checked and loaded);
- a one-shot `recall --json` (reads no pickle: the control).

Vectors come from the 384-d hash embedder (benchmarks/synth.py vaults, as compile_bench.py).
Both executables are started the same way: `python -c "from cli.fast import main"` with
their source first on PYTHONPATH, byte-compiled beforehand.

    git archive <base-commit> | tar -x -C /tmp/alaya-base
    .venv/bin/python benchmarks/seal_bench.py --cards 1000 --rounds 7 --base-src /tmp/alaya-base
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import report  # noqa: E402
from benchmarks.synth import write_vault  # noqa: E402

ENV = dict(os.environ, ALAYA_EMBED_PROVIDER="hash384", NO_COLOR="1", OMP_WAIT_POLICY="PASSIVE")


def run(src: Path, vault: Path, *args: str) -> float:
    start = time.perf_counter()
    # cwd=src: `python -c` puts the working directory first on sys.path
    proc = subprocess.run([sys.executable, "-c", "from cli.fast import main; main()",
                           "--vault", str(vault), *args], cwd=src,
                          env=dict(ENV, PYTHONPATH=str(src)), capture_output=True, text=True)
    secs = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{src}: {args}: {proc.stderr[-2000:]}")
    return secs


def one_round(src: Path, vault: Path, card: Path, r: int) -> dict[str, float]:
    state = vault / ".alaya"
    shutil.rmtree(state / "builds", ignore_errors=True)
    (state / "current.json").unlink(missing_ok=True)
    (state / "cache" / "records.pickle").unlink(missing_ok=True)
    out = {"full_compile": run(src, vault, "compile", "--json")}
    text = card.read_text("utf-8")
    card.write_text(text.replace('text: "', f'text: "Edited {r}: ', 1), encoding="utf-8")
    out["incremental_compile"] = run(src, vault, "compile", "--json")
    out["up_to_date_compile"] = run(src, vault, "compile", "--json")
    out["show"] = run(src, vault, "show", card.stem, "--json")
    out["recall_oneshot"] = run(src, vault, "recall", "gateway restart notice", "--json")
    return out


def in_process(path: Path, vault: Path, runs: int = 15) -> dict[str, float]:
    """The seal's own cost on one cache file, in this process (CPU-bound, steadier than the
    process timings on a busy machine): load = read + check + unpickle against read +
    unpickle; save = pickle + seal against pickle; and the MAC alone."""
    import pickle

    os.environ["ALAYA_CONFIG_DIR"] = ENV["ALAYA_CONFIG_DIR"]
    from vault_engine import seal

    purpose = "records" if path.name == "records.pickle" else "notes"
    obj = seal.load(path, vault, purpose)
    assert obj is not None, path
    raw = pickle.dumps(obj, protocol=5)
    key = seal.machine_key(vault)
    assert key is not None

    def timed(fn: object) -> float:
        out = []
        for _ in range(runs):
            t = time.perf_counter()
            fn()  # type: ignore[operator]
            out.append(time.perf_counter() - t)
        return round(statistics.median(out) * 1000, 2)

    plain = path.with_name(path.name + ".plain")  # the same pickle, unsealed, as before
    plain.write_bytes(raw)
    try:
        return {"load_sealed": timed(lambda: seal.load(path, vault, purpose)),
                "load_plain": timed(lambda: pickle.loads(plain.read_bytes())),
                "save_sealed": timed(lambda: seal.dumps(vault, purpose, obj)),
                "save_plain": timed(lambda: pickle.dumps(obj, protocol=5)),
                "mac_only": timed(lambda: seal._mac(key, purpose, raw)),
                "mb": round(len(raw) / 1e6, 2)}
    finally:
        plain.unlink()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cards", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--base-src", type=Path, required=True,
                    help="the source tree of the alaya to compare with (git archive of a commit)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/alaya-seal-bench"))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    for src in (ROOT, args.base_src):
        for pkg in ("vault_engine", "compilers", "lint", "cli"):
            compileall.compile_dir(str(src / pkg), quiet=1)
    args.workdir.mkdir(parents=True, exist_ok=True)
    ENV["ALAYA_CONFIG_DIR"] = str(args.workdir / "config")  # the benchmark's own machine key
    master = args.workdir / f"vault-{args.cards}"
    if not master.exists():
        write_vault(master, args.cards)
    vaults = {}
    for name, src in (("sealed", ROOT), ("base", args.base_src)):
        vault = args.workdir / f"{name}-{args.cards}"
        shutil.rmtree(vault, ignore_errors=True)
        shutil.copytree(master, vault, symlinks=True)
        shutil.rmtree(vault / ".alaya", ignore_errors=True)
        run(src, vault, "compile", "--json")  # fills the embedding cache
        vaults[name] = (src, vault, next((vault / "cards").rglob("*.md")))
    times: dict[str, dict[str, list[float]]] = {n: {} for n in vaults}
    for r in range(args.rounds):
        order = list(vaults) if r % 2 == 0 else list(reversed(vaults))
        for name in order:
            src, vault, card = vaults[name]
            for k, v in one_round(src, vault, card, r).items():
                times[name].setdefault(k, []).append(v)
    for name, (_src, vault, _) in vaults.items():  # each ran its own code
        head = (vault / ".alaya" / "cache" / "records.pickle").read_bytes()[:14]
        assert (head == b"ALAYA-SEALED-1") == (name == "sealed"), (name, head)
    sealed = vaults["sealed"][1] / ".alaya"
    records = sealed / "cache" / "records.pickle"
    notes = sealed / "cache" / "notes.pickle"
    micro = {p.name: in_process(p, vaults["sealed"][1]) for p in (records, notes)}
    medians = {n: {k: round(statistics.median(v) * 1000, 1) for k, v in t.items()}
               for n, t in times.items()}
    report({
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, python "
                   f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}",
        "cards": args.cards, "rounds": args.rounds, "median_ms": medians,
        "ratio_sealed_to_base": {k: round(medians["sealed"][k] / medians["base"][k], 3)
                                 for k in medians["sealed"]},
        "sealed_sizes_mb": {"records.pickle": round(records.stat().st_size / 1e6, 2),
                            "notes.pickle": round(notes.stat().st_size / 1e6, 2)},
        "in_process_ms": micro,
    }, args.out)


if __name__ == "__main__":
    main()
