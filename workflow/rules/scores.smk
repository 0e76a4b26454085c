# One judge pass per experiment (dataset, subject, judge) and shard: every strategy's summaries
# and the report's constructed summaries against one reference context per question, with the
# judge's content-addressed results reused across runs (selfreflect.scoring.experiment); the
# score files and the studies' tables are read off the merged judgements.
rule judge:
    input:
        questions=rules.questions.output[0],
        answers=rules.merge_answers.output[0],
        summaries=judged_summaries,
        stopwords=RUN.stopword_files,
        models=RUN.models("{judge}"),
        code=RUN.code("judge"),
    output:
        run_path(paths.JUDGEMENTS_SHARD),
    log:
        RUN.log("judge/{dataset}/{subject}/{judge}/{shard}"),
    benchmark:
        RUN.benchmark("judge/{dataset}/{subject}/{judge}/{shard}")
    conda:
        RUN.env
    resources:
        **RUN.model_resources(lambda w: [w.judge]),
    params:
        **RUN.command_params("judge"),
        shards=config["shards"],
        studies=RUN.studies,
        cache=RUN.judge_cache,
    shell:
        "selfreflect judge --gpus {resources.gpu:q}"
        " --config {params.config:q} --dataset {wildcards.dataset:q}"
        " --subject {wildcards.subject:q} --judge {wildcards.judge:q}"
        " --questions {input.questions:q} --answers {input.answers:q}"
        " --shard {wildcards.shard:q} --shards {params.shards:q} {params.studies:q}"
        " --cache {params.cache:q} --out {output:q} {input.summaries:q} 2> {log:q}"


rule merge_judgements:
    input:
        questions=rules.questions.output[0],
        # what the (temporary) parts judged: new answers or summaries rerun the merge and so
        # its parts, even after a run that died before the parts were rebuilt
        answers=rules.merge_answers.output[0],
        summaries=judged_summaries,
        parts=expand(rules.judge.output[0], shard=RUN.shards, allow_missing=True),
        code=RUN.code("merge"),
    output:
        run_path(paths.JUDGEMENTS),
    log:
        RUN.log("merge_judgements/{dataset}/{subject}/{judge}"),
    benchmark:
        RUN.benchmark("merge_judgements/{dataset}/{subject}/{judge}")
    conda:
        RUN.env
    params:
        **RUN.command_params("merge"),
    shell:
        "selfreflect merge judgements --questions {input.questions:q} --out {output:q}"
        " {input.parts:q} 2> {log:q}"


rule strategy_scores:
    input:
        judgements=rules.merge_judgements.output[0],
        code=RUN.code("strategy-scores"),
    output:
        run_path(paths.SCORES),
    log:
        RUN.log("strategy_scores/{dataset}/{subject}/{judge}/{strategy}"),
    benchmark:
        RUN.benchmark("strategy_scores/{dataset}/{subject}/{judge}/{strategy}")
    conda:
        RUN.env
    params:
        **RUN.command_params("strategy-scores"),
    shell:
        "selfreflect strategy-scores --config {params.config:q} --judgements {input.judgements:q}"
        " --strategy {wildcards.strategy:q} --out {output:q} 2> {log:q}"
