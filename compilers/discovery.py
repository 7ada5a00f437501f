"""Discovery files — `.alaya/serve.json` (where `alaya serve` listens) — and when a client
may believe one. Standard library only, and cheap: `alaya recall --json` (cli/fast.py) reads
it before every recall that a resident server could answer.

A vault is synced with other machines and other people, imported from folders, and shared
with other users of a machine, so a file in `.alaya/` may have come from anywhere: a remote's
commit, a copied folder, another local user, or a server that died (and whose port someone
else now holds). A client that believed such a file would send its query — and the token,
and whatever secret the query holds — to an address someone else chose. So a client believes
a discovery file only when alaya wrote it on this machine, for this user (`trusted`):

1. `.alaya` is a real folder (not a symlink) owned by the user, and the file is a regular
   file (not a symlink: opened with O_NOFOLLOW), owned by the user, readable by no one else
   (mode 0600) — what `write_private` makes, and not what a checkout or a copy makes;
2. git does not track it (a commit did not put it there, whatever its mode: with umask 077 a
   checkout is 0600 too) — read from the index without running git (compilers/git_index.py);
3. it names a live process owned by the user and a loopback URL (`http://127.0.0.1:PORT`,
   `[::1]`, `localhost`) — a query never leaves the machine on a file's say-so;
4. the server at that URL proves it holds the file's `secret` before any query is sent: the
   client sends a random nonce, the server answers `proof(secret, nonce, url, vault)`, a
   keyed BLAKE2b of them all (the secret exists only in the 0600 file and the server's memory; a
   server has one even without `--token`). A stale file whose port another program took
   fails here, and so does a server that answers anything.

Otherwise the client answers in-process and says why, in one line on stderr.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from .git_index import tracked

TYPE_CHECKING = False  # not typing's: importing typing costs the recall client ~3 ms
if TYPE_CHECKING:
    from typing import Any

try:  # the BLAKE2 module alone: `hashlib` would load OpenSSL first (~3–4 ms per recall)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without the builtin module
    from hashlib import blake2b

SERVE_FILE = "serve.json"
PROOF_PATH = "/challenge"  # GET /challenge?nonce=HEX → {"proof": HEX}
_PERSON = b"alaya-serve-v1"  # BLAKE2b's personalisation: this proof and nothing else


def write_private(path: Path, data: bytes) -> None:
    """Replace `path` atomically with a file only its owner may read, from the first byte on
    (it holds a token and the server's secret)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask or a file left at the temp name
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def proof(secret: str, nonce: str, url: str, vault: str) -> str:
    """What a server holding `secret` answers to `nonce`, bound to the URL it is reached at
    and to the vault it serves (its real path): a proof relayed from a server at another
    address does not verify, nor does the answer of a live server for another vault whose
    discovery file was copied here."""
    mac = blake2b(f"{url}\n{vault}\n{nonce}".encode(), key=bytes.fromhex(secret),
                  digest_size=32, person=_PERSON)
    return mac.hexdigest()


def loopback_hostport(url: str) -> tuple[str, int] | None:
    """(host, port) of `http://HOST:PORT` when HOST is a loopback address written out —
    127.0.0.0/8, [::1] — or `localhost`; None for anything else (a name, another address, a
    path, credentials)."""
    if not isinstance(url, str) or not url.startswith("http://"):
        return None
    rest = url[len("http://"):]
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    if host == "[::1]":
        return "::1", int(port)
    if host == "localhost":
        return host, int(port)
    parts = host.split(".")
    if len(parts) == 4 and parts[0] == "127" and all(
            p.isdigit() and len(p) <= 3 and int(p) < 256 for p in parts):
        return host, int(port)
    return None


def _process_owner(pid: int) -> int | None:
    """The uid of a live process; None when none runs with that pid. Without /proc, a process
    this user may signal counts as its own."""
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return None
    except OSError:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return -1
    return os.geteuid()


def trusted(state_dir: Path, name: str = SERVE_FILE) -> tuple[dict[str, Any] | None, str]:
    """(the file's content, "") when alaya wrote `state_dir/name` on this machine for this
    user; (None, why not) otherwise — (None, "") when there is no file at all."""
    path = state_dir / name
    if os.name != "posix":  # no owners, modes or O_NOFOLLOW to check
        return None, "discovery files are believed on POSIX systems only" if path.exists() \
            else ""
    uid = os.geteuid()
    try:
        folder = os.lstat(state_dir)
    except OSError:
        return None, ""
    if stat.S_ISLNK(folder.st_mode):
        return None, f"{state_dir.name} is a symlink"
    if folder.st_uid != uid:
        return None, f"{state_dir.name}/ belongs to uid {folder.st_uid}, not you (uid {uid})"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return None, "it is a symlink" if os.path.islink(path) else f"unreadable ({exc.strerror})"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "it is not a regular file"
        if st.st_uid != uid:
            return None, f"it belongs to uid {st.st_uid}, not you (uid {uid})"
        if st.st_mode & 0o077:
            return None, (f"its mode is {stat.S_IMODE(st.st_mode):04o}; a server writes it "
                          "0600")
        raw = os.read(fd, 64 * 1024)
    finally:
        os.close(fd)
    try:
        info = json.loads(raw)
        pid, url, secret = info["pid"], info["url"], info["secret"]
        if not (isinstance(pid, int) and pid > 0 and isinstance(secret, str)
                and 16 <= len(bytes.fromhex(secret)) <= 64):  # a BLAKE2b key
            raise ValueError
    except (ValueError, KeyError, TypeError):
        return None, ("it names no pid, URL and secret (an older alaya serve's? restart "
                      "`alaya serve`)")
    owner = _process_owner(pid)
    if owner is None:
        return None, f"it names pid {pid}, which is not running (`alaya doctor --fix` removes it)"
    if owner != uid:
        return None, f"pid {pid} is not yours"
    if loopback_hostport(url) is None:
        return None, f"its URL {str(url)[:80]!r} is not a loopback address"
    if tracked(path):
        return None, "git tracks it: a commit put it there, not a server on this machine"
    return info, ""
