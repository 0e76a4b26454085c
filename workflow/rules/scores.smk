# One judge pass per experiment (dataset, subject, judge) and shard: every strategy's summaries
# and the report's constructed summaries against one reference context per question, with the
# judge's content-addressed results reused across runs (selfreflect.judging); the score files
# and the studies' tables are read off the merged judgements.
rule score_shard:
    input:
        questions=rules.questions.output[0],
        answers=rules.answers.output[0],
        summaries=judged_summaries,
        stopwords=stopword_files,
        models=models("{judge}"),
        code=code("judge"),
    output:
        run_path(paths.JUDGEMENTS_SHARD),
    log:
        f"{LOGS}/scores/{{dataset}}/{{subject}}/{{judge}}/{{shard}}.log",
    benchmark:
        bench("score_shard", "{dataset}/{subject}/{judge}/{shard}")
    conda:
        ENV
    resources:
        **model_resources(lambda w: [w.judge]),
    params:
        code=code_hash("judge"),
        config=RESOLVED_CONFIG,
        settings=settings(judge_settings),
        prompts=prompts("judge"),
        shards=config["shards"],
        studies=lambda w: "--studies" if w.dataset in EVALUATED else "--no-studies",
        cache=JUDGE_CACHE,
    message:
        "Judging {wildcards.subject}'s summaries on {wildcards.dataset} with {wildcards.judge},"
        " shard {wildcards.shard}"
    shell:
        "selfreflect judge --config {params.config:q} --dataset {wildcards.dataset:q}"
        " --subject {wildcards.subject:q} --judge {wildcards.judge:q}"
        " --questions {input.questions:q} --answers {input.answers:q}"
        " --shard {wildcards.shard:q} --shards {params.shards:q} {params.studies:q}"
        " --cache {params.cache:q} --out {output:q} {input.summaries:q} 2> {log:q}"


rule judgements:
    input:
        questions=rules.questions.output[0],
        # what the (temporary) parts judged: new answers or summaries rerun the merge and so
        # its parts, even after a run that died before the parts were rebuilt
        answers=rules.answers.output[0],
        summaries=judged_summaries,
        parts=expand(rules.score_shard.output[0], shard=SHARDS, allow_missing=True),
        code=code("merge"),
    output:
        run_path(paths.JUDGEMENTS),
    log:
        f"{LOGS}/scores/{{dataset}}/{{subject}}/{{judge}}/merge.log",
    benchmark:
        bench("judgements", "{dataset}/{subject}/{judge}")
    conda:
        ENV
    params:
        code=code_hash("merge"),
    message:
        "Merging the judgements of {wildcards.subject} on {wildcards.dataset} ({wildcards.judge})"
    shell:
        "selfreflect merge judgements --questions {input.questions:q} --out {output:q}"
        " {input.parts:q} 2> {log:q}"


rule score:
    input:
        judgements=rules.judgements.output[0],
        code=code("strategy-scores"),
    output:
        run_path(paths.SCORES),
    log:
        f"{LOGS}/scores/{{dataset}}/{{subject}}/{{judge}}/{{strategy}}.log",
    benchmark:
        bench("score", "{dataset}/{subject}/{judge}/{strategy}")
    conda:
        ENV
    params:
        code=code_hash("strategy-scores"),
        config=RESOLVED_CONFIG,
    message:
        "Scores of {wildcards.strategy} ({wildcards.subject}, {wildcards.judge})"
    shell:
        "selfreflect strategy-scores --config {params.config:q} --judgements {input.judgements:q}"
        " --strategy {wildcards.strategy:q} --out {output:q} 2> {log:q}"
