# Helpers of workflow/rules/report.smk (kept apart: a rule file holds only rules).
from selfreflect.report.catalog import REPORTS
from selfreflect.rule_inputs import REPORT_DIRS

SHORT_CAPTION = "../report/{}.rst"
SCORED = {**RUN.summary_experiments, "strategy": RUN.strategies}  # every scores file's wildcards


def report_files(name, category, figure=False):
    """CSV (shown in the report), Markdown and LaTeX of table ``name``, and PNG (shown) and
    PDF of its figure."""
    kinds = [(RUN.tables, paths.TABLE_FORMATS)]
    kinds += [(RUN.figures, paths.FIGURE_FORMATS)] if figure else []
    files = []
    for folder, formats in kinds:
        shown, *others = (f"{folder}/{name}.{ext}" for ext in formats)
        files += [report(shown, caption=SHORT_CAPTION.format(name), category=category), *others]
    return files


def table_rule(table):
    """The name of the rule making a catalog table (report_ and its command, with _)."""
    return f"report_{table.name.replace('-', '_')}"


def table_metrics(table):
    """A catalog table's DVC metrics files: one per strategy, one, or none."""
    if table.metrics is None:
        return []
    if table.metrics.per_strategy:
        return [RUN.report_metrics(f"{table.table}/{strategy}") for strategy in RUN.strategies]
    return RUN.report_metrics(table.table)


def table_outputs(table):
    """Param: the options of a catalog table's command naming its outputs' folders (tables,
    figure) and its metrics, from the rule's outputs."""

    def options(wildcards, output):
        folders = {key: folder(wildcards, output) for key, folder in REPORT_DIRS.items()}
        given = ["--out-dir", folders["tables"]]
        given += ["--figure-dir", folders["figures"]] if table.figure else []
        if table.metrics and table.metrics.per_strategy:
            given += ["--metrics-dir", folders["metrics"]]
        elif table.metrics:
            given += ["--metrics", output.metrics]
        return given

    return options


def report_targets():
    """Every table, figure and metrics file of the report."""
    final = [rules.report_main_table, rules.report_validation, rules.report_mc_study]
    final += [rules.report_convergence, rules.report_cost_table, rules.report_human_agreement]
    if config["report"]["agreement_backends"]:  # the judge on several backends: opt-in
        final.append(rules.report_backend_agreement)
    return [path for rule in final for path in rule.output]
