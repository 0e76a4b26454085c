# The run's explorer: index.html and a data file per question (answers, summaries, scores,
# controlled pairs), and each summarised question's conditioning answers clustered by meaning
# for it where the model jobs run (MiniLM on a GPU where they have one).


rule answer_clusters:
    input:
        answers=rules.merge_answers.output[0],
        code=RUN.code("cluster-answers"),
    output:
        run_path(paths.ANSWER_CLUSTERS),
    log:
        RUN.log("answer_clusters/{dataset}/{subject}"),
    benchmark:
        RUN.benchmark("answer_clusters/{dataset}/{subject}")
    conda:
        RUN.env
    resources:
        **RUN.embedder_resources(),
    params:
        **RUN.command_params("cluster-answers"),
    shell:
        "selfreflect cluster-answers --gpus {resources.gpu:q}"
        " --config {params.config:q} --answers {input.answers:q}"
        " --out {output:q} 2> {log:q}"


rule explorer:
    input:
        answers=expand(run_path(paths.ANSWERS), dataset=RUN.summarized, subject=config["subjects"]),
        clusters=expand(
            rules.answer_clusters.output[0], dataset=RUN.summarized, subject=config["subjects"]
        ),
        summaries=expand(run_path(paths.SUMMARIES), **RUN.summaries),
        scores=expand(run_path(paths.SCORES), **RUN.summary_experiments, strategy=RUN.strategies),
        controlled=expand(run_path(paths.CONTROLLED), **RUN.summary_experiments),
        code=RUN.code("explorer"),
    output:
        directory(run_path(paths.EXPLORER)),
    log:
        RUN.log("explorer"),
    benchmark:
        RUN.benchmark("explorer")
    conda:
        RUN.env
    params:
        **RUN.command_params("explorer"),
    shell:
        "selfreflect explorer --config {params.config:q} --out {output:q} {input.answers:q}"
        " {input.clusters:q} {input.summaries:q} {input.scores:q} {input.controlled:q}"
        " 2> {log:q}"
