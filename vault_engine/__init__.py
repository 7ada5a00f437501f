"""The domain engine of alaya, in rooms by capability (docs/architecture.md has the map).

    store/      the markdown truth: model, parse/render, links, the write gateway, git, merge
    text/       language: tokens for BM25, secret detection
    sessions/   ingest, capture, distill (sessions → cards)
    recall/     recall (query → retrieval → fusion → expansion → ranking → presentation),
                traverse, trace, context, saved queries
    care/       introspect (one module per phase), feedback, conflict detection, tiers,
                freshness, evaluate, status, doctor
    collab/     the review queue and sync
    providers/  embedding and LLM endpoints

The ground every room stands on sits here at the top: `artifacts` (the layout of `.alaya/`),
`config`, `errors`, `primitives` and `telemetry` (the recall/feedback event log). `store` and
`text` import only the ground; `providers` the ground; `sessions`, `recall` and `care` stand
on `store`, `text`, `providers` and the ground; `collab` on `store`. The seams between rooms
are listed in tests/test_architecture.py, which enforces all of this. `vault_engine` imports
none of `cli`, `compilers` or `lint`, and never click.
"""
