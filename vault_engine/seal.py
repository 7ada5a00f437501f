"""Seals: alaya unpickles only what this machine pickled (docs/security.md, "Artifacts alaya
loads"; design principle 12).

A pickle runs code when it is loaded, and `.alaya/` is only git-ignored, not refused: a file a
remote commit adds there, an imported folder, another user of a shared disk can put one where
alaya looks. So every pickle alaya writes is sealed with an HMAC-SHA256 under a key that never
leaves this machine, and every pickle it loads is checked first; one that fails is never
unpickled — it is treated as absent (a cache is rebuilt; the build's graph is reported with
the fix `alaya compile`).

The key: 32 random bytes as 64 hex digits in `machine.key` of the config folder
(`ALAYA_CONFIG_DIR`, else `$XDG_CONFIG_HOME/alaya`, else `~/.config/alaya`), mode 0600 in a
0700 folder. The first process that needs it writes it whole to a private temp file and
hard-links that into place, so concurrent processes agree: a loser of the race reads the
winner's key. A key is refused — alaya then loads no pickle at all and says so once — when it
is not a regular file owned by this user, when group or others may read or write it, when its
folder is not this user's or others may write there (they could swap the key), when it lies
inside the vault (a key in the vault travels with it), or when it is not 64 hex digits. Where
no key can be made (a read-only home) alaya works the same way: nothing is unpickled, caches
are rebuilt in memory.

Formats. A cache carries its seal inline: `MAGIC`, the 32-byte MAC, the pickle. The build's
`graph.pickle` stays a plain networkx pickle anyone can `pickle.load`; its MAC (hex) is in the
build's manifest, `seals`, written before the build is published. The MAC covers a purpose
("graph", "records", "notes") and the bytes, so one artifact's seal never vouches for another.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import pickle
import secrets
import stat
from pathlib import Path
from typing import Any

from .errors import SealError, notice

KEY_FILE = "machine.key"
MAGIC = b"ALAYA-SEALED-1\n"
_DOMAIN = b"alaya-seal-1\x00"
_MAC_BYTES = 32
_KEYS: dict[tuple[Any, ...], bytes] = {}  # (path, file and folder identity) → key


class _Refused(Exception):
    """The key file exists but must not be used: `why`, and what to do about it."""

    def __init__(self, why: str, fix: str) -> None:
        super().__init__(why)
        self.why, self.fix = why, fix


def config_dir() -> Path:
    """alaya's per-user config folder: $ALAYA_CONFIG_DIR, else $XDG_CONFIG_HOME/alaya, else
    ~/.config/alaya."""
    env = os.environ.get("ALAYA_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec: a relative value is ignored
        return Path(xdg) / "alaya"
    return Path.home() / ".config" / "alaya"


def key_path() -> Path:
    return config_dir() / KEY_FILE


def machine_key(vault_root: Path | None = None, *, create: bool = True) -> bytes | None:
    """This machine's key, made on first use; None when there is none alaya may use (said
    once, as a notice). `vault_root`: a key inside this vault is refused."""
    key, problem = _key(vault_root, create)
    if problem is not None:
        notice(f"{problem[0]}: alaya loads no pickle and rebuilds its caches in memory "
               f"(fix: {problem[1]})")
    return key


def key_problem(vault_root: Path | None = None) -> tuple[str, str] | None:
    """Why there is no usable key — (what is wrong, what to do) — or None (`alaya doctor`)."""
    return _key(vault_root, True)[1]


def _key(vault_root: Path | None, create: bool) -> tuple[bytes | None, tuple[str, str] | None]:
    path = key_path()
    try:
        if vault_root is not None and _inside(path, vault_root):
            raise _Refused("it lies inside the vault, which is shared with whoever syncs it",
                           "set ALAYA_CONFIG_DIR to a folder of yours outside the vault")
        return _read_key(path, create), None
    except _Refused as refused:
        return None, (f"{path}: not used as this machine's key ({refused.why})", refused.fix)
    except OSError as exc:
        return None, (f"{path}: no machine key can be made here ({exc.strerror or exc})",
                      "make that folder writable or set ALAYA_CONFIG_DIR to a writable "
                      "folder of yours")


def _inside(path: Path, vault_root: Path) -> bool:
    root = Path(os.path.realpath(vault_root))
    where = Path(os.path.realpath(path))
    return where == root or root in where.parents


def _identity(path: Path) -> tuple[Any, ...] | None:
    try:
        f = os.stat(path, follow_symlinks=False)
        d = os.stat(path.parent)
    except OSError:
        return None
    return (str(path), f.st_dev, f.st_ino, f.st_mtime_ns, f.st_mode, f.st_uid,
            d.st_ino, d.st_mode, d.st_uid)


def _read_key(path: Path, create: bool) -> bytes | None:
    ident = _identity(path)
    if ident is not None and ident in _KEYS:
        return _KEYS[ident]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        if not create:
            return None
        _create_key(path)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        if os.path.islink(path):
            raise _Refused("it is a symlink", f"replace it with a file of yours: rm {path}"
                           " (alaya makes a new one)") from None
        raise
    try:
        _check(path, os.fstat(fd), os.stat(path.parent))
        text = os.read(fd, 4096).decode("ascii", errors="replace").strip()
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise _Refused("it does not hold 64 hex digits", f"rm {path} (alaya makes a new one)")
    ident = _identity(path)
    if ident is not None:
        _KEYS[ident] = key
    return key


def _check(path: Path, st: os.stat_result, folder: os.stat_result) -> None:
    uid = os.geteuid()
    if not stat.S_ISREG(st.st_mode):
        raise _Refused("it is not a regular file", f"rm -r {path} (alaya makes a new one)")
    if st.st_uid != uid:
        raise _Refused(f"it belongs to uid {st.st_uid}, not to you (uid {uid})",
                       f"rm {path} (alaya makes a new one)")
    if st.st_mode & 0o077:
        raise _Refused(f"group or others may read or write it (mode {st.st_mode & 0o777:o})",
                       f"rm {path}: a key others could read may be known; alaya makes a new "
                       "one and rebuilds its caches")
    if folder.st_uid != uid or folder.st_mode & 0o022:
        raise _Refused(f"its folder is {'not yours' if folder.st_uid != uid else 'writable by others'}"
                       " (they could replace the key)",
                       f"chmod 700 {path.parent}, or set ALAYA_CONFIG_DIR to a folder of yours")


def _create_key(path: Path) -> None:
    """Write a new key whole, then publish it with a hard link (fails if another process got
    there first: then its key is the one)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.parent / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            os.write(fd, secrets.token_hex(32).encode("ascii") + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


# -- sealing ------------------------------------------------------------------------------
def _mac(key: bytes, purpose: str, data: bytes | memoryview) -> bytes:
    h = hmac.new(key, _DOMAIN + purpose.encode("ascii") + b"\x00", hashlib.sha256)
    h.update(data)
    return h.digest()


def sign(vault_root: Path, purpose: str, data: bytes) -> str | None:
    """The hex MAC of `data` for `purpose`; None when there is no key."""
    key = machine_key(vault_root)
    return _mac(key, purpose, data).hex() if key is not None else None


def verify(vault_root: Path, purpose: str, data: bytes | memoryview, mac_hex: object) -> bool:
    """Does `mac_hex` seal `data` for `purpose` under this machine's key?"""
    key = machine_key(vault_root)
    if key is None or not isinstance(mac_hex, str) or len(mac_hex) != 2 * _MAC_BYTES:
        return False
    try:
        given = bytes.fromhex(mac_hex)
    except ValueError:
        return False
    return hmac.compare_digest(_mac(key, purpose, data), given)


def dumps(vault_root: Path, purpose: str, obj: object, protocol: int = 5) -> bytes | None:
    """`obj` pickled and sealed inline (a cache file's bytes); None when there is no key —
    then nothing should be written: an unsealed pickle would never be loaded."""
    key = machine_key(vault_root)
    if key is None:
        return None
    payload = pickle.dumps(obj, protocol=protocol)
    return b"".join((MAGIC, _mac(key, purpose, payload), payload))


def load(path: Path, vault_root: Path, purpose: str) -> Any | None:
    """The object in a sealed cache file, or None — absent, unreadable, sealed by another key,
    cut short, not sealed at all, or failing to unpickle: in every case nothing of it ran."""
    key = machine_key(vault_root)
    if key is None:
        return None
    try:
        with open(path, "rb") as fh:
            blob = fh.read()
    except OSError:
        return None
    head = len(MAGIC) + _MAC_BYTES
    if len(blob) <= head or not blob.startswith(MAGIC):
        return None
    view = memoryview(blob)
    if not hmac.compare_digest(_mac(key, purpose, view[head:]), bytes(view[len(MAGIC):head])):
        return None
    try:
        return pickle.loads(view[head:])
    except Exception:  # noqa: BLE001 - our own bytes, from an older alaya: rebuild
        return None


def load_signed(path: Path, vault_root: Path, purpose: str, mac_hex: object) -> Any:
    """The object pickled in `path`, whose MAC `mac_hex` was written beside it (the build's
    manifest). Raises SealError — before unpickling anything — when there is no key or the
    MAC does not match."""
    if machine_key(vault_root) is None:
        raise SealError(f"{path.name} is not loaded: this machine has no usable key to check "
                        "it with", path=str(path), no_key=True,
                        fix=f"make {config_dir()} writable (or set ALAYA_CONFIG_DIR), then run "
                            "`alaya compile`")
    data = path.read_bytes()
    if not verify(vault_root, purpose, data, mac_hex):
        raise SealError(f"{path.name} is not sealed by this machine's key and was not loaded "
                        "(it was not written by alaya here: copied, synced or planted)",
                        path=str(path), fix="run `alaya compile` to rebuild it")
    return pickle.loads(data)
