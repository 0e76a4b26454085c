# The paper's tables and figures: per-experiment judge-scored studies, then run-wide tables
# (CSV/Markdown/LaTeX), figures (PNG/PDF) and DVC metrics, collected by `snakemake --report`.
include: "report_common.smk"


rule controlled_scores:
    input:
        answers=rules.answers.output[0],
        model=rules.tiny_model.output[0],
    output:
        run_path(paths.CONTROLLED),
    params:
        config=RESOLVED_CONFIG,
        judge=lambda w: config["models"][w.judge],
        scoring=config["scoring"],
        pair_types=config["report"]["pair_types"],
    resources:
        **model_resources(lambda w: [w.judge]),
    conda:
        ENV
    log:
        f"{LOGS}/studies/{{dataset}}/{{subject}}/{{judge}}/controlled.log",
    message:
        "Scoring controlled summary pairs of {wildcards.subject} with {wildcards.judge}"
    shell:
        "selfreflect report controlled-scores --config {params.config} --judge {wildcards.judge}"
        " --answers {input.answers} --out {output} 2> {log}"


rule mc_scores:
    input:
        questions=rules.questions.output[0],
        answers=rules.answers.output[0],
        model=rules.tiny_model.output[0],
    output:
        run_path(paths.MC),
    params:
        config=RESOLVED_CONFIG,
        judge=lambda w: config["models"][w.judge],
        scoring=config["scoring"],
        temperatures=config["report"]["mc_temperatures"],
        pseudo_count=config["report"]["mc_pseudo_count"],
    resources:
        **model_resources(lambda w: [w.judge]),
    conda:
        ENV
    log:
        f"{LOGS}/studies/{{dataset}}/{{subject}}/{{judge}}/mc.log",
    message:
        "Scoring multiple-choice distribution summaries of {wildcards.subject} on {wildcards.dataset}"
    shell:
        "selfreflect report mc-scores --config {params.config} --judge {wildcards.judge}"
        " --questions {input.questions} --answers {input.answers} --out {output} 2> {log}"


rule convergence_scores:
    input:
        answers=rules.answers.output[0],
        summaries=strategy_summaries,
        model=rules.tiny_model.output[0],
    output:
        run_path(paths.CONVERGENCE),
    params:
        config=RESOLVED_CONFIG,
        judge=lambda w: config["models"][w.judge],
        scoring=config["scoring"],
        sizes=config["report"]["convergence_sizes"],
        questions=config["report"]["convergence_questions"],
        seed=config["seed"],
    resources:
        **model_resources(lambda w: [w.judge]),
    conda:
        ENV
    log:
        f"{LOGS}/studies/{{dataset}}/{{subject}}/{{judge}}/convergence.log",
    message:
        "Rescoring {wildcards.subject}'s summaries with subsampled answers ({wildcards.judge})"
    shell:
        "selfreflect report convergence-scores --config {params.config} --judge {wildcards.judge}"
        " --answers {input.answers} --out {output} {input.summaries} 2> {log}"


rule main_table:
    input:
        expand(run_path(paths.SCORES), **SUMMARY_EXPERIMENTS, strategy=STRATEGIES),
    output:
        table=table_files("main", "Main table"),
        figure=figure_files("main", "Main table"),
        metrics=report_metrics("main"),
    params:
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        figures=lambda w, output: os.path.dirname(output.figure[0]),
        report=config["report"],
    conda:
        ENV
    log:
        f"{LOGS}/report/main_table.log",
    message:
        "Main table: SelfReflect per strategy with bootstrap CIs and paired tests"
    shell:
        "selfreflect report main-table --config {params.config} --out-dir {params.tables}"
        " --figure-dir {params.figures} --metrics {output.metrics} {input} 2> {log}"


rule validation:
    input:
        expand(run_path(paths.CONTROLLED), **EXPERIMENTS),
    output:
        table=table_files("validation", "Metric validation"),
        figure=figure_files("validation", "Metric validation"),
        metrics=report_metrics("validation"),
    params:
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        figures=lambda w, output: os.path.dirname(output.figure[0]),
        confidence=config["report"]["confidence"],
    conda:
        ENV
    log:
        f"{LOGS}/report/validation.log",
    message:
        "Metric validation table: controlled pairs ranked correctly per metric"
    shell:
        "selfreflect report validation --config {params.config} --out-dir {params.tables}"
        " --figure-dir {params.figures} --metrics {output.metrics} {input} 2> {log}"


rule mc_study:
    input:
        expand(run_path(paths.MC), **EXPERIMENTS),
    output:
        table=table_files("mc_study", "Multiple-choice study"),
        figure=figure_files("mc_study", "Multiple-choice study"),
        metrics=report_metrics("mc_study"),
    params:
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        figures=lambda w, output: os.path.dirname(output.figure[0]),
        report=config["report"],
    conda:
        ENV
    log:
        f"{LOGS}/report/mc_study.log",
    message:
        "Multiple-choice study: SelfReflect against the true 1-Wasserstein distance"
    shell:
        "selfreflect report mc-study --config {params.config} --out-dir {params.tables}"
        " --figure-dir {params.figures} --metrics {output.metrics} {input} 2> {log}"


rule convergence:
    input:
        expand(run_path(paths.CONVERGENCE), **SUMMARY_EXPERIMENTS),
    output:
        table=table_files("convergence", "Convergence"),
        figure=figure_files("convergence", "Convergence"),
    params:
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        figures=lambda w, output: os.path.dirname(output.figure[0]),
        report=config["report"],
    conda:
        ENV
    log:
        f"{LOGS}/report/convergence.log",
    message:
        "Convergence figure: score vs number of answers"
    shell:
        "selfreflect report convergence --config {params.config} --out-dir {params.tables}"
        " --figure-dir {params.figures} {input} 2> {log}"


rule cost_table:
    input:
        expand(
            run_path(paths.SUMMARIES),
            dataset=SUMMARIZED,
            subject=config["subjects"],
            strategy=STRATEGIES,
        ),
    output:
        table=table_files("cost", "Cost"),
    params:
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        models=config["models"],
    conda:
        ENV
    log:
        f"{LOGS}/report/cost_table.log",
    message:
        "Cost table: tokens and seconds per strategy"
    shell:
        "selfreflect report cost-table --config {params.config} --out-dir {params.tables} {input} 2> {log}"


rule human_agreement:
    input:
        ratings=config["report"]["human_ratings"] or [],
        scores=expand(run_path(paths.SCORES), **SUMMARY_EXPERIMENTS, strategy=STRATEGIES),
    output:
        table=table_files("human_agreement", "Human agreement"),
    params:
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
    conda:
        ENV
    log:
        f"{LOGS}/report/human_agreement.log",
    message:
        "Human agreement: Krippendorff's alpha among raters and with SelfReflect"
    shell:
        "selfreflect report human-agreement --config {params.config}"
        " --out-dir {params.tables} {input.scores} 2> {log}"
