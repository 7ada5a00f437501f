"""What `alaya doctor` reports: a check with its fix, and a repair `--fix` made."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    message: str
    fix: str = ""
    severity: str = "error"  # error | warning
    items: tuple[str, ...] = field(default_factory=tuple)


@dataclass
class Repair:
    name: str
    message: str
