# The run's explorer: index.html and a data file per question (answers, summaries, scores,
# controlled pairs).


rule explorer:
    input:
        answers=expand(run_path(paths.ANSWERS), dataset=RUN.summarized, subject=config["subjects"]),
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
        " {input.summaries:q} {input.scores:q} {input.controlled:q} 2> {log:q}"
