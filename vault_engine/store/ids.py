"""Note ids and file names.

Ids are stable and unique: written once into frontmatter (`id: card-7f3a2c1d`) and never
changed, whatever happens to the title or file name. File names are the title made safe for
every filesystem and for Obsidian (which resolves `[[links]]` by file name), so a link written
as `[[Title]]` opens the note in Obsidian too.
"""

from __future__ import annotations

import re
import secrets
import unicodedata
from collections.abc import Container

from vault_engine.errors import InvalidIdError

ID_PREFIX = {"card": "card", "entity": "ent", "scene": "scene", "query": "query", "note": "note"}
_ID_RE = re.compile(r"^[\w][\w.-]{0,127}$", re.UNICODE)
# Characters Obsidian refuses in file names, plus path separators and control characters.
_FILENAME_BAD_RE = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f\x7f]+')
MAX_FILENAME_BYTES = 180


def validate_id(value: object, *, path: str | None = None, line: int | None = None) -> str:
    """Return `value` as an id or raise `InvalidIdError` (no `/`, `\\`, `..`, spaces). A
    whole number is an id too (`id: 20230101` in a person's note reads as one)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = str(value)
    if not isinstance(value, str) or not _ID_RE.match(value) or ".." in value:
        raise InvalidIdError(
            f"invalid id {value!r}: ids are letters, digits, '-', '_' and '.', without '/', "
            "'..' or spaces", path=path, line=line,
            fix="use an id like card-7f3a2c1d (or remove the id line and let alaya assign one)")
    return value


def is_valid_id(value: object) -> bool:
    try:
        validate_id(value)
    except InvalidIdError:
        return False
    return True


def new_id(kind: str, taken: Container[str] = ()) -> str:
    """A fresh random id such as `card-7f3a2c1d`, not in `taken`."""
    prefix = ID_PREFIX.get(kind, kind)
    while True:
        candidate = f"{prefix}-{secrets.token_hex(4)}"
        if candidate not in taken:
            return candidate


def safe_filename(title: str, fallback: str = "untitled") -> str:
    """A file name (without `.md`) from a title: readable, CJK kept, nothing unsafe.

    `Gateway restart: notify Telegram first` → `Gateway restart - notify Telegram first`.
    Leading dots are removed (no hidden files), length is capped in UTF-8 bytes. A secret in
    the title never becomes a file name (docs/security.md §2).
    """
    from vault_engine.redaction import redact_name

    name = unicodedata.normalize("NFC", redact_name(title))
    name = _FILENAME_BAD_RE.sub(" - ", name)
    name = re.sub(r"\s+", " ", name).strip(" .-")
    name = re.sub(r"(?: - )+", " - ", name)
    if not name:
        name = fallback
    encoded = name.encode("utf-8")
    if len(encoded) > MAX_FILENAME_BYTES:
        name = encoded[:MAX_FILENAME_BYTES].decode("utf-8", "ignore").rstrip(" .-")
    return name


def slug(text: str) -> str:
    """A lowercase ASCII-ish slug for folder names (`Pattern Library` → `pattern-library`)."""
    from vault_engine.redaction import redact_name

    text = unicodedata.normalize("NFKC", redact_name(text)).strip().lower()
    text = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE).strip("-")
    return text or "misc"
