# Helpers of workflow/rules/report.smk (kept apart: a rule file holds only rules).
from selfreflect.rule_inputs import REPORT_DIRS

SHORT_CAPTION = "../report/{}.rst"


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


def report_targets():
    """Every table, figure and metrics file of the report."""
    final = [rules.report_main_table, rules.report_validation, rules.report_mc_study]
    final += [rules.report_convergence, rules.report_cost_table, rules.report_human_agreement]
    if config["report"]["agreement_backends"]:  # the judge on several backends: opt-in
        final.append(rules.report_backend_agreement)
    return [path for rule in final for path in rule.output]
