# Finetuned summarisers (selfreflect.finetune): training data from the training questions'
# summaries (and scores), a LoRA adapter per subject and method, summaries with the adapter.
include: "finetune_common.smk"


rule finetune_data:
    input:
        questions=expand(rules.questions.output[0], dataset=RUN.training),
        evaluated=expand(rules.questions.output[0], dataset=RUN.evaluated),
        summaries=training_tables(paths.SUMMARIES),
        scores=training_tables(paths.SCORES),
        answers=training_answers,
        code=RUN.code("finetune-data"),
    output:
        run_path(paths.FINETUNE_DATA),
    log:
        RUN.log("finetune_data/{subject}/{method}"),
    benchmark:
        RUN.benchmark("finetune_data/{subject}/{method}")
    wildcard_constraints:
        method="sft|dpo|grpo",
    conda:
        RUN.env
    params:
        **RUN.command_params("finetune-data"),
        tables=input_flags("evaluated", "summaries", "scores", "answers"),
    shell:
        "selfreflect finetune-data --config {params.config:q} --method {wildcards.method:q}"
        " --questions {input.questions:q} {params.tables:q} --out {output:q} 2> {log:q}"


rule finetune_train:
    input:
        data=rules.finetune_data.output[0],
        models=training_models,
        code=RUN.code("finetune-train"),
    output:
        adapter=directory(run_path(paths.ADAPTER)),
        training_log=directory(run_path(paths.TRAINING_LOG)),
    log:
        RUN.log("finetune_train/{subject}/{method}/{seed}"),
    benchmark:
        RUN.benchmark("finetune_train/{subject}/{method}/{seed}")
    wildcard_constraints:
        method="sft|dpo|grpo",
        seed=r"\d+",
    conda:
        RUN.env
    resources:
        **RUN.model_resources(training_model_names),
    params:
        **RUN.command_params("finetune-train"),
    shell:
        "selfreflect finetune-train --gpus {resources.gpu:q}"
        " --config {params.config:q} --subject {wildcards.subject:q}"
        " --method {wildcards.method:q} --seed {wildcards.seed:q} --data {input.data:q}"
        " --out {output.adapter:q} --log {output.training_log:q} 2> {log:q}"
