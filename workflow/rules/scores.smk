rule score_shard:
    input:
        answers=rules.answers.output[0],
        summaries=rules.summaries.output[0],
        stopwords=stopword_files,
        models=models("{judge}"),
        code=code("score"),
    output:
        run_path(paths.SCORES_SHARD),
    log:
        f"{LOGS}/scores/{{dataset}}/{{subject}}/{{judge}}/{{strategy}}-{{shard}}.log",
    benchmark:
        bench("score_shard", "{dataset}/{subject}/{judge}/{strategy}-{shard}")
    conda:
        ENV
    resources:
        **model_resources(lambda w: [w.judge]),
    params:
        code=code_hash("score"),
        config=RESOLVED_CONFIG,
        settings=settings("seed", "scoring", "models.{judge}"),
        prompts=prompts("score"),
        shards=config["shards"],
    message:
        "Scoring {wildcards.strategy} summaries of {wildcards.subject} with judge"
        " {wildcards.judge}, shard {wildcards.shard}"
    shell:
        "selfreflect score --config {params.config:q} --judge {wildcards.judge:q}"
        " --answers {input.answers:q} --summaries {input.summaries:q}"
        " --shard {wildcards.shard:q} --shards {params.shards:q} --out {output:q} 2> {log:q}"


rule score:
    input:
        questions=rules.questions.output[0],
        # what the (temporary) parts scored: new answers or summaries rerun the merge and so
        # its parts, even after a run that died before the parts were rebuilt
        answers=rules.answers.output[0],
        summaries=rules.summaries.output[0],
        parts=expand(rules.score_shard.output[0], shard=SHARDS, allow_missing=True),
        code=code("merge"),
    output:
        run_path(paths.SCORES),
    log:
        f"{LOGS}/scores/{{dataset}}/{{subject}}/{{judge}}/{{strategy}}-merge.log",
    benchmark:
        bench("score", "{dataset}/{subject}/{judge}/{strategy}")
    conda:
        ENV
    params:
        code=code_hash("merge"),
    message:
        "Merging the score shards of {wildcards.strategy} ({wildcards.subject}, {wildcards.judge})"
    shell:
        "selfreflect merge scores --questions {input.questions:q} --out {output:q}"
        " {input.parts:q} 2> {log:q}"
