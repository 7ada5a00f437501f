"""A three-way merge for notes, used by git as a merge driver (`*.md merge=alaya`).

Two machines that each added tags, relations or claims to the same card must end with both
sets, not a conflict. The driver merges frontmatter key by key against the common ancestor:

- lists of identifiable items are merged as sets: `relations` by (type, target), `claims` by
  id (each claim's `evidence` by source), `tags`, `aliases`, `source_sessions` by value — an
  item added on either side is kept, an item one side removed (and the other left alone) goes;
- a claim both sides changed differently is a true conflict: ours stays, theirs is added under
  a new id, both marked `contested` with `conflict: sync` (`alaya sync` lists them in
  reports/contradictions.md); a claim id both sides *added* with different text is two claims;
- other keys: the side that changed wins; both changed → `updated` takes the later time,
  anything else keeps ours and the other value is kept under `<key>_theirs` for review;
- the body is merged line by line (`git merge-file --union`: both sides' new lines, no
  conflict markers).

The result is always a valid note. Notes whose frontmatter cannot be read on some side fall
back to git's own merge (a conflict a person resolves).
"""

from __future__ import annotations

import datetime as dt
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from vault_engine.primitives import to_datetime

from .frontmatter import FlowMap, NoteText

LIST_KEYS: dict[str, Callable[[Any], Hashable]] = {
    "relations": lambda r: (str(r.get("type", "")).upper(), str(r.get("target", "")))
    if isinstance(r, dict) else str(r),
    "tags": str, "aliases": str, "source_sessions": str,
}
MISSING = object()


def _key_evidence(e: Any) -> Hashable:
    return str(e.get("source")) if isinstance(e, dict) else str(e)


def _merge_items(base: list[Any], ours: list[Any], theirs: list[Any],
                 key: Callable[[Any], Hashable]) -> list[Any]:
    b = {key(x) for x in base}
    o = {key(x): x for x in ours}
    t = {key(x): x for x in theirs}
    out = []
    for k, x in o.items():
        if k in b and k not in t:
            continue  # they removed it
        out.append(x)
    for k, x in t.items():
        if k not in o and k not in b:
            out.append(x)  # they added it
    return out


def _flow(items: list[Any]) -> list[Any]:
    return [FlowMap(x) if isinstance(x, dict) else x for x in items]


def _merge_claims(base: list[Any], ours: list[Any], theirs: list[Any],
                  conflicts: list[str]) -> list[Any]:
    def by_id(items: list[Any]) -> dict[str, dict[str, Any]]:
        return {str(c.get("id")): dict(c) for c in items if isinstance(c, dict)}

    b, o, t = by_id(base), by_id(ours), by_id(theirs)
    out: list[dict[str, Any]] = []
    used = set(o) | set(t)
    extra: list[dict[str, Any]] = []
    for cid, mine in o.items():
        other = t.get(cid)
        orig = b.get(cid)
        if other is None:
            if orig is not None and orig == mine:
                continue  # they deleted it, we did not touch it
            out.append(mine)
            continue
        if orig is None and mine.get("text") != other.get("text"):
            out.append(mine)  # both added a claim that happens to share the id: two claims
            extra.append(other)
            continue
        merged = dict(mine)
        ev = _merge_items(list((orig or {}).get("evidence") or []),
                          list(mine.get("evidence") or []), list(other.get("evidence") or []),
                          _key_evidence)
        if ev:
            merged["evidence"] = _flow(ev)
        base_text = (orig or {}).get("text")
        if mine.get("text") != other.get("text"):
            if mine.get("text") == base_text:
                merged = {**other, **({"evidence": _flow(ev)} if ev else {})}
            elif other.get("text") != base_text:  # both rewrote it: a true conflict
                merged["status"] = "contested"
                merged["conflict"] = "sync"
                theirs_copy = dict(other)
                theirs_copy["status"] = "contested"
                theirs_copy["conflict"] = "sync"
                extra.append(theirs_copy)
                conflicts.append(cid)
        else:
            for k, v in other.items():  # other fields: the side that changed wins
                if k in ("evidence", "text"):
                    continue
                if (orig or {}).get(k, MISSING) == mine.get(k, MISSING):
                    merged[k] = v
        if isinstance(merged.get("evidence"), list):
            merged["evidence"] = _flow(list(merged["evidence"]))
        out.append(merged)
    for cid, other in t.items():
        if cid not in o and cid not in b:
            out.append(other)
    for claim in extra:
        n = 1
        while f"c{n}" in used:
            n += 1
        claim["id"] = f"c{n}"
        used.add(claim["id"])
        if isinstance(claim.get("evidence"), list):
            claim["evidence"] = _flow(list(claim["evidence"]))
        out.append(claim)
    return out


def _merge_body(base: str, ours: str, theirs: str) -> str:
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_text(text, encoding="utf-8")
            paths.append(str(p))
        res = subprocess.run(["git", "merge-file", "-p", "--union", *paths],
                             capture_output=True, text=True, check=False)
        return res.stdout if res.returncode >= 0 else ours


