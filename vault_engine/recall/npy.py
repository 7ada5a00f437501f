"""The .npy arrays of a build, opened without np.load's overhead.

A one-shot recall opens about thirty of them. np.load spends ~0.1 ms on each — the header
parsed with `ast.literal_eval`, a `np.memmap` built — and every element read from a memmap
costs a Python call of its own. Here the header numpy wrote is read directly and the array
is a plain read-only view of an `mmap` (or read into RAM); anything unusual (an object or
structured dtype, Fortran order, a truncated file) goes to np.load, which reads it or says
what is wrong.
"""

from __future__ import annotations

import mmap as _mmap
from typing import Any

_MAGIC = b"\x93NUMPY"


def load_npy(path: Any, *, mmap: bool = True) -> Any:
    """The array in a .npy file: memory-mapped read-only (`mmap`), or read into RAM."""
    import numpy as np

    with open(path, "rb") as fh:
        head = fh.read(4096)
        parsed = _header(head)
        if parsed is not None:
            dtype, shape, offset = parsed
            count = 1
            for n in shape:
                count *= n
            size = fh.seek(0, 2)
            if offset + count * dtype.itemsize <= size:
                if not mmap:
                    fh.seek(offset)
                    return np.fromfile(fh, dtype=dtype, count=count).reshape(shape)
                if count == 0:
                    return np.empty(shape, dtype=dtype)
                buf = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ)
                return np.frombuffer(buf, dtype=dtype, count=count, offset=offset).reshape(shape)
    try:
        # never allow_pickle: an array of Python objects (a pickle inside) is refused unread
        return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except ValueError as exc:
        from vault_engine.errors import UnreadableArtifactError

        raise UnreadableArtifactError(f"{path} is not an array alaya wrote ({exc}); it was not "
                                      "loaded", path=str(path),
                                      fix="run `alaya compile --full`") from None


def _header(head: bytes) -> tuple[Any, tuple[int, ...], int] | None:
    """(dtype, shape, data offset) of a .npy header as np.save writes it; None otherwise."""
    import numpy as np

    if not head.startswith(_MAGIC) or len(head) < 10:
        return None
    major = head[6]
    if major == 1:
        start, length = 10, int.from_bytes(head[8:10], "little")
    elif major in (2, 3):
        start, length = 12, int.from_bytes(head[8:12], "little")
    else:
        return None
    if start + length > len(head):
        return None
    text = head[start:start + length].decode("latin-1")
    descr = _value(text, "'descr': '", "'")
    order = _value(text, "'fortran_order': ", ",")
    shape_text = _value(text, "'shape': (", ")")
    if descr is None or order != "False" or shape_text is None:
        return None
    if len(descr) < 2 or descr[0] not in "<>|=" or not descr[1:].isalnum():
        return None  # structured, object or otherwise unusual: np.load
    try:
        shape = tuple(int(n) for n in shape_text.split(",") if n.strip())
        dtype = np.dtype(descr)
    except (TypeError, ValueError):
        return None
    if dtype.hasobject or any(n < 0 for n in shape):
        return None
    return dtype, shape, start + length


def _value(text: str, key: str, end: str) -> str | None:
    i = text.find(key)
    if i < 0:
        return None
    i += len(key)
    j = text.find(end, i)
    return text[i:j].strip() if j >= 0 else None
