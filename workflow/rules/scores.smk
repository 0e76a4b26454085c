rule score_shard:
    input:
        answers=rules.answers.output[0],
        summaries=rules.summaries.output[0],
        models=models("{judge}"),
        code=code("score"),
    output:
        temp(run_path(paths.SCORES_SHARD)),
    params:
        code=code_hash("score"),
        config=RESOLVED_CONFIG,
        settings=settings("seed", "scoring", "models.{judge}"),
        prompts=prompts("score"),
        shards=config["shards"],
    resources:
        **model_resources(lambda w: [w.judge]),
    conda:
        ENV
    log:
        f"{LOGS}/scores/{{dataset}}/{{subject}}/{{judge}}/{{strategy}}-{{shard}}.log",
    message:
        "Scoring {wildcards.strategy} summaries of {wildcards.subject} with judge"
        " {wildcards.judge}, shard {wildcards.shard}"
    shell:
        "selfreflect score --config {params.config} --judge {wildcards.judge}"
        " --answers {input.answers} --summaries {input.summaries}"
        " --shard {wildcards.shard} --shards {params.shards} --out {output} 2> {log}"


rule score:
    input:
        questions=rules.questions.output[0],
        parts=expand(rules.score_shard.output[0], shard=SHARDS, allow_missing=True),
        code=code("merge"),
    output:
        scores=run_path(paths.SCORES),
        metrics=run_path(paths.METRICS),
    params:
        code=code_hash("merge"),
        config=RESOLVED_CONFIG,
        settings=settings("scoring"),
    conda:
        ENV
    log:
        f"{LOGS}/scores/{{dataset}}/{{subject}}/{{judge}}/{{strategy}}-merge.log",
    message:
        "Merging the score shards of {wildcards.strategy} ({wildcards.subject}, {wildcards.judge})"
    shell:
        "selfreflect merge scores --config {params.config} --questions {input.questions}"
        " --out {output.scores} --metrics {output.metrics} {input.parts} 2> {log}"
