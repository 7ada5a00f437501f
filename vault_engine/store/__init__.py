"""store — the markdown truth, and the only way to change it.

Owns: the note model (`model`), text → note parsing (`notes`) with lossless frontmatter
(`frontmatter`) and managed blocks (`blocks`), Obsidian links and their resolution (`links`),
ids and file names (`ids`), relation types and their families (`relations`), the vault with
its write gateway and transactions (`vault`), git (`history`), the three-way note merge git
runs as a driver (`merge`), JSON views of notes (`serialize`), creating and linking cards
(`cards`), archiving and restoring (`archive`), `alaya init` (`init_vault`) and `alaya import`
(`importer`).

May import: the ground (vault_engine.config, errors, primitives) — no other room, because
every other room reads and writes through this one.
"""
