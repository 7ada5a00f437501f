"""Introspection on a schedule inside the long-running processes (`alaya watch`, `alaya
serve`): their watcher loop calls an `IntrospectSchedule` between batches; when
`[introspect] every_hours` have passed since the last full run
(vault_engine/care/introspect/schedule.py) it runs every phase — one commit each, as the CLI
does — and the watcher compiles what it wrote like any other change.

With `[vault] review = true` the run proposes its changes for review, as `alaya introspect`
would. The first check is a minute after start; a run that fails is reported and not
retried for `retry_after` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from vault_engine.store.vault import Vault


class IntrospectSchedule:
    def __init__(self, vault: Vault, *, check_every: float = 60.0, first_check: float = 60.0,
                 retry_after: float = 3600.0,
                 on_run: Callable[[list[Any]], None] | None = None,
                 on_error: Callable[[BaseException], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.vault = vault
        self.check_every = check_every
        self.retry_after = retry_after
        self.on_run = on_run
        self.on_error = on_error
        self.clock = clock
        # not at start-up: the first compile comes first, and a restart loop never introspects
        self._next_check = clock() + first_check

    def __call__(self) -> bool:
        """Check (at most every `check_every` seconds) and run when due. True if it ran."""
        now = self.clock()
        if now < self._next_check:
            return False
        self._next_check = now + self.check_every
        from vault_engine.care.introspect.runner import introspect
        from vault_engine.care.introspect.schedule import is_due

        try:
            if not is_due(self.vault).due:
                return False
            target = self.vault
            if target.config.get("vault", "review"):
                from vault_engine.collab.review import proposal_vault

                target = proposal_vault(target)
            results = introspect(target)
        except Exception as exc:  # noqa: BLE001 - the watcher outlives a failed run
            self._next_check = now + self.retry_after
            if self.on_error:
                self.on_error(exc)
            return False
        if self.on_run:
            self.on_run(results)
        return True
