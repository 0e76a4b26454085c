rule summaries:
    input:
        questions=rules.questions.output[0],
        models=lambda w: model_dirs(*summary_models(w)),
    output:
        run_path(paths.SUMMARIES),
    params:
        config=RESOLVED_CONFIG,
        subject=lambda w: config["models"][w.subject],
        summarizer=lambda w: config["models"][config["summarizer"] or w.subject],
        summaries=lambda w: strategy_settings(config["summaries"], w.strategy),
        seed=config["seed"],
    wildcard_constraints:
        strategy=r"[A-Za-z0-9_.-]+",
    resources:
        gpu=lambda w: gpus(*summary_models(w)),
    conda:
        ENV
    log:
        f"{LOGS}/summaries/{{dataset}}/{{subject}}/{{strategy}}.log",
    message:
        "Summarising {wildcards.subject} on {wildcards.dataset} with {wildcards.strategy}"
    shell:
        "selfreflect summarize --config {params.config} --subject {wildcards.subject}"
        " --strategy {wildcards.strategy} --questions {input.questions} --out {output} 2> {log}"
