rule summaries:
    input:
        questions=rules.questions.output[0],
        model=rules.tiny_model.output[0],
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
        **model_resources(summary_models),
    conda:
        ENV
    log:
        f"{LOGS}/summaries/{{dataset}}/{{subject}}/{{strategy}}.log",
    message:
        "Summarising {wildcards.subject} on {wildcards.dataset} with {wildcards.strategy}"
    shell:
        "selfreflect summarize --config {params.config} --subject {wildcards.subject}"
        " --strategy {wildcards.strategy} --questions {input.questions} --out {output} 2> {log}"
