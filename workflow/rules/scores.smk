rule score_shard:
    input:
        answers=rules.answers.output[0],
        summaries=rules.summaries.output[0],
        model=rules.tiny_model.output[0],
    output:
        temp(run_path(paths.SCORES_SHARD)),
    params:
        config=RESOLVED_CONFIG,
        judge=lambda w: config["models"][w.judge],
        scoring=config["scoring"],
        seed=config["seed"],
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
    output:
        scores=run_path(paths.SCORES),
        metrics=run_path(paths.METRICS),
    params:
        config=RESOLVED_CONFIG,
        scoring=config["scoring"],
    conda:
        ENV
    log:
        f"{LOGS}/scores/{{dataset}}/{{subject}}/{{judge}}/{{strategy}}-merge.log",
    message:
        "Merging the score shards of {wildcards.strategy} ({wildcards.subject}, {wildcards.judge})"
    shell:
        "selfreflect merge scores --config {params.config} --questions {input.questions}"
        " --out {output.scores} --metrics {output.metrics} {input.parts} 2> {log}"
