rule answers:
    input:
        questions=rules.questions.output[0],
        models=RUN.models("{subject}"),
    output:
        run_path(paths.ANSWERS_SHARD),
    log:
        f"{RUN.logs}/answers/{{dataset}}/{{subject}}-{{shard}}.log",
    resources:
        **RUN.model_resources(lambda w: [w.subject]),
    params:
        shards=config["shards"],
    shell:
        "selfreflect answers --config {params.config:q} --subject {wildcards.subject:q}"
        " --questions {input.questions:q} --shard {wildcards.shard:q}"
        " --shards {params.shards:q} --out {output:q} 2> {log:q}"


rule merge_answers:
    input:
        questions=rules.questions.output[0],
        parts=expand(rules.answers.output[0], shard=RUN.shards, allow_missing=True),
    output:
        run_path(paths.ANSWERS),
    log:
        f"{RUN.logs}/answers/{{dataset}}/{{subject}}-merge.log",
    shell:
        "selfreflect merge answers --questions {input.questions:q} --out {output:q} {input.parts:q}"
        " 2> {log:q}"
