"""`alaya doctor`: is this vault healthy, and if not, what to run to fix it."""

from __future__ import annotations

from pathlib import Path

from vault_engine.config import CONFIG_FILE, load_config
from vault_engine.errors import ConfigError
from vault_engine.store import history
from vault_engine.store.namespaces import Caller
from vault_engine.store.vault import TMP_MARKER, Vault

from . import repo_checks
from .doctor_model import Check, Repair


def diagnose(root: Path, caller: Caller) -> list[Check]:
    checks: list[Check] = []
    root = Path(root).expanduser()
    if not root.is_dir():
        return [Check("vault", False, f"no vault at {root}", f"alaya init {root}")]
    if not (root / CONFIG_FILE).exists():
        return [Check("vault", False, f"{root} has no {CONFIG_FILE}", f"alaya init {root}")]
    checks.append(Check("vault", True, f"vault at {root.resolve()}"))

    try:
        config = load_config(root)
        if config.unknown:
            checks.append(Check("config", False, f"{CONFIG_FILE}: unknown settings "
                                + ", ".join(config.unknown),
                                "check the spelling against docs/configuration.md",
                                severity="warning"))
        else:
            checks.append(Check("config", True, f"{CONFIG_FILE} is valid"))
    except ConfigError as exc:
        checks.append(Check("config", False, str(exc), exc.fix or ""))
        config = None

    git = history.status(root)
    if not git.get("repo"):
        checks.append(Check("git", False, "the vault is not a git repository",
                            f"alaya init {root}  (adds git without touching your notes)"))
    else:
        if not git.get("has_commits"):
            checks.append(Check("git", False, "the repository has no commits",
                                f"alaya init {root}"))
        else:
            checks.append(Check("git", True, f"git repository on branch {git.get('branch')}"))
        if not git.get("identity"):
            checks.append(Check("git-identity", True,
                                "git has no user.name/user.email: alaya commits as the "
                                "[git] author in alaya.toml",
                                "git config user.name 'You' && git config user.email you@example.com",
                                severity="warning"))
        if (root / ".git" / "index.lock").exists():
            checks.append(Check("git-lock", False, "git's index is locked (.git/index.lock): "
                                "a git command is running, or one was killed — alaya cannot "
                                "commit until it is gone",
                                "alaya doctor --fix removes it when an interrupted sync left "
                                "it; otherwise, if no git command is running, remove "
                                ".git/index.lock"))
        raw_uncommitted = git.get("uncommitted")
        uncommitted = [p for p in raw_uncommitted if isinstance(p, str)] if isinstance(
            raw_uncommitted, list) else []
        if uncommitted:
            checks.append(Check("uncommitted", False,
                                f"{len(uncommitted)} uncommitted change(s) in the vault",
                                "review with `git status` and commit them",
                                severity="warning", items=tuple(uncommitted[:50])))

    if config is None:
        return checks
    vault = Vault(root, config, caller)
    index = vault.load()
    if not vault.caller.is_owner:  # file names are titles: an agent sees only its own
        checks = [_visible_items(c, index) for c in checks]
    links = [i for i in index.issues if i.code == "symlink"]
    unreadable = [i for i in index.issues if i.code != "symlink"]
    if unreadable:
        checks.append(Check("notes", False, f"{len(unreadable)} note(s) could not be read",
                            "fix each file as described, the rest of the vault still works",
                            items=tuple(f"{i.path}:{i.line or 1}: {i.message} (fix: {i.fix})"
                                        for i in unreadable)))
    else:
        checks.append(Check("notes", True, f"{len(index.notes)} notes parse cleanly"))
    if links:
        checks.append(Check("symlinks", False, f"{len(links)} symlink(s) in the vault: never "
                            "followed, so what they point at is not part of the memory",
                            "replace each with the real file or folder, or move it out of the "
                            "vault", severity="warning",
                            items=tuple(f"{i.path}: {i.message}" for i in links)))
    checks += _interrupted_checks(vault)
    if git.get("repo"):
        checks += repo_checks.checks(root, vault.state_dir, owner=vault.caller.is_owner)
    bad_ids = [f"{i.path}:{i.line}: {i.message}" for n in index.notes for i in n.issues
               if i.code == "invalid-id"]
    if bad_ids:
        checks.append(Check("ids", False, f"{len(bad_ids)} invalid id(s)",
                            "use ids made of letters, digits, '-', '_' and '.'",
                            items=tuple(bad_ids)))
    dups = index.duplicate_ids()
    if dups:
        checks.append(Check("duplicate-ids", False, f"{len(dups)} id(s) used by more than one note",
                            "give each copy a new id (delete its `id:` line and run "
                            "`alaya doctor` again, or edit it by hand)",
                            items=tuple(f"{k}: " + ", ".join(n.path for n in v)
                                        for k, v in sorted(dups.items()))))
    checks += _artifact_checks(vault)
    checks += _seal_checks(vault)
    checks += _runtime_checks(vault)
    checks += _budget_checks(vault)
    leftovers = sorted(p.relative_to(root).as_posix() for p in root.rglob(f"*{TMP_MARKER}*")
                       if ".git" not in p.parts)
    if leftovers:
        checks.append(Check("temp-files", False,
                            f"{len(leftovers)} temp file(s) left by an interrupted write",
                            "alaya doctor --fix  (the notes themselves were never "
                            "half-written)", severity="warning",
                            items=tuple(leftovers) if vault.caller.is_owner else ()))
    return checks


