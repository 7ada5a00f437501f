"""Typed errors raised by the engine.

Only `cli/` turns these into exit codes and messages; library callers catch them by type.
Every error carries enough to act on: the file (vault-relative), the line when known, and a
`fix` sentence telling the user what to do.
"""

from __future__ import annotations

import errno
import os


class AlayaError(Exception):
    """Base class. `exit_code` is what the CLI should return for it."""

    exit_code = 1

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.fix = fix

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = self.path + (f":{self.line}" if self.line else "") + ": "
        text = where + self.message
        if self.fix:
            text += f" (fix: {self.fix})"
        return text

    def to_dict(self) -> dict[str, object]:
        return {"error": type(self).__name__, "message": self.message, "path": self.path,
                "line": self.line, "fix": self.fix}


# What a command tells the person once, beside its answer (cli/main.py prints them on stderr
# at the end of the command): the machine key cannot be used, telemetry was not recorded …
NOTICES: list[str] = []


def notice(text: str) -> None:
    """Say `text` once in this process (the same text twice is said once)."""
    if text not in NOTICES:
        NOTICES.append(text)


class UsageError(AlayaError):
    """The caller asked for something malformed (bad flag combination, bad JSON input)."""

    exit_code = 2


class NoteParseError(AlayaError):
    """A note could not be parsed (malformed YAML, bad encoding, binary, too large)."""


class UnsafePathError(AlayaError):
    """An id, link or path would point outside the vault."""


class InvalidIdError(AlayaError):
    """An id that cannot be used as a stable note identifier."""


class NotFoundError(AlayaError):
    """No note matches the id, title or alias."""


class AmbiguousError(AlayaError):
    """More than one note matches the reference."""


class NamespaceError(AlayaError):
    """The caller (an agent) may not read or change a note of another agent's namespace."""


class InjectionError(AlayaError):
    """An agent's text reads as a prompt injection and would be written where every agent
    reads it (`shared`): refused (docs/security.md §3)."""


class ConflictError(AlayaError):
    """The file changed on disk since it was read and the change cannot be merged."""


class VaultNotFoundError(AlayaError):
    """The vault directory does not exist or is not an alaya vault."""


class ConfigError(AlayaError):
    """alaya.toml is unreadable or holds an invalid value."""


class ManagedBlockError(AlayaError):
    """Markers of a managed block are missing, duplicated or out of order."""


class GitError(AlayaError):
    """A git operation failed."""


class LockTimeoutError(AlayaError):
    """Another writer holds the vault lock for too long."""


class NotCompiledError(AlayaError):
    """There are no artifacts to recall from (never compiled, or from an older format)."""


class UnreadableArtifactError(NotCompiledError, ValueError):
    """An artifact file that is not what alaya writes (cut short, or an array of Python
    objects, which is never loaded). A ValueError too, as numpy's own error was."""


class SealError(AlayaError):
    """A pickled artifact is not sealed by this machine's key (docs/security.md, "Artifacts
    alaya loads"): it was never loaded. `no_key`: there is no usable key at all."""

    def __init__(self, message: str, *, path: str | None = None, fix: str | None = None,
                 no_key: bool = False) -> None:
        super().__init__(message, path=path, fix=fix)
        self.no_key = no_key


class WriteRefusedError(AlayaError):
    """The machine refused a write: no space left, a quota, a read-only file system, no
    permission. `path` is the absolute path of the write; nothing was half-written."""

    exit_code = 3


