"""care — the vault looks after itself: `introspect/` (one module per phase: consolidate,
conflicts, cooldown, forget, promote; `runner` runs them, `phase` is what they share),
`feedback` (useful / not-useful / correct / deprecate), `detection` (offline claim-conflict
and near-duplicate candidates, shared with lint), `tiers` (temperature → HOT/WARM/COLD,
shared with compile), `freshness` (do the artifacts match the vault), `evaluate`
(`alaya eval`), `status` (counts, schema, export) and `doctor` (health checks with fixes).

May import: store, text, providers and the ground. Two seams, listed in
tests/test_architecture.py: introspect's first phase runs `sessions.distill`, and `evaluate`
runs `recall.pipeline` and `recall.query` over its dataset.
"""
