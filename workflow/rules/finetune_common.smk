# Helpers of the finetuning rules: the tables a method learns from.


def training_tables(template):
    """Input function: the training questions' summaries (or scores) a method learns from."""

    def tables(wildcards):
        if template == paths.SCORES and wildcards.method == "sft":
            return []
        return expand(run_path(template), **RUN.training_wildcards(wildcards))

    return tables
