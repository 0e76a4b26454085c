# Helpers of the finetuning rules: the tables a method learns from.


def training_tables(template):
    """Input function: the training questions' summaries (or scores) a method learns from
    (GRPO learns from its own summaries: none)."""

    def tables(wildcards):
        if wildcards.method == "grpo" or (template == paths.SCORES and wildcards.method == "sft"):
            return []
        return expand(run_path(template), **RUN.training_wildcards(wildcards))

    return tables


def training_answers(wildcards):
    """Input function: the subject's answers to the training questions, which GRPO's rewards
    are measured against."""
    if wildcards.method != "grpo":
        return []
    return expand(run_path(paths.ANSWERS), dataset=RUN.training, subject=wildcards.subject)


def training_models(wildcards):
    """Input function: the models a training job loads that the workflow builds: the subject
    and, for GRPO, the reward judge."""
    return RUN.models(*training_model_names(wildcards))(wildcards)


def training_model_names(wildcards):
    """The models a training job loads: the subject and, for GRPO, the reward judge."""
    reward = [config["finetune"]["grpo"]["judge"]] if wildcards.method == "grpo" else []
    return [wildcards.subject, *reward]
