"""`alaya introspect`, one module per phase (consolidate, conflicts, cooldown, forget,
promote), `runner` (the order, the distill phase, `introspect()`) and `phase` (the context,
result and commit every phase shares). One git commit per phase that changed something."""