def merge_text(base: str, ours: str, theirs: str, path: str = "") -> str:
    """Two versions of a note from one base, merged; a note whose frontmatter does not parse
    is merged as plain text (a union merge: nothing of either side is dropped)."""
    from vault_engine.errors import NoteParseError

    try:
        return merge_notes(base, ours, theirs, path)[0]
    except NoteParseError:
        return _merge_body(base, ours, theirs)


def merge_notes(base: str, ours: str, theirs: str, path: str = "") -> tuple[str, list[str]]:
    """The merged note text and the ids of claims that truly conflicted."""
    b, o, t = (NoteText.parse(x, path) for x in (base or "---\n---\n", ours, theirs))
    conflicts: list[str] = []
    bf, of, tf = b.frontmatter.data, o.frontmatter.data, t.frontmatter.data
    result = NoteText.parse(ours, path)
    if tf:  # their keys need a frontmatter to go into, even if ours has none
        result.ensure_frontmatter()
    fm = result.frontmatter
    for key in list(dict.fromkeys(list(of) + list(tf))):
        bv, ov, tv = bf.get(key, MISSING), of.get(key, MISSING), tf.get(key, MISSING)
        if ov == tv:
            continue
        if key == "claims":
            merged: Any = _merge_claims(list(bv if isinstance(bv, list) else []),
                                        list(ov if isinstance(ov, list) else []),
                                        list(tv if isinstance(tv, list) else []), conflicts)
            fm.set(key, merged)
        elif key in LIST_KEYS and all(isinstance(v, list) or v is MISSING
                                      for v in (bv, ov, tv)):
            items = _merge_items(list(bv) if bv is not MISSING else [],  # type: ignore[arg-type]
                                 list(ov) if ov is not MISSING else [],  # type: ignore[arg-type]
                                 list(tv) if tv is not MISSING else [],  # type: ignore[arg-type]
                                 LIST_KEYS[key])
            fm.set(key, _flow(items) if key == "relations" else items)
        elif ov == bv:  # only they changed it
            if tv is MISSING:
                fm.delete(key)
            else:
                fm.set(key, tv)
        elif tv == bv:
            continue  # only we changed it
        elif key == "updated":
            times = [x for x in (to_datetime(ov), to_datetime(tv)) if isinstance(x, dt.datetime)]
            if times:
                fm.set(key, max(times))
        elif tv is not MISSING:
            fm.set(f"{key}_theirs", tv)
    result.set_body(_merge_body(b.body, o.body, t.body))
    return result.render(), conflicts


def run_driver(base_path: str, ours_path: str, theirs_path: str, name: str = "") -> int:
    """git merge driver: write the merge into %A; 0 when clean, 1 to let git report a
    conflict (a side whose frontmatter cannot be read)."""
    from vault_engine.errors import AlayaError

    texts = []
    for p in (base_path, ours_path, theirs_path):
        try:
            texts.append(Path(p).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return 1
    if name and _apart(texts[1], texts[2], name):
        return 0  # ours stays at the path; theirs was set apart for `alaya sync` to place
    try:
        merged, _ = merge_notes(texts[0], texts[1], texts[2], path=name)
    except (AlayaError, ValueError, TypeError):
        res = subprocess.run(["git", "merge-file", ours_path, base_path, theirs_path],
                             check=False)
        return 1 if res.returncode else 0
    Path(ours_path).write_text(merged, encoding="utf-8")
    return 0


APART = "alaya-sync/apart"  # under the git dir: notes of another namespace, to be placed


def _apart(ours: str, theirs: str, name: str) -> bool:
    """Two notes of different namespaces at one path are two notes: no claim or body line may
    cross from one namespace into the other. Theirs is saved under the git dir (never in the
    working tree, never committed) and `alaya sync` places it beside ours after the merge
    (vault_engine/collab/collisions.py). True when set apart."""
    from .namespaces import namespace_of_text

    ns_ours, ns_theirs = namespace_of_text(ours, name), namespace_of_text(theirs, name)
    if ns_ours is None or ns_theirs is None or ns_ours == ns_theirs:
        return False
    git_dir = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], capture_output=True,
                             text=True, check=False).stdout.strip()
    if not git_dir:
        return False
    target = Path(git_dir) / APART / name
    if ".." in Path(name).parts:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(theirs, encoding="utf-8")
    return True


def driver_command() -> str:
    """How git runs the driver on this machine: this interpreter by absolute path, in isolated
    mode (`-I`: no PYTHON* variables, no user site, and neither the working directory nor the
    script's folder on sys.path), so a `cli/` package committed to the vault can never stand
    in for alaya's driver."""
    return f"{shlex.quote(sys.executable)} -I -m cli.merge_driver %O %A %B %P"


DRIVER_NAME = "alaya note merge (frontmatter sets, claims)"


def register_driver(root: object) -> None:
    """The driver in the repository's local git config (per machine, not versioned), written
    through `git config` and only when it changed."""
    from .history import set_config

    set_config(Path(str(root)), "merge.alaya.name", DRIVER_NAME)
    set_config(Path(str(root)), "merge.alaya.driver", driver_command())
