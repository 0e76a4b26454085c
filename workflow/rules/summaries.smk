rule summarize:
    input:
        questions=rules.questions.output[0],
        adapter=finetuned_adapter,
        models=lambda w: models(*summary_models(w))(w),
    output:
        run_path(paths.SUMMARIES),
    log:
        f"{LOGS}/summaries/{{dataset}}/{{subject}}/{{strategy}}.log",
    resources:
        **model_resources(summary_models),
    params:
        adapter=lambda w, input: [f"--adapter={path}" for path in input.adapter],
    shell:
        "selfreflect summarize --config {RESOLVED_CONFIG:q} --subject {wildcards.subject:q}"
        " --strategy {wildcards.strategy:q} --questions {input.questions:q} {params.adapter:q}"
        " --out {output:q} 2> {log:q}"
