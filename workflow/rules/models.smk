rule tiny_model:
    input:
        code=RUN.code("tiny-model"),
    output:
        directory(paths.TINY_MODEL),
    log:
        RUN.model_log("tiny_model"),
    benchmark:
        RUN.model_benchmark("tiny_model")
    conda:
        RUN.env
    params:
        **RUN.model_params("tiny-model"),
    shell:
        "selfreflect tiny-model --out {output:q} 2> {log:q}"


rule convert_model:
    input:
        code=RUN.code("convert-model"),
    output:
        directory(paths.CONVERTED_MODEL),
    log:
        RUN.model_log("convert_model/{model}"),
    benchmark:
        RUN.model_benchmark("convert_model/{model}")
    wildcard_constraints:
        model=RUN.converted,
    conda:
        RUN.env
    resources:
        # the run's config, which the job reads its model's entry from: not a param, whose
        # change would rebuild the model every run shares for each other run
        run_config=RESOLVED_CONFIG,
    params:
        **RUN.model_params("convert-model"),
    shell:
        "selfreflect convert-model --config {resources.run_config:q} --model {wildcards.model:q}"
        " --out {output:q} 2> {log:q}"
