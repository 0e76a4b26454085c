# Helpers of workflow/rules/report.smk (kept apart: a rule file holds only rules).
import os

TABLES = paths.TABLES.format(run=RUN)
FIGURES = paths.FIGURES.format(run=RUN)
RESULTS = paths.RESULTS.format(run=RUN)
BENCHMARKS = paths.BENCHMARKS.format(run=RUN)
PERFORMANCE_LOG = f"{LOGS}/performance.log"
STRATEGIES = config["summaries"]["strategies"]
EXPERIMENTS = dict(dataset=EVALUATED, subject=config["subjects"], judge=config["judges"])
SUMMARY_EXPERIMENTS = {**EXPERIMENTS, "dataset": SUMMARIZED}
SHORT_CAPTION = "../report/{}.rst"
STATS_SETTINGS = ["report.bootstrap_resamples", "report.confidence"]
FIGURE_SETTINGS = ["report.figure_width", "report.figure_dpi"]


def table_files(name, category):
    """CSV (shown in the report), Markdown and LaTeX of table ``name``."""
    shown, *others = (f"{TABLES}/{name}.{ext}" for ext in paths.TABLE_FORMATS)
    return [report(shown, caption=SHORT_CAPTION.format(name), category=category), *others]


def figure_files(name, category):
    """PNG (shown in the report) and PDF of figure ``name``."""
    shown, *others = (f"{FIGURES}/{name}.{ext}" for ext in paths.FIGURE_FORMATS)
    return [report(shown, caption=SHORT_CAPTION.format(name), category=category), *others]


def report_metrics(name):
    return paths.REPORT_METRICS.format(run=RUN, name=name)


def report_targets():
    """Every table, figure and metrics file of the report."""
    final = [rules.main_table, rules.validation, rules.mc_study, rules.convergence]
    final += [rules.cost_table, rules.human_agreement]
    if config["report"]["agreement_backends"]:  # the judge on several backends: opt-in
        final.append(rules.backend_agreement)
    return [path for rule in final for path in rule.output]
