"""What the run cost: wall and CPU time and peak memory per rule (Snakemake's benchmark files),
and the tokens the judge computed per artifact kind."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd


def read_benchmarks(roots: Iterable[str | Path]) -> pd.DataFrame:
    """One row per job from the Snakemake benchmark files under ``roots`` (``<root>/<rule>/…``):
    its rule, wall and CPU seconds, and peak resident memory (MiB; NaN where too short to
    sample)."""
    rows = []
    for root in map(Path, roots):
        for path in sorted(root.rglob("*.tsv")):
            last = pd.read_csv(path, sep="\t").iloc[-1]  # the last of `repeat` runs
            numbers = pd.to_numeric(last[["s", "cpu_time", "max_rss"]], errors="coerce")
            rule = path.relative_to(root).parts[0].removesuffix(".tsv")
            rows.append([rule, *numbers])
    return pd.DataFrame(rows, columns=["rule", "wall_s", "cpu_s", "peak_rss_mib"])


def performance_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per rule: jobs, summed wall and CPU seconds, the largest peak memory; slowest first,
    then the total."""
    table = (
        jobs.groupby("rule", sort=False)
        .agg(
            jobs=("rule", "size"),
            wall_s=("wall_s", "sum"),
            cpu_s=("cpu_s", "sum"),
            peak_rss_mib=("peak_rss_mib", "max"),
        )
        .sort_values("wall_s", ascending=False)
        .reset_index()
    )
    total = {
        "rule": "total",
        "jobs": int(table["jobs"].sum()),
        "wall_s": table["wall_s"].sum(),
        "cpu_s": table["cpu_s"].sum(),
        "peak_rss_mib": table["peak_rss_mib"].max(),
    }
    table = pd.concat([table, pd.DataFrame([total])], ignore_index=True)
    return table.round({"wall_s": 2, "cpu_s": 2})  # sums of 2-decimal figures, float error off


def judge_tokens_table(metadata: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The forward tokens of each judge model per artifact kind, summed over the artifacts
    whose metadata (or shards') records them, then that judge's total (judges of different
    weights are not added up). A shard file left beside its merged artifact (DVC keeps them)
    counts there, not again."""
    totals: dict[tuple[str, str], int] = {}
    for meta in metadata:
        if meta.get("shard") is not None:  # a shard: counted in its merged artifact
            continue
        parts = meta.get("shards") or [meta]
        tokens = [part["judge_forward_tokens"] for part in parts if "judge_forward_tokens" in part]
        if tokens:
            key = (meta.get("judge", ""), meta["kind"])
            totals[key] = totals.get(key, 0) + sum(tokens)
    rows = []
    for judge in dict.fromkeys(judge for judge, _ in totals):
        kinds = [(kind, tokens) for (name, kind), tokens in totals.items() if name == judge]
        rows += [(judge, kind, tokens) for kind, tokens in kinds]
        rows.append((judge, "total", sum(tokens for _, tokens in kinds)))
    return pd.DataFrame(rows, columns=["judge", "kind", "judge_forward_tokens"])
