"""The vault: reading every note, and the one gateway through which every write goes.

Writes are atomic (temp file in the same folder, fsync, `os.replace`), serialised by a vault
lock (`.alaya/lock`, a real OS file lock shared by every alaya process), and guarded by a
checksum: a file that changed on disk since it was read is re-read and the edit re-applied to
the new text (`update_note`), or the write is refused (`ConflictError`) — never overwritten
blindly. A `Transaction` groups the writes of one command into one git commit and puts every
file back as it was if the command fails half-way.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_engine.config import CONFIG_FILE, Config, load_config
from vault_engine.errors import (
    AmbiguousError,
    ConflictError,
    LockTimeoutError,
    NoteParseError,
    NotFoundError,
    UnsafePathError,
    VaultNotFoundError,
)
from vault_engine.primitives import checksum

from .atomic import (
    MISSING,
    TMP_MARKER,
    LateSave,
    Moved,
    Replaced,
    atomic_write,
    read_settled,
    rebase_regions,
)
from .links import LinkResolver, is_unsafe_target, normalize_name
from .model import Issue, Note
from .namespaces import Caller, namespace_in_head, namespace_of_text
from .transaction import Transaction

if TYPE_CHECKING:
    from .frontmatter import NoteText


def decode_note(data: bytes, rel: str) -> str:
    from .notes import decode_note as decode  # YAML is imported only by what parses notes

    return decode(data, rel)


def parse_note(rel: str, text: str, *, check: str | None = None) -> Note:
    from .notes import parse_note as parse

    return parse(rel, text, check=check)

ALAYA_DIR = ".alaya"
PARSED_CACHE = "cache/notes.pickle"
PARSED_CACHE_VERSION = 1  # with a hash of the parser's own source: see _parser_version
# Folders never scanned for notes: tool state, VCS, Obsidian settings and trash.
SKIP_DIRS = frozenset({".git", ALAYA_DIR, ".obsidian", ".trash", "node_modules"})
__all__ = ["MISSING", "TMP_MARKER", "Vault", "VaultIndex", "Transaction", "atomic_write"]


@dataclass
class VaultIndex:
    """Every parsed note of a vault plus what could not be parsed."""

    notes: list[Note]
    issues: list[Issue]
    attachments: list[str] = field(default_factory=list)
    # notes the caller may not see (namespaces.Caller.view): never found, never resolved,
    # only consulted to refuse a write with a clear error and to keep new ids unique
    hidden: list[Note] = field(default_factory=list)
    _resolver: LinkResolver | None = None

    @property
    def resolver(self) -> LinkResolver:
        if self._resolver is None:
            self._resolver = LinkResolver(self.notes, self.attachments)
        return self._resolver

    def by_path(self, rel: str) -> Note | None:
        return next((n for n in self.notes if n.path == rel), None)

    def by_id(self, note_id: str) -> list[Note]:
        key = normalize_name(note_id)
        return [n for n in self.notes if n.id and normalize_name(n.id) == key]

    def duplicate_ids(self) -> dict[str, list[Note]]:
        seen: dict[str, list[Note]] = {}
        for n in self.notes:
            if n.id:
                seen.setdefault(n.id, []).append(n)
        return {k: v for k, v in seen.items() if len(v) > 1}

    def ids(self) -> set[str]:
        """Every id in use, hidden notes' too (a new id must be unique in the whole vault)."""
        return {n.id for n in (*self.notes, *self.hidden) if n.id}

    def by_key(self, key: str) -> Note | None:
        """The note behind an id alaya hands out: its `id`, or `path:<vault path>` for a note
        without one (recall, digest and traverse use these keys)."""
        if key.startswith("path:"):
            return self.by_path(key[5:])
        found = self.by_id(key)
        return found[0] if len(found) == 1 else None

    def link(self, ref: Note | str, anchor: str | None = None) -> str:
        """The wikilink alaya writes to a note or node key (`card-…`, `path:…`): its file
        name (or shortest unambiguous path) with `|title` — one Obsidian opens. An unknown
        key is shown as code, never as a dead link."""
        from .links import link_to

        note = ref if not isinstance(ref, str) else self.by_key(ref)
        if note is None:
            return f"`{ref}`"
        return link_to(note, self.resolver, anchor=anchor)

    def find(self, ref: str) -> Note:
        """A note by id, `path:` key, path, file name, title or alias — exactly one, or a
        clear error."""
        ref = ref.strip()
        if ref.startswith("path:"):
            hit = self.by_path(ref[5:].strip())
            if hit is not None:
                return hit
        if is_unsafe_target(ref):
            raise UnsafePathError(f"{ref!r} points outside the vault",
                                  fix="refer to notes by id, title or a path inside the vault")
        exact = self.by_id(ref)
        if len(exact) == 1:
            return exact[0]
        if len(exact) > 1:
            raise AmbiguousError(f"id {ref!r} is used by {len(exact)} notes: "
                                 + ", ".join(n.path for n in exact),
                                 fix="give each note a unique id (see `alaya doctor`)")
        res = self.resolver.lookup(ref)
        if res.note is not None:
            return res.note
        if res.reason == "ambiguous":
            raise AmbiguousError(f"{ref!r} matches {len(res.candidates)} notes: "
                                 + ", ".join(n.path for n in res.candidates),
                                 fix="use the id or the path instead")
        raise NotFoundError(f"no note matches {ref!r} (by id, path, file name, title or alias)",
                            fix="check the spelling; ids, titles, aliases and file names match case-insensitively")


