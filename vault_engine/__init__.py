"""The domain: note model, parse/render round-trip, links, the vault write gateway, git, config.

`vault_engine` imports none of `cli`, `compilers` or `lint` (tests/test_architecture.py).
"""
