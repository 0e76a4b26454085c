# The run's explorer: index.html and a data file per question (answers, summaries, scores,
# controlled pairs).


rule explorer:
    input:
        answers=expand(run_path(paths.ANSWERS), dataset=SUMMARIZED, subject=config["subjects"]),
        summaries=expand(run_path(paths.SUMMARIES), **SUMMARIES),
        scores=expand(run_path(paths.SCORES), **SUMMARY_EXPERIMENTS, strategy=STRATEGIES),
        controlled=expand(run_path(paths.CONTROLLED), **SUMMARY_EXPERIMENTS),
    output:
        directory(run_path(paths.EXPLORER)),
    log:
        f"{LOGS}/explorer.log",
    shell:
        "selfreflect explorer --config {RESOLVED_CONFIG:q} --out {output:q} {input.answers:q}"
        " {input.summaries:q} {input.scores:q} {input.controlled:q} 2> {log:q}"