def _walk_rel(root: Path, links: list[str] | None = None) -> Iterator[str]:
    """Vault-relative paths of every candidate file, sorted, as plain strings (pathlib objects
    per file cost ~20 µs each: 0.3 s of a 10k-note compile). Symlinks — files and folders —
    are never followed (one could lead out of the vault); they are collected in `links`."""
    base = str(root)
    for dirpath, dirnames, filenames in os.walk(base):
        reldir = os.path.relpath(dirpath, base).replace(os.sep, "/")
        prefix = "" if reldir == "." else reldir + "/"
        keep = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS or d.startswith("."):
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                if links is not None:
                    links.append(prefix + d)
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.startswith(".") or TMP_MARKER in name:
                continue
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                if links is not None:
                    links.append(prefix + name)
                continue
            if name.endswith(".md") and not os.path.isfile(full):
                continue  # a FIFO or a socket named like a note: opening it could block
            yield prefix + name


def symlink_issue(root: Path, rel: str) -> Issue:
    """A symlink in the vault, as a finding: where it points and that it is not followed."""
    full = os.path.join(str(root), rel)
    target = os.readlink(full)
    resolved = Path(full).resolve()
    if not resolved.exists():
        where = f"points to {target!r}, which does not exist"
    elif resolved != root and root not in resolved.parents:
        where = f"points outside the vault ({target!r})"
    else:
        where = f"points to {target!r} inside the vault"
    return Issue(code="symlink", path=rel, line=None, severity="warning",
                 message=f"a symlink that alaya never follows: it {where}",
                 fix="replace it with the real file or folder, or move it out of the vault")