# errno → (what happened, what to do); `{folder}` is the folder of the refused write
_REFUSALS: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("no space left on the device",
                   "free space on that disk (df -h {folder}), then run the command again"),
    errno.EDQUOT: ("the disk quota is exceeded",
                   "free space or raise your quota (quota -s), then run the command again"),
    errno.EROFS: ("the file system is read-only",
                  "remount it read-write (or work on a writable copy of the vault), then run "
                  "the command again"),
    errno.EACCES: ("permission denied",
                   "give your user write permission there (ls -ld {folder}; chown or chmod "
                   "u+w), then run the command again"),
    errno.EPERM: ("the operation is not permitted",
                  "give your user write permission there (ls -ld {folder}; chown or chmod "
                  "u+w), then run the command again"),
}
# what SQLite, git and faiss say for the same refusals (their messages carry no errno);
# None: the words do not say which — the disk is asked (`disk_refusal`)
_SAYINGS: tuple[tuple[str, int | None], ...] = (
    ("database or disk is full", errno.ENOSPC), ("no space left on device", errno.ENOSPC),
    ("out of diskspace", errno.ENOSPC), ("disk i/o error", errno.ENOSPC),
    ("disk quota exceeded", errno.EDQUOT), ("read-only file system", errno.EROFS),
    # a remote's "Permission denied (publickey)" is not this disk's: asked, not assumed
    ("permission denied", None), ("operation not permitted", None),
    ("attempt to write a readonly database", None), ("unable to open database file", None),
    ("unable to create temporary file", None), ("couldn't write", None),
    ("unable to write", None), ("write error", None),
)


def disk_refusal(path: str | os.PathLike[str]) -> int | None:
    """Why the disk holding `path` would refuse a write now: EROFS (mounted read-only),
    ENOSPC (under 64 KiB or no inode left), EACCES (this user may not write there); None
    when it would not."""
    where = os.path.abspath(os.fspath(path))
    while not os.path.exists(where) and os.path.dirname(where) != where:
        where = os.path.dirname(where)
    try:
        st = os.statvfs(where)
    except OSError:
        return None
    if st.f_flag & os.ST_RDONLY:
        return errno.EROFS
    if st.f_bavail * st.f_frsize < 64 << 10 or (st.f_files and not st.f_favail):
        return errno.ENOSPC
    folder = where if os.path.isdir(where) else os.path.dirname(where)
    if not os.access(folder, os.W_OK) or (where != folder and not os.access(where, os.W_OK)):
        return errno.EACCES
    return None


def refusal(code: int, path: str | os.PathLike[str], what: str | None = None,
            op: str = "a write") -> WriteRefusedError:
    """The typed error for a write to `path` refused with errno `code` (`op`: "access" where
    it is not known to be a write)."""
    full = os.path.abspath(os.fspath(path))
    folder = full if os.path.isdir(full) else os.path.dirname(full)
    said, fix = _REFUSALS.get(code, _REFUSALS[errno.ENOSPC])
    if code not in (errno.EACCES, errno.EPERM):
        op = "a write"  # no space, a quota, read-only: only ever a write
    elif op != "a write":
        fix = fix.replace("write permission", "permission").replace("u+w", "u+rwX")
    return WriteRefusedError(f"the machine refused {op}: {what or said}", path=full,
                             fix=fix.format(folder=folder))


def refused_write(exc: BaseException, path: str | os.PathLike[str] | None = None,
                  op: str = "a write") -> WriteRefusedError | None:
    """`exc` as a WriteRefusedError when it is the machine refusing a write (an OSError with
    ENOSPC, EDQUOT, EROFS, EACCES or EPERM; SQLite's or git's words for the same); None for
    anything else. `path`: where the write went, when the error does not say."""
    if isinstance(exc, WriteRefusedError):
        return exc
    if isinstance(exc, OSError) and exc.errno in _REFUSALS:
        where = path if path is not None else (exc.filename or os.getcwd())
        return refusal(exc.errno, where, op=op)
    text = (str(getattr(exc, "stderr", "") or "") + " " + str(exc)).lower()
    kind = type(exc).__name__
    if isinstance(exc, OSError) or kind in ("OperationalError", "DatabaseError", "GitError",
                                             "GitCommandError", "SyncError", "ReviewError",
                                             "RuntimeError"):  # + faiss
        where = path if path is not None else os.getcwd()
        for saying, said in _SAYINGS:
            if saying in text:
                code = said if said is not None else disk_refusal(where)
                if code is None and saying == "attempt to write a readonly database":
                    code = errno.EACCES  # SQLite's word for a file it may not write
                if code is None:
                    return None
                # SQLite says "disk I/O error" when a write finds the disk full
                what = "a disk I/O error (the disk may be full)" if saying == "disk i/o error" \
                    else None
                return refusal(code, where, what, op)
    return None
