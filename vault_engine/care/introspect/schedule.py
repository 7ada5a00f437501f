"""When introspection is due (seed 000 §5.2: every 4 hours).

The last full run (every phase, not a dry run) is recorded in `.alaya/introspect.json` —
state, not knowledge: if it is lost, the next scheduled run simply happens at once. Due means
`[introspect] every_hours` have passed since then, by the one clock (`primitives.now`, so
`ALAYA_NOW` moves it too); `every_hours = 0` turns the schedule off.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from vault_engine.primitives import now as clock
from vault_engine.primitives import to_datetime
from vault_engine.store.frontmatter import format_datetime
from vault_engine.store.vault import Vault, atomic_write

STATE = "introspect.json"  # under .alaya/


@dataclass(frozen=True)
class Due:
    due: bool
    every_hours: float
    last_run: dt.datetime | None
    next_run: dt.datetime | None  # None: the schedule is off

    def as_dict(self) -> dict[str, Any]:
        return {"due": self.due, "every_hours": self.every_hours,
                "last_run": format_datetime(self.last_run) if self.last_run else None,
                "next_run": format_datetime(self.next_run) if self.next_run else None}


def last_run(vault: Vault) -> dt.datetime | None:
    try:
        data = json.loads((vault.state_dir / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return to_datetime(data.get("last_run")) if isinstance(data, dict) else None


def is_due(vault: Vault, now: dt.datetime | None = None) -> Due:
    every = float(vault.config.get("introspect", "every_hours"))
    last = last_run(vault)
    if every <= 0:
        return Due(False, every, last, None)
    now = now or clock()
    nxt = (last + dt.timedelta(hours=every)) if last else now
    return Due(now >= nxt, every, last, nxt)


def record_run(vault: Vault, when: dt.datetime, phases: list[str], commits: int) -> None:
    vault.state_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(vault.state_dir / STATE, json.dumps(
        {"last_run": format_datetime(when), "phases": phases, "commits": commits}).encode(),
        durable=False)
