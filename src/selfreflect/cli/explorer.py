"""``selfreflect explorer``: the run's explorer page."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, OUT, reads


@reads("summaries.cluster")
@click.command()
@CONFIG
@OUT
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def explorer(config_path: str, out: str, files: tuple[str, ...]) -> None:
    """Write the run's explorer page from its answers, summaries, scores and controlled-pair
    FILES (told apart by the kind each file records)."""
    from selfreflect.config import load_config
    from selfreflect.explorer import explorer_data, read_files, render
    from selfreflect.fileio import check_writable, write_text

    config = load_config(config_path)
    check_writable(out)
    data = explorer_data(read_files(files), config["run"], config["summaries"]["cluster"])
    write_text(out, render(data))
    click.echo(f"explorer of {len(data['rows'])} questions written to {out}")
