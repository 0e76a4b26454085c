# Finetuned summarisers (selfreflect.finetune): training data from the training questions'
# summaries (and scores), a LoRA adapter per subject and method, summaries with the adapter.
include: "finetune_common.smk"


rule finetune_data:
    input:
        questions=expand(rules.questions.output[0], dataset=TRAINING),
        evaluated=expand(rules.questions.output[0], dataset=EVALUATED),
        summaries=training_tables(paths.SUMMARIES),
        scores=training_tables(paths.SCORES),
        code=code("finetune-data"),
    output:
        run_path(paths.FINETUNE_DATA),
    log:
        f"{LOGS}/finetune/{{subject}}/{{method}}-data.log",
    benchmark:
        bench("finetune_data", "{subject}/{method}")
    wildcard_constraints:
        method="sft|dpo",
    conda:
        ENV
    params:
        code=code_hash("finetune-data"),
        config=RESOLVED_CONFIG,
        settings=settings(lambda w: [("finetune", key) for key in DATA_KEYS[w.method]]),
        tables=lambda w, input: [
            f"--{name}={path}"
            for name in ("evaluated", "summaries", "scores")
            for path in input[name]
        ],
    message:
        "Building the {wildcards.method} training data of {wildcards.subject}"
    shell:
        "selfreflect finetune-data --config {params.config:q} --method {wildcards.method:q}"
        " --questions {input.questions:q} {params.tables:q} --out {output:q} 2> {log:q}"


rule finetune_train:
    input:
        data=rules.finetune_data.output[0],
        models=models("{subject}"),
        code=code("finetune-train"),
    output:
        adapter=directory(run_path(paths.ADAPTER)),
        training_log=directory(run_path(paths.TRAINING_LOG)),
    log:
        f"{LOGS}/finetune/{{subject}}/{{method}}-train.log",
    benchmark:
        bench("finetune_train", "{subject}/{method}")
    wildcard_constraints:
        method="sft|dpo",
    conda:
        ENV
    resources:
        **model_resources(lambda w: [w.subject]),
    params:
        code=code_hash("finetune-train"),
        config=RESOLVED_CONFIG,
        settings=settings("models.{subject}", "finetune.training"),
        prompts=prompts("finetune-train", lambda w: strategy_prompts(STRATEGY[w.method])),
    message:
        "Training the {wildcards.method} LoRA adapter of {wildcards.subject}"
    shell:
        "selfreflect finetune-train --config {params.config:q} --subject {wildcards.subject:q}"
        " --method {wildcards.method:q} --data {input.data:q} --out {output.adapter:q}"
        " --log {output.training_log:q} 2> {log:q}"


rule finetuned_summaries:
    input:
        questions=rules.questions.output[0],
        adapter=lambda w: expand(
            rules.finetune_train.output.adapter, subject=w.subject, method=FINETUNED[w.strategy]
        ),
        models=lambda w: models(*summary_models(w))(w),
        code=code("summarize"),
    output:
        run_path(paths.SUMMARIES),
    log:
        f"{LOGS}/summaries/{{dataset}}/{{subject}}/{{strategy}}.log",
    benchmark:
        bench("finetuned_summaries", "{dataset}/{subject}/{strategy}")
    wildcard_constraints:
        strategy="|".join(FINETUNED),
    conda:
        ENV
    resources:
        **model_resources(summary_models),
    params:
        code=code_hash("summarize"),
        config=RESOLVED_CONFIG,
        settings=settings("seed", summary_settings),
        prompts=prompts("summarize", lambda w: strategy_prompts(w.strategy)),
    message:
        "Summarising {wildcards.subject} on {wildcards.dataset} with {wildcards.strategy}"
    shell:
        "selfreflect summarize --config {params.config:q} --subject {wildcards.subject:q}"
        " --strategy {wildcards.strategy:q} --questions {input.questions:q}"
        " --adapter {input.adapter:q} --out {output:q} 2> {log:q}"


ruleorder: finetuned_summaries > summaries
