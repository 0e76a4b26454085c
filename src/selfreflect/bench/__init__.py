"""Benchmarks and doc renderers: ``selfreflect bench …`` (:mod:`selfreflect.cli.bench`).

One module per command. They measure the package (the scorer, batched generation, whole
Snakemake runs) and render the docs' measured figures from what the benchmarks recorded; run
them from the project's root (the paths they read and write are relative to it). No workflow
command imports this package, so editing it reruns no job; heavy libraries (psutil,
matplotlib, playwright, torch) are imported inside the commands.
"""
