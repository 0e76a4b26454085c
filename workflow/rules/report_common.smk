# Helpers of workflow/rules/report.smk (kept apart: a rule file holds only rules).
import os

TABLES = paths.TABLES.format(run=RUN)
FIGURES = paths.FIGURES.format(run=RUN)
RESULTS = paths.RESULTS.format(run=RUN)
PERFORMANCE_LOG = f"{LOGS}/performance.log"
SHORT_CAPTION = "../report/{}.rst"


def report_files(name, category, figure=False):
    """CSV (shown in the report), Markdown and LaTeX of table ``name``, and PNG (shown) and
    PDF of its figure."""
    kinds = [(TABLES, paths.TABLE_FORMATS), *([(FIGURES, paths.FIGURE_FORMATS)] if figure else [])]
    files = []
    for folder, formats in kinds:
        shown, *others = (f"{folder}/{name}.{ext}" for ext in formats)
        files += [report(shown, caption=SHORT_CAPTION.format(name), category=category), *others]
    return files


def report_metrics(name):
    return paths.REPORT_METRICS.format(run=RUN, name=name)


def output_dir(suffix):
    """Param: the folder of a rule's first output ending in ``suffix`` (derived from the
    outputs, as --lint asks, not a path of its own)."""
    return lambda w, output: next((os.path.dirname(p) for p in output if p.endswith(suffix)), "")


# the table rules' folders: tables, figures and (the main table's, one per strategy) metrics
REPORT_DIRS = dict(
    tables=output_dir(".csv"), figures=output_dir(".png"), metrics=output_dir(".json")
)


def report_targets():
    """Every table, figure and metrics file of the report."""
    final = [rules.report_main_table, rules.report_validation, rules.report_mc_study]
    final += [rules.report_convergence, rules.report_cost_table, rules.report_human_agreement]
    if config["report"]["agreement_backends"]:  # the judge on several backends: opt-in
        final.append(rules.report_backend_agreement)
    return [path for rule in final for path in rule.output]
