"""Adopt a public Obsidian vault alaya did not write, and measure what a person would see.

    python benchmarks/obsidian_vault.py VAULT [--out results.json] [--keep DIR]

VAULT is left untouched: it is copied to a temporary folder, made a git repository whose one
commit is a person's ("the vault as its owner keeps it"), and then, as the docs say:

1. `alaya init` over it: every file that existed keeps every byte (an existing .gitignore,
   .gitattributes or AGENTS.md keeps its bytes as a prefix, alaya's marked block after it);
2. `alaya compile`: the graph's note-to-note pairs against an independent resolver that
   follows Obsidian's documented rules (benchmarks/obsidian_links.py, no project imports);
3. `alaya lint`: every link error it reports is checked against that resolver (a false
   error is one Obsidian would not show: the target resolves and the heading/block exists);
4. `alaya introspect` (every phase, offline): no note a person wrote is changed or archived;
5. `alaya recall` for every note's title: every id handed out opens with `alaya show`.

Nothing here is tuned to the vault: it runs the CLI as a person would. Offline (the hash
embedder: the graph, lint and introspect do not depend on the embedding model).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import obsidian_links as oracle  # noqa: E402
from benchmarks.common import report  # noqa: E402

LINK_ERRORS = ("broken-wikilink", "ambiguous-wikilink")
MERGED = (".gitignore", ".gitattributes", "AGENTS.md")


def _snapshot(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith((".git/", ".alaya/")):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _alaya(vault: Path, *args: str, env: dict[str, str]) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-c", "from cli.main import main; main()",
                           "--vault", str(vault), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    return proc.returncode, proc.stdout


def _person_commit(root: Path, env: dict[str, str]) -> None:
    git = ["git", "-C", str(root), "-c", "user.name=Vault Owner", "-c",
           "user.email=owner@example.org"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=env)
    subprocess.run(git + ["add", "-A"], check=True, env=env)
    subprocess.run(git + ["commit", "-qm", "my vault"], check=True, env=env)


def measure(source: Path, work: Path) -> dict[str, Any]:
    vault = work / "vault"
    shutil.copytree(source, vault, ignore=shutil.ignore_patterns(".git"))
    env = dict(os.environ, ALAYA_EMBED_PROVIDER="hash", GIT_CONFIG_GLOBAL=str(work / "gitconfig"),
               GIT_CONFIG_NOSYSTEM="1", HOME=str(work))
    env.pop("ALAYA_VAULT", None)
    _person_commit(vault, env)
    before = _snapshot(vault)
    files = oracle.list_vault_files(vault)
    notes = [f for f in files if f.endswith(".md")]
    out: dict[str, Any] = {"vault": str(source), "notes": len(notes), "files": len(files)}

    # 1. init over it
    t0 = time.perf_counter()
    code, text = _alaya(vault, "init", str(vault), "--json", env=env)
    init = json.loads(text)
    after = _snapshot(vault)
    changed = [r for r, h in before.items() if after.get(r) != h and r not in MERGED]
    merged_ok = all((vault / r).read_bytes().startswith((source / r).read_bytes())
                    for r in MERGED if (source / r).exists())
    out["init"] = {"exit": code, "changed_existing_files": changed, "extended": init["extended"],
                   "merged_files_keep_their_bytes": merged_ok, "created": len(init["created"]),
                   "seconds": round(time.perf_counter() - t0, 2)}

    # 2. graph pairs vs the independent resolver
    t0 = time.perf_counter()
    code, _ = _alaya(vault, "compile", "--json", env=env)
    from vault_engine.artifacts import current_build

    graph = current_build(vault / ".alaya").graph()  # type: ignore[union-attr]
    path_of = {k: d["path"] for k, d in graph.nodes(data=True)}
    mine = {(path_of[a], path_of[b]) for a, b, d in graph.edges(data=True)
            if d.get("origin") in ("body", "embed", "inline") and a != b
            and path_of[a] in before and path_of[b] in before}
    theirs = {(a, b) for a, b in oracle.vault_pairs(vault, include_self=False)
              if a in before and b in before}
    diff = mine ^ theirs
    out["graph"] = {"exit": code, "alaya_pairs": len(mine), "oracle_pairs": len(theirs),
                    "both": len(mine & theirs), "only_alaya": sorted(mine - theirs)[:20],
                    "only_oracle": sorted(theirs - mine)[:20],
                    "difference_pct": round(100.0 * len(diff) / max(1, len(theirs)), 2),
                    "seconds": round(time.perf_counter() - t0, 2)}

    # 3. lint: link errors checked against the resolver
    code, text = _alaya(vault, "lint", "--format", "json", env=env)
    findings = json.loads(text)["findings"]
    res = oracle.resolve_vault(vault, include_frontmatter=True)
    truly_bad = {(r.source, r.link.line) for r in res["resolutions"]
                 if r.target_path is None or r.heading_ok is False}
    bad_files = {s for s, _ in truly_bad}
    errors = [f for f in findings if f["code"] in LINK_ERRORS and f["severity"] == "error"]
    false = [f for f in errors if (f["path"], f["line"]) not in truly_bad
             and not (f["line"] is not None and f["path"] in bad_files
                      and f["line"] < 20 and _frontmatter_line(vault / f["path"], f["line"]))]
    by_code: dict[str, int] = {}
    for f in findings:
        by_code[f["code"]] = by_code.get(f["code"], 0) + 1
    out["lint"] = {"exit": code, "link_errors": len(errors), "false_link_errors": len(false),
                   "false": false[:10], "by_code": by_code,
                   "oracle_unresolved": sum(1 for r in res["resolutions"] if r.target_path is None),
                   "oracle_heading_misses": sum(1 for r in res["resolutions"]
                                                if r.heading_ok is False),
                   "committed": _head(vault) != init.get("commit")}

    # 4. introspect: no person's note changed or archived
    head = _head(vault)
    t0 = time.perf_counter()
    code, text = _alaya(vault, "introspect", "--json", env=env)
    doc = json.loads(text) if code == 0 else {}
    now = _snapshot(vault)
    touched = [r for r, h in before.items() if now.get(r) != h and r not in MERGED]
    archived = [r for r in now if r.startswith("archive/") and r not in after]
    commits = _count(vault, f"{head}..HEAD")
    head2 = _head(vault)
    _alaya(vault, "introspect", "--json", env=env)
    out["introspect"] = {"exit": code, "persons_notes_changed": touched,
                         "archived": archived, "commits": commits,
                         "second_run_commits": _count(vault, f"{head2}..HEAD"),
                         "proposals": sum(len(p.get("proposals", [])) for p in doc.get("phases", [])),
                         "review_commit": bool(doc.get("review_commit")),
                         "seconds": round(time.perf_counter() - t0, 2)}

    # 5. every recalled id opens with show
    ids: set[str] = set()
    titles = [Path(n).stem for n in notes]
    code, text = _recall_many(vault, titles, env)
    for line in text.splitlines():
        ids.update(json.loads(line))
    failed = [i for i in sorted(ids) if _alaya(vault, "show", i, "--json", env=env)[0] != 0]
    out["recall"] = {"queries": len(titles), "ids": len(ids), "show_failed": failed[:20]}
    return out


def _recall_many(vault: Path, queries: list[str], env: dict[str, str]) -> tuple[int, str]:
    """One process: recall every query (the library, as the CLI does), print the ids."""
    script = (
        "import json,sys\n"
        "from pathlib import Path\n"
        "from vault_engine.store.vault import Vault\n"
        "from vault_engine.recall.pipeline import recall\n"
        "from vault_engine.recall.query import RecallQuery, RecallSettings\n"
        "from vault_engine.providers.embedding import get_embedder\n"
        "v = Vault.open(Path(sys.argv[1]))\n"
        "emb = get_embedder(v.config)\n"
        "for q in json.loads(sys.stdin.read()):\n"
        "    r = recall(v.state_dir, RecallQuery(text=q), embedder=emb,\n"
        "               settings=RecallSettings.from_config(v.config))\n"
        "    print(json.dumps([n['id'] for n in r['nodes']]))\n")
    proc = subprocess.run([sys.executable, "-c", script, str(vault)], cwd=ROOT, env=env,
                          input=json.dumps(queries), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return proc.returncode, proc.stdout


def _frontmatter_line(path: Path, line: int) -> bool:
    """A finding on a frontmatter key line (alaya reports property links at their key)."""
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    return bool(lines and lines[0].strip() == "---" and line < len(lines)
                and "---" in [x.strip() for x in lines[line:]])


def _head(vault: Path) -> str:
    return subprocess.run(["git", "-C", str(vault), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


def _count(vault: Path, spec: str) -> int:
    out = subprocess.run(["git", "-C", str(vault), "rev-list", "--count", spec],
                         capture_output=True, text=True).stdout.strip()
    return int(out or 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--keep", type=Path, default=None, help="work here and keep the copy")
    args = ap.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        report(measure(args.vault.resolve(), args.keep.resolve()), args.out)
        return
    with tempfile.TemporaryDirectory(prefix="alaya-obsidian-") as tmp:
        report(measure(args.vault.resolve(), Path(tmp)), args.out)


if __name__ == "__main__":
    main()
