"""Introspect phase 4, cooldown: temperatures and tiers recomputed from recall telemetry (seed 000
§3.3, the function the compiler uses); the moves between tiers go in the report."""

from __future__ import annotations

import datetime as dt
from typing import Any

from vault_engine.care.tiers import TierInput, assign_tiers, tier_input
from vault_engine.primitives import to_datetime
from vault_engine.store.model import Card
from vault_engine.store.vault import Vault, VaultIndex

from .phase import Context, PhaseResult, commit_phase


def tier_inputs(index: VaultIndex, now: dt.datetime,
                manifest: dict[str, Any] | None = None) -> list[TierInput]:
    """The inputs compile uses (care.tiers.tier_input), so introspect and compile agree:
    `first_seen` comes from the current build's manifest."""
    seen = {path: to_datetime(v.get("first_seen"))
            for path, v in ((manifest or {}).get("notes") or {}).items()}
    out = []
    for n in index.notes:  # every note, as compile counts them (templates and archive too)
        created = n.created if isinstance(n, Card) else getattr(n, "started", None)
        out.append(tier_input(n.id or f"path:{n.path}", created, seen.get(n.path), now,
                              pinned=isinstance(n, Card) and bool(n.pinned),
                              volatile=n.meta.get("volatile") is True,
                              namespace=n.namespace))
    return out


def current_manifest(vault: Vault) -> dict[str, Any] | None:
    from vault_engine import artifacts as A

    build = A.current_build(vault.state_dir)
    if build is None:
        return None
    try:
        return build.manifest()
    except (OSError, ValueError):
        return None


def _previous_tiers(manifest: dict[str, Any] | None) -> dict[str, str]:
    return {v["key"]: v.get("tier", "") for v in ((manifest or {}).get("notes") or {}).values()}


def phase_cooldown(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    r = PhaseResult("cooldown")
    index = ctx.index()
    manifest = current_manifest(ctx.vault)
    tiers = assign_tiers(tier_inputs(index, ctx.now, manifest), ctx.stats, ctx.now,
                         ctx.vault.config.section("tiers"))
    before = _previous_tiers(manifest)
    order = {"COLD": 0, "WARM": 1, "HOT": 2}
    up = sorted(k for k, t in tiers.items() if k in before and before[k] in order
                and order[t.tier] > order[before[k]])
    down = sorted(k for k, t in tiers.items() if k in before and before[k] in order
                  and order[t.tier] < order[before[k]])
    counts = {t: sum(1 for x in tiers.values() if x.tier == t) for t in ("HOT", "WARM", "COLD")}
    r.numbers.update(hot=counts["HOT"], warm=counts["WARM"], cold=counts["COLD"],
                     upgraded=len(up), downgraded=len(down),
                     hot_limit=ctx.vault.config.get("tiers", "hot_limit"))
    hist = [0] * 5
    for t in tiers.values():
        hist[max(0, min(4, int(t.temperature * 5)))] += 1
    r.lines = ["Temperature histogram: " + ", ".join(
        f"{i / 5:.1f}–{(i + 1) / 5:.1f}: {c}" for i, c in enumerate(hist))]
    r.lines += [f"- ↑ {index.link(k)} {before[k]} → {tiers[k].tier}" for k in up[:50]]
    r.lines += [f"- ↓ {index.link(k)} {before[k]} → {tiers[k].tier}" for k in down[:50]]
    r.lines.append("")
    r.lines.append("Tiers are derived data: `alaya compile` applies them to the indexes.")
    ctx.tiers = tiers  # forget reads them
    commit_phase(ctx, r, results, None,
                  f"HOT {counts['HOT']}, WARM {counts['WARM']}, COLD {counts['COLD']}")
    return r