def _visible_items(check: Check, index: object) -> Check:
    """A check's listed paths cut to the notes the caller may see (and the files beside them)."""
    import dataclasses

    seen = {n.path[:-3] for n in getattr(index, "notes", [])}
    kept = tuple(i for i in check.items if i.split(".", 1)[0] in seen)
    if len(kept) == len(check.items):
        return check
    return dataclasses.replace(check, items=kept + (f"(and {len(check.items) - len(kept)} in "
                                                    "notes this agent may not see)",))


def _interrupted_checks(vault: Vault) -> list[Check]:
    """Commands killed after writing and before committing (store/journal.py)."""
    from vault_engine.store.journal import interrupted

    items = [i for i in interrupted(vault.state_dir) if i.paths]
    if not items:
        return []
    return [Check("interrupted", False, f"{len(items)} command(s) were interrupted before "
                  "their commit: their files are written but not committed",
                  "alaya doctor --fix  (or any alaya command that writes: it commits them "
                  "first)", items=tuple(f"{(i.message or '?').splitlines()[0]}: "
                                        + ", ".join(i.paths) for i in items)
                  if vault.caller.is_owner else ())]


def repair(root: Path, caller: Caller) -> list[Repair]:
    """`alaya doctor --fix`: commit what interrupted commands wrote, remove temp files left by
    interrupted writes, unfinished builds and the announcement of a server that died."""
    import json
    import os
    import shutil

    from vault_engine import artifacts as A
    from vault_engine.store.journal import interrupted, recover

    vault = Vault.open(root, caller=caller)
    out: list[Repair] = []
    with vault.locked():
        if history.is_repo(vault.root):
            out += repo_checks.repairs(vault.root, vault.state_dir)
        pending = [i for i in interrupted(vault.state_dir) if i.paths]
        shas = recover(vault)
        if pending:
            out.append(Repair("interrupted", f"committed {sum(len(i.paths) for i in pending)} "
                              f"file(s) of {len(pending)} interrupted command(s)"
                              + (f" ({', '.join(s[:10] for s in shas)})" if shas else "")))
        temps = [p for p in vault.root.rglob(f"*{TMP_MARKER}*") if ".git" not in p.parts
                 and not p.is_symlink()]
        for p in temps:
            p.unlink(missing_ok=True)
        if temps:
            out.append(Repair("temp-files", f"removed {len(temps)} temp file(s)"))
    partial = list((vault.state_dir / A.BUILDS).glob("*.partial")) \
        if (vault.state_dir / A.BUILDS).is_dir() else []
    for p in partial:
        shutil.rmtree(p, ignore_errors=True)
    if partial:
        out.append(Repair("partial-builds", f"removed {len(partial)} unfinished build(s)"))
    serve = vault.state_dir / "serve.json"
    if serve.exists():
        try:
            os.kill(int(json.loads(serve.read_text(encoding="utf-8"))["pid"]), 0)
        except (OSError, ValueError, KeyError, TypeError):
            serve.unlink(missing_ok=True)
            out.append(Repair("serve", "removed the announcement of a server that is gone"))
    return out


