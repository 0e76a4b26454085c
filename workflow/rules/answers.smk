rule answers:
    input:
        questions=rules.questions.output[0],
        models=RUN.models("{subject}"),
        code=RUN.code("answers"),
    output:
        run_path(paths.ANSWERS_SHARD),
    log:
        RUN.log("answers/{dataset}/{subject}/{shard}"),
    benchmark:
        RUN.benchmark("answers/{dataset}/{subject}/{shard}")
    conda:
        RUN.env
    resources:
        **RUN.model_resources(lambda w: [w.subject]),
    params:
        **RUN.command_params("answers"),
        shards=config["shards"],
    shell:
        "selfreflect answers --gpus {resources.gpu:q}"
        " --config {params.config:q} --subject {wildcards.subject:q}"
        " --questions {input.questions:q} --shard {wildcards.shard:q}"
        " --shards {params.shards:q} --out {output:q} 2> {log:q}"


rule merge_answers:
    input:
        questions=rules.questions.output[0],
        parts=expand(rules.answers.output[0], shard=RUN.shards, allow_missing=True),
        code=RUN.code("merge"),
    output:
        run_path(paths.ANSWERS),
    log:
        RUN.log("merge_answers/{dataset}/{subject}"),
    benchmark:
        RUN.benchmark("merge_answers/{dataset}/{subject}")
    conda:
        RUN.env
    params:
        **RUN.command_params("merge"),
    shell:
        "selfreflect merge answers --questions {input.questions:q} --out {output:q} {input.parts:q}"
        " 2> {log:q}"
