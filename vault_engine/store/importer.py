"""`alaya import PATH`: an existing Obsidian vault or folder of markdown notes becomes cards
(seed 000 §5.3, "memex import").

Each note is copied to `cards/imported/<its relative path>`, keeping its frontmatter and text
byte for byte; only missing keys are added (`id`, `title`, `type: note`, `created` from the
file time). File names are kept, so its `[[wikilinks]]` still resolve (they compile to
RELATES_TO edges). Other files (images, PDFs) go to `attachments/` under the same relative
path. Notes already imported are skipped; a note with broken YAML is reported and skipped.
Everything lands in one commit.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from vault_engine.errors import NoteParseError, UsageError

from .frontmatter import NoteText
from .ids import is_valid_id, new_id
from .model import CARD_TYPES
from .notes import decode_note
from .vault import Vault

SKIP_DIRS = {".git", ".obsidian", ".trash", ".alaya", "node_modules", "__pycache__"}


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "path: reason"
    commit: str | None = None


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
        with vault.transaction("import", commit=commit) as tx:
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
                    if not name.endswith(".md"):
                        dest = f"attachments/{rel}"
                        if not (vault.root / dest).exists():
                            tx.write_raw(dest, full.read_bytes())
                            report.attachments.append(dest)
                        continue
                    dest = f"cards/imported/{rel}"
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
                    if not is_valid_id(data.get("id")) or data.get("id") in taken:
                        card_id = new_id("card", taken)
                        doc.set("id", card_id)
                    taken.add(str(doc.frontmatter.data["id"]))
                    if not data.get("title"):
                        doc.set("title", full.stem)
                    if data.get("type") not in CARD_TYPES:
                        if "type" in data:
                            doc.set("source_type", data.get("type"))
                        doc.set("type", "note")
                    if not data.get("created"):
                        mtime = dt.datetime.fromtimestamp(full.stat().st_mtime, dt.UTC)
                        doc.set("created", mtime.replace(microsecond=0))
                    if not data.get("namespace") and vault.caller.agent:
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
