"""``config/README.md``: every config key of the schema with its type, default and description."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import yaml

from selfreflect.config import SCHEMA_PATH

HEADER = """# Configuration

<!-- Generated from workflow/schemas/config.schema.yaml by `selfreflect config-docs`. -->

{description}

Every key of a config, checked against the schema before anything runs; unset keys take their
defaults. `<name>` stands for a name you choose (a model's, a dataset's).

| key | type | default | description |
| --- | --- | --- | --- |
"""


def keys(node: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, dict[str, Any], bool]]:
    """Every key of a schema object, depth first: (dotted key, its schema, whether required)."""
    for name, child in node.get("properties", {}).items():
        key = f"{prefix}{name}"
        yield key, child, name in node.get("required", [])
        yield from keys(child, f"{key}.")
        if isinstance(child.get("additionalProperties"), dict):
            yield from keys(child["additionalProperties"], f"{key}.<name>.")


def type_of(schema: dict[str, Any]) -> str:
    """A key's type in words: its JSON types, enum values or alternatives."""
    if "enum" in schema:
        return " \\| ".join(json.dumps(value) for value in schema["enum"])
    if "anyOf" in schema and "type" not in schema:
        return " \\| ".join(type_of(option) for option in schema["anyOf"])
    kinds = schema.get("type", "any")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if "array" in kinds and "items" in schema:
        kinds = [f"array of {type_of(schema['items'])}" if k == "array" else k for k in kinds]
    return " \\| ".join(kinds)


def _cell(text: str) -> str:
    """One table cell: one line, pipes and angle brackets escaped."""
    text = " ".join(text.split()).replace("|", "\\|")
    return text.replace("<", "&lt;").replace(">", "&gt;")


def config_readme() -> str:
    """The Markdown text of ``config/README.md``."""
    schema = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    rows = []
    for key, node, required in keys(schema):
        default = f"`{json.dumps(node['default'])}`" if "default" in node else "–"
        default = "required" if required else default
        description = _cell(node.get("description", ""))
        rows.append(f"| `{key}` | {type_of(node)} | {default} | {description} |")
    return HEADER.format(description=_cell(schema["description"])) + "\n".join(rows) + "\n"
