rule summarize:
    input:
        questions=rules.questions.output[0],
        adapter=finetuned_adapter,
        models=lambda w: RUN.models(*RUN.summary_models(w))(w),
    output:
        run_path(paths.SUMMARIES),
    log:
        f"{RUN.logs}/summaries/{{dataset}}/{{subject}}/{{strategy}}.log",
    resources:
        **RUN.model_resources(RUN.summary_models),
    params:
        adapter=input_flags("adapter"),
    shell:
        "selfreflect summarize --config {params.config:q} --subject {wildcards.subject:q}"
        " --strategy {wildcards.strategy:q} --questions {input.questions:q} {params.adapter:q}"
        " --out {output:q} 2> {log:q}"
