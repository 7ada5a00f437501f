"""collab — people and machines working on one vault: the review queue (`review`: agents'
writes on a proposal branch until a person approves them) and `sync` (fetch, merge through
the note merge driver, push against any git remote).

May import: store and the ground.
"""