def _artifact_checks(vault: Vault) -> list[Check]:
    """Stale artifacts and missing embeddings, each with the command that fixes them."""
    from vault_engine import artifacts as A

    from .freshness import check_artifacts

    build = A.current_build(vault.state_dir)
    if build is None:
        return [Check("artifacts", False, "the vault has not been compiled: recall and the "
                      "digest have nothing to read", "alaya compile", severity="warning")]
    out = []
    leftovers = sorted(p.name for p in (vault.state_dir / A.BUILDS).glob("*.partial"))
    if leftovers:
        out.append(Check("partial-builds", False, f"{len(leftovers)} unfinished build(s) from "
                         "an interrupted compile (the published one is intact)",
                         f"rm -r {vault.state_dir / A.BUILDS}/*.partial", severity="warning",
                         items=tuple(leftovers)))
    try:
        result = check_artifacts(vault)
    except Exception as exc:  # noqa: BLE001 - a broken build is itself the finding
        return out + [Check("artifacts", False, f"the artifacts cannot be read: {exc}",
                            "alaya compile --full")]
    if result.ok:
        return out + [Check("artifacts", True, f"artifacts are fresh (build {build.build_id})")]
    changed = result.added + result.changed + result.deleted
    if changed:
        out.append(Check("artifacts", False, f"artifacts are stale: {len(result.added)} added, "
                         f"{len(result.changed)} changed, {len(result.deleted)} deleted note(s) "
                         "since the last compile", "alaya compile  (or keep `alaya watch` "
                         "running)", severity="warning", items=tuple(changed[:20])))
    elif "embedder" in result.reason:
        out.append(Check("embeddings", False, result.reason, "alaya compile --full",
                         severity="warning"))
    else:
        out.append(Check("embeddings", False, "some notes have no vectors: the last compile "
                         "could not embed everything (recall falls back to BM25 for them)",
                         "alaya compile  (it resumes from the embedding cache)",
                         severity="warning"))
    return out


def _seal_checks(vault: Vault) -> list[Check]:
    """The machine key, and whether the current build's graph carries its seal (seal.py)."""
    from vault_engine import artifacts as A
    from vault_engine import seal

    problem = seal.key_problem(vault.root)
    if problem is not None:
        return [Check("machine-key", False, f"{problem[0]}: alaya loads no pickle (its caches "
                      "live in memory only)", problem[1], severity="warning")]
    out = [Check("machine-key", True, f"the machine key is {seal.key_path()}")]
    build = A.current_build(vault.state_dir)
    if build is not None and not build.graph_sealed():
        out.append(Check("graph-seal", False, f"graph.pickle of build {build.build_id} is not "
                         "sealed by this machine's key (copied, synced or planted): alaya will "
                         "not load it", "alaya compile", severity="warning"))
    return out


def _runtime_checks(vault: Vault) -> list[Check]:
    """A lock held by another process, a server announcement left by a dead server."""
    import json
    import os

    from vault_engine.errors import LockTimeoutError, WriteRefusedError

    out = []
    try:
        with vault.locked(timeout=0.2):
            pass
    except WriteRefusedError as exc:  # a read-only disk, another user's vault: doctor reads
        out.append(Check("writable", False, f"{exc.message}: reads answer, every write "
                         "refuses (exit 3) until it is writable", exc.fix or "",
                         severity="warning"))
    except LockTimeoutError:
        out.append(Check("lock", False, "another process holds the vault lock (.alaya/lock): "
                         "writes will wait for it", "wait for it, or find it with "
                         "`fuser .alaya/lock` and stop it (the OS frees the lock when its "
                         "holder exits)", severity="warning"))
    serve = vault.state_dir / "serve.json"
    if serve.exists():
        try:
            pid = int(json.loads(serve.read_text(encoding="utf-8"))["pid"])
            os.kill(pid, 0)
        except (OSError, ValueError, KeyError, TypeError):
            out.append(Check("serve", False, "`.alaya/serve.json` names a server that is no "
                             "longer running (clients fall back to in-process recall)",
                             f"rm {serve}", severity="warning"))
    return out


def _budget_checks(vault: Vault) -> list[Check]:
    from vault_engine.providers.llm import Budget
    from vault_engine.store import blocks

    out = []
    memory = vault.root / "MEMORY.md"
    budget = int(vault.config.get("memory", "budget_chars"))
    if memory.exists():
        text = memory.read_text(encoding="utf-8", errors="replace")
        human = len(blocks.outside_blocks(text))
        if human > budget:
            out.append(Check("memory-budget", False, f"your own text in MEMORY.md is {human:,} "
                             f"characters, over [memory] budget_chars ({budget:,}): nothing "
                             "can be promoted", "shorten MEMORY.md outside the managed block, "
                             "or raise budget_chars in alaya.toml", severity="warning"))
        elif len(text) > budget:
            out.append(Check("memory-budget", False, f"MEMORY.md is {len(text):,} characters, "
                             f"over the budget of {budget:,}",
                             "alaya introspect --phase promote", severity="warning"))
    llm = Budget(vault.state_dir, int(vault.config.get("llm", "daily_call_budget")))
    if vault.config.get("llm", "provider") != "rules" and not llm.available():
        out.append(Check("llm-budget", False, f"today's LLM budget is spent ({llm.used()} of "
                         f"{llm.limit} calls): distill uses the offline rules until tomorrow",
                         "wait for tomorrow (UTC), or raise [llm] daily_call_budget",
                         severity="warning"))
    return out
