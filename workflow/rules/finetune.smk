# Finetuned summarisers (selfreflect.finetune): training data from the training questions'
# summaries (and scores), a LoRA adapter per subject and method, summaries with the adapter.
include: "finetune_common.smk"


rule finetune_data:
    input:
        questions=expand(rules.questions.output[0], dataset=RUN.training),
        evaluated=expand(rules.questions.output[0], dataset=RUN.evaluated),
        summaries=training_tables(paths.SUMMARIES),
        scores=training_tables(paths.SCORES),
    output:
        run_path(paths.FINETUNE_DATA),
    log:
        f"{RUN.logs}/finetune/{{subject}}/{{method}}-data.log",
    wildcard_constraints:
        method="sft|dpo",
    params:
        tables=input_flags("evaluated", "summaries", "scores"),
    shell:
        "selfreflect finetune-data --config {params.config:q} --method {wildcards.method:q}"
        " --questions {input.questions:q} {params.tables:q} --out {output:q} 2> {log:q}"


rule finetune_train:
    input:
        data=rules.finetune_data.output[0],
        models=RUN.models("{subject}"),
    output:
        adapter=directory(run_path(paths.ADAPTER)),
        training_log=directory(run_path(paths.TRAINING_LOG)),
    log:
        f"{RUN.logs}/finetune/{{subject}}/{{method}}-seed{{seed}}-train.log",
    wildcard_constraints:
        method="sft|dpo",
        seed=r"\d+",
    resources:
        **RUN.model_resources(lambda w: [w.subject]),
    shell:
        "selfreflect finetune-train --config {params.config:q} --subject {wildcards.subject:q}"
        " --method {wildcards.method:q} --seed {wildcards.seed:q} --data {input.data:q}"
        " --out {output.adapter:q} --log {output.training_log:q} 2> {log:q}"
