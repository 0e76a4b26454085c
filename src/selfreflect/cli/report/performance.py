"""``selfreflect report performance``: where a run's time, memory and judge work went."""

from __future__ import annotations

from pathlib import Path

import click

from selfreflect.cli.options import CONFIG
from selfreflect.cli.report.common import (
    FIGURE_DIR,
    OUT_DIR,
    claims,
    figure_args,
    read_config,
    skipped,
)
from selfreflect.report import writers
from selfreflect.report.performance import judge_tokens_table, performance_table, read_benchmarks


@click.command("performance")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@click.option(
    "--benchmarks",
    "benchmark_dirs",
    multiple=True,
    required=True,
    type=click.Path(file_okay=False),
    help="A folder of Snakemake benchmark files, <rule>/<job>.tsv (repeat).",
)
@click.option(
    "--results",
    "results_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="The run's artifacts, whose metadata records the judge's forward tokens.",
)
@claims("performance", "judge_tokens", figures=("performance",))
def performance(
    config_path: str,
    out_dir: str,
    figure_dir: str,
    benchmark_dirs: tuple[str, ...],
    results_dir: str,
) -> None:
    """Wall time, CPU time and peak memory per rule from the jobs' benchmark files, and the
    judge's forward tokens per artifact kind."""
    from selfreflect.artifacts import read_metadata
    from selfreflect.report.figures import performance_figure

    config = read_config(config_path)
    jobs = read_benchmarks(Path(d) for d in benchmark_dirs if Path(d).is_dir())
    if jobs.empty:
        return skipped("performance", "no benchmark files", out_dir, figure_dir, config)
    table = performance_table(jobs)
    caption = (
        "Per rule: jobs, wall and CPU seconds summed over its jobs, and the largest peak "
        "resident memory of one job (MiB), from Snakemake's benchmark files."
    )
    writers.write_table_files(table, table, out_dir, "performance", caption)
    performance_figure(table, Path(figure_dir) / "performance", **figure_args(config))
    metadata = [read_metadata(path) for path in sorted(Path(results_dir).rglob("*.parquet"))]
    tokens = judge_tokens_table(metadata)
    caption = "Tokens the judge model computed (prefills and token trees), per artifact kind."
    writers.write_table_files(tokens, tokens, out_dir, "judge_tokens", caption)
    click.echo(f"performance of {len(jobs)} jobs written to {out_dir}")
