rule answers_shard:
    input:
        questions=rules.questions.output[0],
        models=models("{subject}"),
        code=code("answers"),
    output:
        run_path(paths.ANSWERS_SHARD),
    log:
        f"{LOGS}/answers/{{dataset}}/{{subject}}-{{shard}}.log",
    benchmark:
        bench("answers_shard", "{dataset}/{subject}-{shard}")
    conda:
        ENV
    resources:
        **model_resources(lambda w: [w.subject]),
    params:
        code=code_hash("answers"),
        config=RESOLVED_CONFIG,
        settings=settings("seed", "answers", "datasets.{dataset}.answers", "models.{subject}"),
        prompts=prompts("answers"),
        shards=config["shards"],
    message:
        "Sampling 2N answers from {wildcards.subject} on {wildcards.dataset}, shard {wildcards.shard}"
    shell:
        "selfreflect answers --config {params.config:q} --subject {wildcards.subject:q}"
        " --questions {input.questions:q} --shard {wildcards.shard:q}"
        " --shards {params.shards:q} --out {output:q} 2> {log:q}"


rule answers:
    input:
        questions=rules.questions.output[0],
        parts=expand(rules.answers_shard.output[0], shard=SHARDS, allow_missing=True),
        code=code("merge"),
    output:
        run_path(paths.ANSWERS),
    log:
        f"{LOGS}/answers/{{dataset}}/{{subject}}-merge.log",
    benchmark:
        bench("answers", "{dataset}/{subject}")
    conda:
        ENV
    params:
        code=code_hash("merge"),
    message:
        "Merging the answer shards of {wildcards.subject} on {wildcards.dataset}"
    shell:
        "selfreflect merge answers --questions {input.questions:q} --out {output:q} {input.parts:q}"
        " 2> {log:q}"
