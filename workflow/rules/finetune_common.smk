# Helpers of the finetuning rules: the training dataset and the tables a method learns from.
from selfreflect.finetune import judge_name

TRAINING = config["finetune"]["dataset"]


def training_strategies(method):
    """The strategies whose training-question summaries a method learns from."""
    settings = config["finetune"]
    return [settings["teacher"]] if method == "sft" else settings["candidates"]


def training_tables(template):
    """Input function: the training questions' summaries (or scores) a method learns from."""

    def tables(wildcards):
        if template == paths.SCORES and wildcards.method == "sft":
            return []
        return expand(
            run_path(template),
            dataset=TRAINING,
            subject=wildcards.subject,
            judge=judge_name(config),
            strategy=training_strategies(wildcards.method),
        )

    return tables
