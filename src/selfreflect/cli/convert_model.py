"""``selfreflect convert-model``: a GGUF model of the config, dequantised."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, OUT, reads


@reads(
    "models.{model}.gguf", "models.{model}.package", "models.{model}.sha256", "models.{model}.dtype"
)
@click.command("convert-model")
@CONFIG
@click.option("--model", required=True, help="Name of a `gguf` model in the config.")
@OUT
def convert_model(config_path: str, model: str, out: str) -> None:
    """Dequantise a GGUF model (a file, or a file inside an installed package) to safetensors."""
    from selfreflect.config import load_config, model_spec
    from selfreflect.errors import ConfigError
    from selfreflect.model_sources import convert_gguf

    spec = model_spec(load_config(config_path), model, source=config_path)
    if not spec["gguf"]:
        raise ConfigError(f"{config_path}: models.{model}.gguf: not set (nothing to convert)")
    convert_gguf(spec, out)
    click.echo(f"{model} converted to {out}")
