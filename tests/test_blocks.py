"""Managed blocks: only the inside changes; broken markers are errors with a line."""

from __future__ import annotations

import pytest

from vault_engine.errors import ManagedBlockError
from vault_engine.store.blocks import outside_blocks, read_block, replace_block

TEXT = "# M\n\nhuman above\n<!-- alaya:memory:start -->\nold\n<!-- alaya:memory:end -->\nhuman below\n"


def test_replace_changes_only_the_inside() -> None:
    new = replace_block(TEXT, "memory", "- [[A]] 0.91\n- [[B]] 0.80")
    assert read_block(new, "memory") == "- [[A]] 0.91\n- [[B]] 0.80\n"
    assert outside_blocks(new) == outside_blocks(TEXT)
    assert new.startswith("# M\n\nhuman above\n") and new.endswith("human below\n")


def test_missing_block_is_appended_or_refused() -> None:
    assert read_block(replace_block("x\n", "persona", "p"), "persona") == "p\n"
    with pytest.raises(ManagedBlockError):
        replace_block("x\n", "persona", "p", create=False)


def test_broken_markers_name_the_line() -> None:
    doubled = TEXT + "<!-- alaya:memory:start -->\n"
    with pytest.raises(ManagedBlockError) as info:
        replace_block(doubled, "memory", "x", path="MEMORY.md")
    assert info.value.path == "MEMORY.md" and info.value.line == 8  # the second start
    reversed_text = "<!-- alaya:memory:end -->\n<!-- alaya:memory:start -->\n"
    with pytest.raises(ManagedBlockError, match="ends before it starts"):
        read_block(reversed_text, "memory")
