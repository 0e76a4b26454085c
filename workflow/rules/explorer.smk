# The run's explorer page: every question's answers, summaries, scores and controlled pairs.


rule explorer:
    input:
        answers=expand(run_path(paths.ANSWERS), dataset=SUMMARIZED, subject=config["subjects"]),
        summaries=expand(
            run_path(paths.SUMMARIES),
            dataset=SUMMARIZED,
            subject=config["subjects"],
            strategy=STRATEGIES,
        ),
        scores=expand(run_path(paths.SCORES), **SUMMARY_EXPERIMENTS, strategy=STRATEGIES),
        controlled=expand(run_path(paths.CONTROLLED), **SUMMARY_EXPERIMENTS),
        code=code("explorer"),
    output:
        run_path(paths.EXPLORER),
    params:
        code=code_hash("explorer"),
        config=RESOLVED_CONFIG,
    conda:
        ENV
    log:
        f"{LOGS}/explorer.log",
    message:
        "Explorer page: every question's answers, summaries and scores"
    shell:
        "selfreflect explorer --config {params.config} --out {output} {input.answers}"
        " {input.summaries} {input.scores} {input.controlled} 2> {log}"