class Vault:
    """An opened vault. Cheap to create; reads lazily."""

    def __init__(self, root: Path, config: Config | None = None,
                 caller: Caller | None = None) -> None:
        self.root = root.resolve()
        self.config = config if config is not None else load_config(self.root)
        # who reads and writes through this object (store/namespaces.py): handed in by the
        # entry point that resolved it (an omitted caller is the owner: a library user with
        # the files); never read from the environment here
        self.caller = caller if caller is not None else Caller.owner()
        self._lock: Any = None  # filelock.FileLock, created on first use
        # files replaced and still open, read once more for late saves (store/late.py)
        self._replaced: list[tuple[str, Replaced]] = []

    # -- opening ------------------------------------------------------------------------
    @classmethod
    def open(cls, root: Path, caller: Caller | None = None) -> Vault:
        root = Path(root).expanduser()
        if not root.is_dir():
            raise VaultNotFoundError(f"no vault at {root}",
                                     fix=f"create one with `alaya init {root}` or pass --vault")
        if not (root / CONFIG_FILE).exists():
            raise VaultNotFoundError(f"{root} is not an alaya vault (no {CONFIG_FILE})",
                                     fix=f"run `alaya init {root}` to make it one")
        return cls(root, caller=caller)

    def as_caller(self, caller: Caller) -> Vault:
        """The same vault read and written as someone else (e.g. the public audience)."""
        other = Vault(self.root, self.config, caller)
        other._lock = self._lock
        return other

    @property
    def state_dir(self) -> Path:
        return self.root / ALAYA_DIR

    # -- paths --------------------------------------------------------------------------
    def abspath(self, rel: str) -> Path:
        """The absolute path of a vault-relative path; refuses anything outside the vault."""
        if not rel or is_unsafe_target(rel) or "\x00" in rel:
            raise UnsafePathError(f"path {rel!r} is outside the vault",
                                  fix="use a path relative to the vault root without '..'")
        full = (self.root / rel).resolve()
        if full != self.root and self.root not in full.parents:
            raise UnsafePathError(f"path {rel!r} resolves outside the vault ({full})",
                                  fix="remove the symlink or '..' that leads out of the vault")
        return full

    def relpath(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    # -- reading ------------------------------------------------------------------------
    def read_bytes(self, rel: str) -> bytes:
        return self.abspath(rel).read_bytes()

    def read_text(self, rel: str) -> tuple[str, str]:
        """(text, checksum) of a note; raises NoteParseError for binary / non-UTF-8."""
        data = self.read_bytes(rel)
        return decode_note(data, rel), checksum(data)

    def read_note(self, rel: str, cache: dict[str, tuple[str, Note]] | None = None) -> Note:
        """Parse one note. With `cache` (checksum and note by path), an unchanged file is
        not parsed again."""
        full = self.abspath(rel) if cache is None or os.path.islink(
            os.path.join(self.root, rel)) else Path(os.path.join(self.root, rel))
        if os.path.islink(full):
            raise NoteParseError("a symlink: alaya never follows one", path=rel,
                                 fix="replace it with the real file, or move it out of the vault")
        limit = int(self.config.get("vault", "max_note_bytes"))
        size = full.stat().st_size
        if size > limit:
            raise NoteParseError(f"file is {size:,} bytes, over the {limit:,}-byte limit",
                                 path=rel, fix="split the note, move it out of the vault, or "
                                 "raise [vault] max_note_bytes in alaya.toml")
        data = full.read_bytes()
        check = checksum(data)
        if cache is not None:
            hit = cache.get(rel)
            if hit is not None and hit[0] == check:
                return hit[1]
        text = decode_note(data, rel)
        return parse_note(rel, text, check=check)

    def note_paths(self) -> list[str]:
        """Every `.md` file the vault's readers may open (symlinks never are)."""
        return [rel for rel in _walk_rel(self.root) if rel.endswith(".md")]

    def load(self) -> VaultIndex:
        """What this vault's caller may see (namespaces.Caller.view) of `load_all()`."""
        return self.caller.view(self.load_all())

    def load_all(self) -> VaultIndex:
        """Parse every note, whoever asks: for the compiler and for writers that must check
        the whole vault. A bad note becomes an Issue; the rest still loads."""
        notes: list[Note] = []
        issues: list[Issue] = []
        attachments: list[str] = []
        links: list[str] = []
        cache = self._parsed_cache()
        fresh: dict[str, tuple[str, Note]] = {}
        for rel in _walk_rel(self.root, links):
            if not rel.endswith(".md"):
                attachments.append(rel)
                continue
            try:
                note = self.read_note(rel, cache)
                notes.append(note)
                fresh[rel] = (note.checksum, note)
            except NoteParseError as exc:
                issues.append(Issue(code="malformed-frontmatter" if "YAML" in exc.message
                                    or "frontmatter" in exc.message else "unreadable-note",
                                    path=rel, line=exc.line, message=exc.message,
                                    fix=exc.fix or "", namespace=self._head_namespace(rel)))
            except OSError as exc:
                issues.append(Issue(code="unreadable-note", path=rel, line=None,
                                    message=f"cannot read: {exc.strerror}",
                                    fix="check the file's permissions"))
        issues += [symlink_issue(self.root, rel) for rel in links]
        if fresh.keys() != cache.keys() or any(cache[r][1] is not fresh[r][1] for r in fresh):
            self._save_parsed_cache(fresh)
        return VaultIndex(notes=notes, issues=issues, attachments=attachments)

    def _head_namespace(self, rel: str) -> str | None:
        """The `namespace:` line of a note that does not parse (its issue is shown only to
        callers who may read that namespace)."""
        try:
            with open(os.path.join(self.root, rel), "rb") as fh:
                head = fh.read(16384).decode("utf-8", errors="replace")
        except OSError:
            return None
        return namespace_in_head(head)

    # -- parsed-note cache ---------------------------------------------------------------
    def _parsed_cache(self) -> dict[str, tuple[str, Note]]:
        """Notes parsed by an earlier command, keyed by path and checked by checksum: parsing
        is the cost of every command on a big vault (~0.6 ms a note), reading and hashing the
        file is not. Derived data under .alaya/cache/, sealed by this machine (seal.py):
        anything wrong with it — absent, stale, foreign, tampered with — is never unpickled."""
        from vault_engine import seal

        cached = seal.load(self.state_dir / PARSED_CACHE, self.root, "notes")
        if not (isinstance(cached, tuple) and len(cached) == 2):
            return {}
        version, data = cached
        return data if version == _parser_version() and isinstance(data, dict) else {}

    def _save_parsed_cache(self, data: dict[str, tuple[str, Note]]) -> None:
        from vault_engine import seal
        from vault_engine.errors import WriteRefusedError

        blob = seal.dumps(self.root, "notes", (_parser_version(), data))
        if blob is None:
            return  # no machine key: an unsealed cache would never be read
        try:
            atomic_write(self.state_dir / PARSED_CACHE, blob, durable=False)
        except (OSError, WriteRefusedError):
            pass  # a read-only or full vault still works, only slower

    # -- locking ------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the vault lock (re-entrant within one Vault object)."""
        from filelock import FileLock, Timeout

        from vault_engine.errors import refused_write

        wait = float(self.config.get("vault", "lock_timeout_s")) if timeout is None else timeout
        try:
            if self._lock is None:
                self.state_dir.mkdir(parents=True, exist_ok=True)
                self._lock = FileLock(str(self.state_dir / "lock"))
            self._lock.acquire(timeout=wait)
        except Timeout:
            raise LockTimeoutError(
                f"another alaya process has held the vault lock for over {wait:.0f}s",
                path=f"{ALAYA_DIR}/lock",
                fix="wait for it to finish; if no alaya process is running, retry (the OS "
                    "releases the lock when its holder exits)") from None
        except OSError as exc:  # a read-only or full vault: the lock file cannot be made
            raise (refused_write(exc, self.state_dir / "lock") or exc) from exc
        try:
            yield
        finally:
            try:
                if self._replaced and self._lock.lock_counter == 1:
                    from .late import reap

                    reap(self)  # the last writer out: a late save is merged, not lost
            finally:
                self._lock.release()

    # -- writing ------------------------------------------------------------------------
    def current_checksum(self, rel: str) -> str:
        full = self.abspath(rel)
        try:
            return checksum(full.read_bytes())
        except FileNotFoundError:
            return MISSING

    def write_text(self, rel: str, text: str, expected: str | None, *,
                   sync_after: bool = False, base: str | None = None,
                   redact: bool = True) -> str:
        """Atomically write `text`; `expected` is the checksum read (MISSING: must be new).

        `expected=None` skips the guard (only for files the tool alone owns). The guard runs
        at the replace itself (store/atomic.py); with `base` (the text read), a file that
        moved only where this write did not change it (a person typing in the body while
        alaya changes the frontmatter) takes both; a save that lands during the replace is
        merged back in (store/late.py). Returns the new checksum. Raises ConflictError when
        the file changed where this write changes it too, NamespaceError when the caller may
        not write it.

        The redactor sits here, so no writer can forget it: every secret this write brings
        is masked (`redact=False` only for `ingest --no-redact`); one the file already held —
        a person's own text — stays theirs (docs/security.md §2).
        """
        with self.locked():
            full = self.abspath(rel)
            if redact:
                text = self._scrub(rel, text, base)
            self._guard(rel, text)
            data = text.encode("utf-8")
            rebase = rebase_regions(base.encode("utf-8"), data) if base is not None else None
            if expected is not None and expected != MISSING and rebase is None and \
                    self.current_checksum(rel) != expected:
                raise self._moved(rel, True)  # cheap early refusal before any fsync
            keep: list[Replaced] = []
            try:
                atomic_write(full, data, expected=expected, sync_after=sync_after, keep=keep,
                             rebase=rebase)
            except Moved as exc:
                raise self._moved(rel, exc.exists, expected == MISSING) from None
            except LateSave as late:
                # someone saved in place during the replace: merge their save back in
                from .late import merge_late_save

                merged = merge_late_save(rel, full, late.base, late.saved)
                if merged is None:
                    raise self._moved(rel, True) from None
                return merged
            for replaced in keep:
                self._replaced.append((rel, replaced))
            return checksum(data)

    def _scrub(self, rel: str, text: str, base: str | None) -> str:
        """`text` with every secret it brings masked (vault_engine/redaction_input.py)."""
        from vault_engine.redaction_input import gate, new_hits

        before = base
        if before is None:
            try:
                before = self.abspath(rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                before = None
        hits = new_hits(text, before)
        if not hits:
            return text
        if rel.endswith(".md") and text.lstrip("\ufeff").startswith("---"):
            from .frontmatter import NoteText

            try:
                doc = NoteText.parse(text, path=rel)
            except Exception:  # not a note's frontmatter after all: masked as text
                return gate(text, before)
            head = len(doc.bom + doc.open_fence + doc.frontmatter.text() + doc.close_fence)
            if any(h.start < head for h in hits):  # a mark inside YAML is a value, quoted
                for key, value in list(doc.frontmatter.data.items()):
                    masked = _masked(value, before)
                    if masked != value:
                        doc.set(key, masked)
                doc.body = gate(doc.body, before)
                return doc.render()
        return gate(text, before)

    def _moved(self, rel: str, exists: bool, creating: bool = False) -> ConflictError:
        if creating:
            return ConflictError(f"{rel} already exists", path=rel,
                                 fix="choose another title or edit the existing note")
        if not exists:
            return ConflictError(f"{rel} was deleted on disk since alaya read it", path=rel,
                                 fix="run the command again")
        return ConflictError(f"{rel} was changed on disk since alaya read it", path=rel,
                             fix="run the command again; alaya will re-read the new text")

    def _guard(self, rel: str, text: str | None) -> None:
        """The namespace boundary at the gateway: an agent may replace, create or delete only
        notes of namespaces it may write (what is on disk and what is about to be)."""
        if self.caller.is_owner or not rel.endswith(".md"):
            return
        from .namespaces import refused

        texts = [text] if text is not None else []
        full = os.path.join(self.root, rel)
        if os.path.exists(full):
            try:
                with open(full, "rb") as fh:
                    texts.append(fh.read().decode("utf-8", errors="replace"))
            except OSError:
                pass
        for t in texts:
            ns = namespace_of_text(t, rel)
            if ns is None or not self.caller.may_write(ns):
                raise refused(self.caller)

    def update_note(self, rel: str, edit: Callable[[NoteText], None],
                    _before_write: Callable[[], None] | None = None) -> str:
        """Read a note, apply `edit` to its text, write it back — merging concurrent edits.

        If the file changes between the read and the replace (a human saved in Obsidian), it
        is re-read and `edit` applied again to the new text, so both changes survive — for as
        long as `[vault] lock_timeout_s` allows, then ConflictError. Returns the new checksum.
        """
        import time

        deadline = time.monotonic() + float(self.config.get("vault", "lock_timeout_s"))
        contended = False
        while True:
            with self.locked():
                from .frontmatter import NoteText

                text, check = self._read_settled(rel)
                doc = NoteText.parse(text, path=rel)
                edit(doc)
                if _before_write is not None:
                    _before_write()
                try:
                    # once contended, sync after the replace: a disk sync takes longer than
                    # a fast editor waits between saves (store/atomic.py)
                    return self.write_text(rel, doc.render(), check, sync_after=contended,
                                           base=text)
                except ConflictError:
                    if not os.path.exists(self.abspath(rel)) or time.monotonic() > deadline:
                        break
                    contended = True
                    continue
        raise ConflictError(f"{rel} keeps changing on disk while alaya writes it", path=rel,
                            fix="close the editor that is rewriting it and try again")

    def _read_settled(self, rel: str) -> tuple[str, str]:
        """`read_text` of a file an editor may be saving in place (store/atomic.py)."""
        data = read_settled(self.abspath(rel))
        return decode_note(data, rel), checksum(data)

    def delete(self, rel: str, expected: str | None) -> None:
        with self.locked():
            self._guard(rel, None)
            if expected is not None and self.current_checksum(rel) != expected:
                raise ConflictError(f"{rel} was changed on disk since alaya read it", path=rel,
                                    fix="run the command again")
            self.abspath(rel).unlink(missing_ok=True)

    def transaction(self, message: str, *, commit: bool = True,
                    redact: bool = True) -> Transaction:
        return Transaction(self, message, commit=commit and bool(self.config.get("git", "commit")),
                           redact=redact)


def _masked(value: Any, before: str | None) -> Any:
    """A frontmatter value with every secret new to it masked, its YAML types kept."""
    from vault_engine.redaction_input import gate

    if isinstance(value, str):
        return gate(value, before)
    if isinstance(value, dict):
        return type(value)((k, _masked(v, before)) for k, v in value.items())
    if isinstance(value, list):
        return type(value)(_masked(v, before) for v in value)
    return value


_PARSER_VERSION: str | None = None


def _parser_version() -> str:
    """The cache's key: its format plus a hash of the modules that turn text into notes, so
    a changed parser (an upgrade, a local edit) never serves notes parsed the old way."""
    global _PARSER_VERSION
    if _PARSER_VERSION is None:
        import hashlib

        from . import blocks, frontmatter, links, model, notes

        h = hashlib.sha256(str(PARSED_CACHE_VERSION).encode())
        for module in (notes, model, links, frontmatter, blocks):
            h.update(Path(str(module.__file__)).read_bytes())
        _PARSER_VERSION = h.hexdigest()[:16]
    return _PARSER_VERSION
