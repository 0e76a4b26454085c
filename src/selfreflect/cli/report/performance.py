"""``selfreflect report performance``: where a run's time, memory and judge work went."""

from __future__ import annotations

from pathlib import Path

import click

from selfreflect.cli.options import CONFIG, FIGURE_DIR, OUT_DIR, folder_option


@click.command("performance")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@folder_option(
    "--benchmarks",
    "A folder of Snakemake benchmark files, <rule>/<job>.tsv (repeat).",
    multiple=True,
)
@folder_option(
    "--results", "The run's artifacts, whose metadata records the judge's forward tokens."
)
def performance(
    config_path: str,
    out_dir: str,
    figure_dir: str,
    benchmarks_dirs: tuple[str, ...],
    results_dir: str,
) -> None:
    """Wall time, CPU time and peak memory per rule from the jobs' benchmark files, and the
    judge's forward tokens per artifact kind."""
    from selfreflect.artifacts import read_metadata
    from selfreflect.config import load_config
    from selfreflect.report import runner, writers
    from selfreflect.report.figures import performance_figure
    from selfreflect.report.performance import (
        judge_tokens_table,
        performance_table,
        read_benchmarks,
    )

    files = runner.table_files(out_dir, "performance", "judge_tokens")
    with runner.claimed([*files, *runner.figure_files(figure_dir, "performance")]):
        config = load_config(config_path)
        figure = {"stem": Path(figure_dir) / "performance", **runner.figure_args(config)}
        jobs = read_benchmarks(Path(d) for d in benchmarks_dirs if Path(d).is_dir())
        if jobs.empty:
            runner.skipped("performance", "no benchmark files", out_dir, figure)
            click.echo("performance: skipped (no benchmark files)", err=True)
            return
        table = performance_table(jobs)
        caption = runner.caption("performance")
        writers.write_table_files(table, table, out_dir, "performance", caption)
        performance_figure(table, **figure)
        metadata = [read_metadata(path) for path in sorted(Path(results_dir).rglob("*.parquet"))]
        tokens = judge_tokens_table(metadata)
        caption = runner.caption("judge_tokens")
        writers.write_table_files(tokens, tokens, out_dir, "judge_tokens", caption)
    click.echo(f"performance of {len(jobs)} jobs written to {out_dir}")
