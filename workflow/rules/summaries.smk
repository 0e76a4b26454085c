rule summaries:
    input:
        questions=rules.questions.output[0],
        models=lambda w: models(*summary_models(w))(w),
        code=code("summarize", strategy=True),
    output:
        run_path(paths.SUMMARIES),
    log:
        f"{LOGS}/summaries/{{dataset}}/{{subject}}/{{strategy}}.log",
    benchmark:
        bench("summaries", "{dataset}/{subject}/{strategy}")
    conda:
        ENV
    resources:
        **model_resources(summary_models),
    params:
        code=code_hash("summarize", strategy=True),
        config=RESOLVED_CONFIG,
        settings=settings("seed", summary_settings),
        prompts=prompts("summarize", lambda w: strategy_prompts(w.strategy)),
    message:
        "Summarising {wildcards.subject} on {wildcards.dataset} with {wildcards.strategy}"
    shell:
        "selfreflect summarize --config {params.config:q} --subject {wildcards.subject:q}"
        " --strategy {wildcards.strategy:q} --questions {input.questions:q} --out {output:q}"
        " 2> {log:q}"
