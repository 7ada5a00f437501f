"""Small helpers with no heavy imports (recall's import path uses them): the clock, dates and
checksums."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any, dataclass_transform


def to_datetime(value: Any) -> dt.datetime | None:
    """YAML date/datetime/ISO string → aware UTC datetime (None when absent or unparseable)."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value  # epoch ms or s
        return dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        try:
            parsed = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return None


def now() -> dt.datetime:
    """"Now" for every command, in UTC to the second: `ALAYA_NOW` (ISO-8601, e.g.
    `2027-03-01T00:00:00Z`) when it is set — for tests and what-if runs of the lifecycle —
    else the system clock. Git still stamps commits with the real time."""
    raw = os.environ.get("ALAYA_NOW", "").strip()
    if raw:
        when = to_datetime(raw)
        if when is None:
            from .errors import UsageError

            raise UsageError(f"ALAYA_NOW={raw!r} is not an ISO-8601 time",
                             fix="e.g. ALAYA_NOW=2027-03-01T00:00:00Z, or unset it")
        return when.astimezone(dt.UTC).replace(microsecond=0)
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def checksum(data: bytes) -> str:
    """SHA-256 of a file's bytes: the checksum guard and the manifest use it."""
    import hashlib  # not at import: recall's one-shot path never checksums

    return hashlib.sha256(data).hexdigest()


def fit_lines(lines: list[str], room: int) -> tuple[list[str], int, int]:
    """The lines, in order, that fit in `room` characters (a newline each); a line that does
    not fit is skipped, never cut. Returns (kept, characters used, lines left out)."""
    kept, used = [], 0
    for line in lines:
        if used + len(line) + 1 > room:
            continue
        kept.append(line)
        used += len(line) + 1
    return kept, used, len(lines) - len(kept)


@dataclass_transform()
def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """`@dataclasses.dataclass` (or `dataclass(frozen=True)`) for the classes on a one-shot
    recall's import path, without compiling code when the class is defined.

    A dataclass writes its __init__, __repr__ and __eq__ (frozen: also __setattr__,
    __delattr__ and __hash__) as source text and compiles it, in every process that imports
    it: 0.3–0.6 ms a class, and the nine on recall's path were ~3 % of a one-shot `alaya
    recall`'s instructions. A record is a dataclass whose methods are shared functions
    instead: `fields`, `replace`, `asdict` and pattern matching work; instances compare, hash,
    print, refuse assignment (frozen) and word their constructor errors as a dataclass's do.
    A constructor call costs a few microseconds more, so classes made by the thousand (Hit)
    stay dataclasses. No __post_init__, InitVar or field(init=False) (tests/test_oneshot.py
    holds it to what a dataclass does)."""

    def wrap(klass: Any) -> Any:
        return _make_record(klass, frozen)

    return wrap if cls is None else wrap(cls)


def _make_record(cls: Any, frozen: bool) -> Any:
    import dataclasses
    import reprlib

    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cls)
    if hasattr(cls, "__post_init__") or len(fields) != len(cls.__dataclass_fields__) or any(
            not f.init or f.kw_only is True for f in fields):
        raise TypeError(f"{cls.__qualname__}: a record has plain fields only (@dataclass)")
    names = tuple(f.name for f in fields)
    known = frozenset(names)
    defaults = tuple(f.default for f in fields)
    factories = tuple(f.default_factory for f in fields)
    compared = tuple(f.name for f in fields if f.compare)
    shown = tuple(f.name for f in fields if f.repr)
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    qualname = cls.__qualname__
    missing = dataclasses.MISSING
    assign = object.__setattr__ if frozen else setattr

    required = sum(1 for d, f in zip(defaults, factories, strict=True)
                   if d is missing and f is missing)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # checked in the order, and worded as, a generated __init__ would say it
        for key in kwargs:
            if key not in known:
                raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument "
                                f"{key!r}")
            if names.index(key) < len(args):
                raise TypeError(f"{qualname}.__init__() got multiple values for argument "
                                f"{key!r}")
        if len(args) > len(names):
            takes = f"from {required + 1} to {len(names) + 1}" if required < len(names) \
                else f"{len(names) + 1}"
            raise TypeError(f"{qualname}.__init__() takes {takes} positional arguments but "
                            f"{len(args) + 1} were given")
        absent = [name for i, name in enumerate(names[len(args):], len(args))
                  if name not in kwargs and defaults[i] is missing and factories[i] is missing]
        if absent:
            quoted = [repr(name) for name in absent]
            listed = quoted[0] if len(quoted) == 1 else (
                " and ".join(quoted) if len(quoted) == 2
                else ", ".join(quoted[:-1]) + ", and " + quoted[-1])
            raise TypeError(f"{qualname}.__init__() missing {len(absent)} required positional "
                            f"argument{'s' if len(absent) > 1 else ''}: {listed}")
        for i, name in enumerate(names):
            if i < len(args):
                value = args[i]
            elif name in kwargs:
                value = kwargs[name]
            elif defaults[i] is not missing:
                value = defaults[i]
            else:
                value = factories[i]()  # type: ignore[operator]
            assign(self, name, value)

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({inner})"

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple(getattr(self, n) for n in compared) == tuple(getattr(other, n)
                                                                  for n in compared)

    cls.__init__, cls.__repr__, cls.__eq__ = __init__, __repr__, __eq__
    _name_methods(qualname, __init__, __repr__, __eq__)
    if not frozen:
        cls.__hash__ = None  # as a dataclass with eq and without frozen: unhashable
        return cls

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in known:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in known:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, n) for n in hashed))

    cls.__setattr__, cls.__delattr__, cls.__hash__ = __setattr__, __delattr__, __hash__
    _name_methods(qualname, __setattr__, __delattr__, __hash__)
    return cls


def _name_methods(qualname: str, *methods: Any) -> None:
    for method in methods:
        method.__qualname__ = f"{qualname}.{method.__name__}"
