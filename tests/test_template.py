"""The template: alaya.toml documents every default; Obsidian settings are valid JSON."""

from __future__ import annotations

import json

from vault_engine.config import DEFAULTS, parse_config
from vault_engine.store.init_vault import template_dir, template_files


def test_template_config_lists_every_default_with_its_value() -> None:
    text = (template_dir() / "alaya.toml").read_text(encoding="utf-8")
    config = parse_config(text)
    assert config.unknown == ()
    assert {s: dict(v) for s, v in config.values.items()} == DEFAULTS


def test_obsidian_settings_are_valid_json_and_colour_card_types() -> None:
    files = dict(template_files())
    for rel, src in files.items():
        if rel.startswith(".obsidian/"):
            json.loads(src.read_text(encoding="utf-8"))
    graph = json.loads(files[".obsidian/graph.json"].read_text(encoding="utf-8"))
    queries = {g["query"] for g in graph["colorGroups"]}
    assert {"path:cards/gotcha", "path:cards/pattern", "path:cards/decision"} <= queries
    app = json.loads(files[".obsidian/app.json"].read_text(encoding="utf-8"))
    assert app["useMarkdownLinks"] is False


def test_template_has_memory_and_persona_blocks_and_gitignore() -> None:
    files = dict(template_files())
    assert "<!-- alaya:memory:start -->" in files["MEMORY.md"].read_text("utf-8")
    assert "<!-- alaya:persona:start -->" in files["persona.md"].read_text("utf-8")
    assert ".alaya/" in files[".gitignore"].read_text("utf-8").splitlines()


def test_bad_config_value_is_a_clear_error() -> None:
    import pytest

    from vault_engine.errors import ConfigError

    with pytest.raises(ConfigError, match=r"\[tiers\] hot_limit"):
        parse_config("[tiers]\nhot_limit = 'many'\n")
    with pytest.raises(ConfigError) as info:
        parse_config("[vault\n")
    assert info.value.line == 1
