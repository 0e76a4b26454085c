rule summarize:
    input:
        questions=rules.questions.output[0],
        adapter=finetuned_adapter,
        models=lambda w: RUN.models(*RUN.summary_models(w))(w),
        code=RUN.code("summarize"),
    output:
        run_path(paths.SUMMARIES),
    log:
        RUN.log("summarize/{dataset}/{subject}/{strategy}"),
    benchmark:
        RUN.benchmark("summarize/{dataset}/{subject}/{strategy}")
    conda:
        RUN.env
    resources:
        **RUN.model_resources(RUN.summary_models),
    params:
        **RUN.command_params("summarize"),
        adapter=input_flags("adapter"),
    shell:
        "selfreflect summarize --gpus {resources.gpu:q}"
        " --config {params.config:q} --subject {wildcards.subject:q}"
        " --strategy {wildcards.strategy:q} --questions {input.questions:q} {params.adapter:q}"
        " --out {output:q} 2> {log:q}"
