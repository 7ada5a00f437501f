"""Does git track a path? Answered from the repository's index file without running git —
standard library only, for the discovery check every `alaya recall --json` makes
(compilers/discovery.py) — and from git itself whenever the file is in a form this reading
cannot be sure of.

Why not git: `git ls-files` costs ~3 ms a recall, and Python's subprocess module as much
again to import. Why not a library (dulwich, pygit2, GitPython): none imports in less time
than the recall it would guard.

The index (gitformat-index(5)) lists its entries sorted by path. In versions 2 and 3 each
entry is a fixed header — stat data, the object id (20 bytes, or 32 in a SHA-256
repository), 16 bits of flags whose low 12 bits are the path's length, and in version 3 16
more bits when flag 0x4000 says so — then the whole path and 1 to 8 NULs that pad the entry
to a multiple of 8 bytes. A discovery file's path (`.alaya/serve.json`) sorts before almost
every note, so `_walk` reads entries from the start and stops at the first path past it,
reading the file only as far as it walks; when the path sorts late (a vault in a folder of a
bigger repository) and the walk grows long, `_search` finds the path bytes in the whole file
and checks the flags before them. Git is asked for version 4 (paths compressed), a split
index (entries in another file), a sparse-index folder entry covering the path, and
anything that does not parse as described.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # not typing's: the recall client imports this module
if TYPE_CHECKING:
    import mmap

_CHUNK = 64 * 1024
_WALK = 256  # entries read one by one before a search of the whole file takes over


class _Unsure(Exception):
    """The index is not in a form read here: ask git."""


def tracked(path: Path) -> bool:
    """Whether git tracks `path`, in the index of the repository holding it."""
    found = _git_dir(path.parent)
    if found is None:
        return False
    work, gitdir = found
    try:
        rel = path.relative_to(work).as_posix().encode("utf-8")
    except ValueError:
        return _ask_git(path)
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_INDEX_FILE"):
        return _ask_git(path)
    try:
        names = os.listdir(gitdir)
    except OSError:
        return _ask_git(path)
    if "index" not in names:
        return False  # a repository with no index yet tracks nothing
    if any(n.startswith("sharedindex.") for n in names):
        return _ask_git(path)  # a split index: most entries are in the shared file
    try:
        answer = in_index(gitdir / "index", rel)
    except (OSError, _Unsure):
        return _ask_git(path)
    if answer is False and _folds_case(path):
        return _ask_git(path)  # the index may spell it in another case
    return answer


def in_index(index: Path, rel: bytes) -> bool:
    """Whether the index file `index` has an entry for `rel`; _Unsure when it cannot tell."""
    with open(index, "rb") as f:
        reader = _Reader(f, (index.parent / "info" / "sparse-checkout").exists())
        head = reader.need(12)
        if head[:4] != b"DIRC":
            raise _Unsure
        version = int.from_bytes(head[4:8], "big")
        if version not in (2, 3):
            raise _Unsure
        count = int.from_bytes(head[8:12], "big")
        for oid in (20, 32):  # SHA-1, then SHA-256: the first entry says which it is
            try:
                return _walk(reader, count, oid, version, rel)
            except _WrongLayout:
                continue
        raise _Unsure


class _WrongLayout(Exception):
    pass


class _Reader:
    """The index file, read as far as it is needed."""

    def __init__(self, f: object, sparse: bool) -> None:
        self.f = f
        self.data = b""
        self.sparse = sparse  # sparse checkout is on: the index may have folder entries

    def need(self, end: int) -> bytes:
        while len(self.data) < end:
            more = self.f.read(max(_CHUNK, len(self.data)))  # type: ignore[attr-defined]
            if not more:
                raise _Unsure  # the file ends inside an entry
            self.data += more
        return self.data

    def whole(self) -> bytes | mmap.mmap:
        """The whole file, mapped rather than copied (an index can be megabytes)."""
        import mmap

        try:
            return mmap.mmap(self.f.fileno(), 0, access=mmap.ACCESS_READ)  # type: ignore[attr-defined]
        except (OSError, ValueError):
            return self.data + self.f.read()  # type: ignore[attr-defined]


def _walk(reader: _Reader, count: int, oid: int, version: int, rel: bytes) -> bool:
    fixed = 40 + oid + 2  # stat data, the object id, the flags
    pos = 12
    previous = b""
    for i in range(count):
        if i == _WALK:
            return _search(reader.whole(), version, rel, reader.sparse)
        data = reader.need(pos + fixed + 2)
        flags = int.from_bytes(data[pos + fixed - 2:pos + fixed], "big")
        name_at = pos + fixed
        if flags & 0x4000:
            if version < 3:
                raise _WrongLayout
            name_at += 2
        length = flags & 0xFFF
        data = reader.need(name_at + length + 8)
        if length == 0xFFF:  # 4095 bytes or more: up to its NUL
            try:
                length = data.index(b"\0", name_at + 0xFFF) - name_at
            except ValueError:
                raise _Unsure from None
        end = name_at + length
        size = ((end - pos) // 8 + 1) * 8  # the padding: 1 to 8 NULs
        if data[end:pos + size].strip(b"\0") or not length:
            raise _WrongLayout
        name = data[name_at:end]
        if name < previous:
            raise _WrongLayout  # entries are sorted: this is not how they are laid out
        previous = name
        if name == rel:
            return True
        if name.endswith(b"/") and rel.startswith(name):
            raise _Unsure  # a sparse index's folder entry holds the path
        if name > rel:
            return False  # sorted: it is not further on
        pos += size
    return False


def _search(data: bytes | mmap.mmap, version: int, rel: bytes, sparse: bool) -> bool:
    """The path anywhere in the whole index, with the flags before it saying its length."""
    if sparse and data.find(b"sdir\0\0\0\0") != -1:
        raise _Unsure  # a sparse index: a folder entry may hold the path
    want = min(len(rel), 0xFFF)
    needle = rel + b"\0"
    at = data.find(needle, 12)
    while at != -1:
        flags = int.from_bytes(data[at - 2:at], "big")
        if flags & 0xFFF == want and not flags & 0x4000:
            return True
        flags = int.from_bytes(data[at - 4:at - 2], "big")  # extended flags come between
        if version == 3 and flags & 0x4000 and flags & 0xFFF == want:
            return True
        at = data.find(needle, at + 1)
    return False


def _git_dir(start: Path) -> tuple[Path, Path] | None:
    """(work tree, git dir) of the repository holding `start`, as git finds it from there: the
    nearest `.git` folder, or `.git` file (a worktree, a submodule) upwards."""
    here = start
    while True:
        dot = here / ".git"
        if dot.is_dir():
            return here, dot
        if dot.is_file():
            try:
                line = dot.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return here, dot  # unreadable: git is asked
            if line.startswith("gitdir:"):
                target = Path(line[len("gitdir:"):].strip())
                return here, target if target.is_absolute() else here / target
            return here, dot
        if here.parent == here:
            return None
        here = here.parent


def _folds_case(path: Path) -> bool:
    """A case-insensitive file system (macOS, Windows): the index may spell the path in
    another case, which git then asks."""
    swapped = path.with_name(path.name.swapcase())
    return swapped != path and swapped.exists()


def _ask_git(path: Path) -> bool:
    import subprocess

    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", path.name], cwd=path.parent,
                             capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return True  # cannot tell: not believed
    if out.returncode != 0:
        return b"not a git repository" not in out.stderr.lower()
    return bool(out.stdout.strip(b"\0"))
