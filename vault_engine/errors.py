"""Typed errors raised by the engine.

Only `cli/` turns these into exit codes and messages; library callers catch them by type.
Every error carries enough to act on: the file (vault-relative), the line when known, and a
`fix` sentence telling the user what to do.
"""

from __future__ import annotations


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
