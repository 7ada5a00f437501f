"""`alaya import PATH`: an existing Obsidian vault or folder of markdown notes becomes cards
(seed 000 §5.3, "memex import").

Each note is copied to `cards/imported/<its relative path>`, keeping its frontmatter and text
byte for byte. A user's own `id` is kept (any unique string); only when the note has none, or
one alaya cannot use (taken by another note, or with `/`, `..` or spaces), alaya's id goes to
`alaya_id` beside it. `type` stays as written. `created` is never invented: it comes from
the source's git history (the first commit of the file) or is left out. File names and
folders are kept, and so are attachments' paths (beside the notes, under
`cards/imported/`), so wikilinks, embeds and relative markdown links still resolve. Notes
already imported are skipped; a note with broken YAML is reported and skipped. Everything
lands in one commit; the notes stay a person's (vault_engine/store/authorship.py).
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from vault_engine.errors import NoteParseError, UsageError

from .frontmatter import NoteText
from .history import ignored, run_untrusted_git
from .ids import is_valid_id, new_id
from .namespaces import SHARED
from .notes import decode_note
from .vault import Vault

SKIP_DIRS = {".git", ".obsidian", ".trash", ".alaya", "node_modules", "__pycache__"}


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "path: reason"
    commit: str | None = None
    # "path: namespace": a note that named a namespace the importer may not fill
    renamespaced: list[str] = field(default_factory=list)


def _source_ignored(source: Path, rels: list[str]) -> set[str]:
    """The files the folder's own ignore rules exclude (its build output, its local
    secrets): machine-local for that folder, never copied."""
    if not rels:
        return set()
    out = run_untrusted_git(source, "check-ignore", "--stdin", "-z",
                            data="\x00".join(rels).encode("utf-8", "surrogateescape"))
    return {p for p in (out or b"").decode("utf-8", "surrogateescape").split("\x00") if p}


def _walk(source: Path, report: ImportReport) -> list[tuple[str, Path]]:
    """(relative path, file) of every regular file to import, in order; symlinks and hidden
    or machine-local folders are never followed."""
    found = []
    for dirpath, dirnames, filenames in os.walk(source):
        for d in sorted(dirnames):  # never followed: it could lead anywhere
            if os.path.islink(os.path.join(dirpath, d)):
                rel_dir = (Path(dirpath) / d).relative_to(source).as_posix()
                report.skipped.append(f"{rel_dir}/: symlink (not followed)")
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS
                             and not d.startswith(".")
                             and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            full = Path(dirpath) / name
            rel = full.relative_to(source).as_posix()
            if full.is_symlink():
                report.skipped.append(f"{rel}: symlink")
                continue
            if not full.is_file():  # a socket, a FIFO, a device: never opened
                report.skipped.append(f"{rel}: not a regular file")
                continue
            if name == "alaya.toml":  # a vault's marker: alaya would take the folder for one
                report.skipped.append(f"{rel}: a vault's alaya.toml (never copied: alaya run "
                                      "there would take the folder for a vault)")
                continue
            found.append((rel, full))
    return found


def added_dates(source: Path) -> dict[str, dt.datetime]:
    """When each file first entered the git history of `source` ({} when it is not in git):
    one `git log` over the whole history, oldest commit last — with every program the
    folder's own git config names switched off (history.UNTRUSTED)."""
    raw = run_untrusted_git(source, "log", "--diff-filter=A", "--no-renames", "--name-only",
                            "--no-show-signature", "--no-ext-diff", "--no-textconv", "-z",
                            "--format=%x1e%aI%x1f")
    if raw is None:
        return {}
    top = (run_untrusted_git(source, "rev-parse", "--show-prefix") or b"").decode().strip()
    out: dict[str, dt.datetime] = {}
    for chunk in raw.decode("utf-8", "replace").split("\x1e"):
        when, _, names = chunk.partition("\x1f")
        if not when.strip():
            continue
        stamp = dt.datetime.fromisoformat(when.strip()).astimezone(dt.UTC).replace(microsecond=0)
        for name in names.split("\x00"):
            name = name.strip("\n")
            if name.startswith(top):
                out[name[len(top):]] = stamp  # later in the log = earlier in time: wins
    return out


def import_notes(vault: Vault, source: Path, *, commit: bool = True) -> ImportReport:
    source = Path(source).expanduser().resolve()
    if not source.is_dir():
        raise UsageError(f"{source} is not a folder", fix="pass the folder of notes to import")
    if source == vault.root or vault.root in source.parents:
        raise UsageError("cannot import the vault into itself", fix="pass another folder")
    report = ImportReport()
    limit = int(vault.config.get("vault", "max_note_bytes"))
    with vault.locked():
        index = vault.load()
        taken = index.ids()
        added = added_dates(source)
        with vault.transaction("import", commit=commit) as tx:
            files = _walk(source, report)
            theirs = _source_ignored(source, [rel for rel, _ in files])
            ours = set(ignored(vault.root, [f"cards/imported/{rel}" for rel, _ in files]))
            home = vault.caller.home(str(vault.config.get("vault", "default_namespace")))
            for rel, full in files:
                dest = f"cards/imported/{rel}"
                if rel in theirs or dest in ours:
                    report.skipped.append(f"{rel}: ignored by "
                                          + ("the folder's .gitignore" if rel in theirs
                                             else "this vault's .gitignore"))
                    continue
                if not rel.endswith(".md"):
                    if not (vault.root / dest).exists():
                        tx.write_raw(dest, full.read_bytes())
                        report.attachments.append(dest)
                    continue
                if (vault.root / dest).exists():
                    report.skipped.append(f"{rel}: already imported")
                    continue
                if full.stat().st_size > limit:
                    report.skipped.append(f"{rel}: larger than {limit:,} bytes")
                    continue
                try:
                    text = decode_note(full.read_bytes(), rel)
                    doc = NoteText.parse(text, path=rel)
                except NoteParseError as exc:
                    report.skipped.append(f"{rel}:{exc.line or 1}: {exc.message}")
                    continue
                data = doc.frontmatter.data
                own = data.get("id")
                if own is None or not is_valid_id(own) or str(own) in taken:
                    alaya_id = new_id("card", taken)
                    doc.set("id" if own is None else "alaya_id", alaya_id)
                    taken.add(alaya_id)
                else:
                    taken.add(str(own))
                if "created" not in data and (when := added.get(rel)):
                    doc.set("created", when)
                named = str(data.get("namespace") or "").strip()
                if named and named not in (SHARED, home):
                    # an imported folder is untrusted: it does not put notes into another
                    # agent's namespace (the name it gave is kept beside, for a person)
                    doc.set("imported_namespace", named)
                    doc.set("namespace", home)
                    report.renamespaced.append(f"{dest}: {named}")
                elif not named and vault.caller.agent:
                    doc.set("namespace", vault.caller.agent)  # an agent imports for itself
                tx.create(dest, doc.render())
                report.imported.append(dest)
            tx.message = (f"import: {len(report.imported)} notes from {source.name}"
                          + (f", {len(report.attachments)} attachments" if report.attachments
                             else "")
                          + ("\n\nskipped:\n" + "\n".join(report.skipped)
                             if report.skipped else ""))
        report.commit = tx.sha
    return report
