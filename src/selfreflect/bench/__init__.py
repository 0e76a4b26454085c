"""Benchmarks: ``selfreflect bench …``.

One module per command. They measure the package (the scorer, batched generation, whole
Snakemake runs, the MC study's simulated power) and record what they measured as JSON (most
under docs/); :mod:`selfreflect.docs` renders the pages from it. Run them from the project's
root (the paths they read and write are relative to it). No workflow command imports this
package, so editing it reruns no job; heavy libraries (psutil, matplotlib, playwright, torch)
are imported inside the commands.
"""
