# The paper's tables and figures: per-experiment judge-scored studies, then run-wide tables
# (CSV/Markdown/LaTeX), figures (PNG/PDF) and DVC metrics, collected by `snakemake --report`.
include: "report_common.smk"


rule alt_metrics:
    input:
        answers=rules.answers.output[0],
        models=models("{judge}"),
        code=code("report alt-metrics"),
    output:
        run_path(paths.ALT_METRICS),
    log:
        f"{LOGS}/studies/{{dataset}}/{{subject}}/{{judge}}/alt_metrics.log",
    benchmark:
        bench("alt_metrics", "{dataset}/{subject}/{judge}")
    conda:
        ENV
    resources:
        **model_resources(lambda w: [w.judge]),
    params:
        code=code_hash("report alt-metrics"),
        config=RESOLVED_CONFIG,
        settings=settings(
            "scoring",
            "summaries.cluster.embedder",
            "summaries.cluster.threshold",
            "report.pair_types",
            "models.{judge}",
        ),
        prompts=prompts("report alt-metrics"),
    message:
        "Rating controlled summary pairs of {wildcards.subject} with {wildcards.judge}"
    shell:
        "selfreflect report alt-metrics --config {params.config:q}"
        " --dataset {wildcards.dataset:q} --subject {wildcards.subject:q} --judge {wildcards.judge:q}"
        " --answers {input.answers:q} --out {output:q} 2> {log:q}"


rule controlled_scores:
    input:
        judgements=rules.judgements.output[0],
        alternatives=rules.alt_metrics.output[0],
        code=code("report controlled-scores"),
    output:
        run_path(paths.CONTROLLED),
    log:
        f"{LOGS}/studies/{{dataset}}/{{subject}}/{{judge}}/controlled.log",
    benchmark:
        bench("controlled_scores", "{dataset}/{subject}/{judge}")
    conda:
        ENV
    params:
        code=code_hash("report controlled-scores"),
        config=RESOLVED_CONFIG,
    message:
        "Controlled summary pairs of {wildcards.subject} ({wildcards.judge})"
    shell:
        "selfreflect report controlled-scores --config {params.config:q}"
        " --judgements {input.judgements:q} --alternatives {input.alternatives:q}"
        " --out {output:q} 2> {log:q}"


rule mc_scores:
    input:
        questions=rules.questions.output[0],
        answers=rules.answers.output[0],
        judgements=rules.judgements.output[0],
        code=code("report mc-scores"),
    output:
        run_path(paths.MC),
    log:
        f"{LOGS}/studies/{{dataset}}/{{subject}}/{{judge}}/mc.log",
    benchmark:
        bench("mc_scores", "{dataset}/{subject}/{judge}")
    conda:
        ENV
    params:
        code=code_hash("report mc-scores"),
        config=RESOLVED_CONFIG,
        settings=settings("report.mc_temperatures"),
    message:
        "Multiple-choice distribution summaries of {wildcards.subject} on {wildcards.dataset}"
    shell:
        "selfreflect report mc-scores --config {params.config:q}"
        " --questions {input.questions:q} --answers {input.answers:q}"
        " --judgements {input.judgements:q} --out {output:q} 2> {log:q}"


rule convergence_scores:
    input:
        judgements=rules.judgements.output[0],
        code=code("report convergence-scores"),
    output:
        run_path(paths.CONVERGENCE),
    log:
        f"{LOGS}/studies/{{dataset}}/{{subject}}/{{judge}}/convergence.log",
    benchmark:
        bench("convergence_scores", "{dataset}/{subject}/{judge}")
    conda:
        ENV
    params:
        code=code_hash("report convergence-scores"),
        config=RESOLVED_CONFIG,
    message:
        "Scores of {wildcards.subject}'s summaries with subsampled answers ({wildcards.judge})"
    shell:
        "selfreflect report convergence-scores --config {params.config:q}"
        " --judgements {input.judgements:q} --out {output:q} 2> {log:q}"


rule agreement_scores:
    input:
        answers=rules.answers.output[0],
        summaries=expand(rules.summaries.output[0], strategy=STRATEGIES, allow_missing=True),
        stopwords=stopword_files,
        models=models("{judge}"),
        code=code("report agreement-scores"),
    output:
        run_path(paths.AGREEMENT),
    log:
        f"{LOGS}/studies/{{dataset}}/{{subject}}/{{judge}}/agreement.log",
    benchmark:
        bench("agreement_scores", "{dataset}/{subject}/{judge}")
    conda:
        ENV
    resources:
        **model_resources(lambda w: [w.judge]),
    params:
        code=code_hash("report agreement-scores"),
        config=RESOLVED_CONFIG,
        settings=settings(
            "scoring",
            "report.agreement_backends",
            "report.agreement_questions",
            "models.{judge}",
        ),
        prompts=prompts("report agreement-scores"),
    message:
        "Scoring {wildcards.subject}'s first summaries with every judge backend"
        " ({wildcards.judge})"
    shell:
        "selfreflect report agreement-scores --config {params.config:q}"
        " --dataset {wildcards.dataset:q} --subject {wildcards.subject:q} --judge {wildcards.judge:q}"
        " --answers {input.answers:q} --out {output:q} {input.summaries:q} 2> {log:q}"


rule main_table:
    input:
        scores=expand(run_path(paths.SCORES), **SUMMARY_EXPERIMENTS, strategy=STRATEGIES),
        code=code("report main-table"),
    output:
        table=table_files("main", "Main table"),
        figure=figure_files("main", "Main table"),
        metrics=[report_metrics(f"main/{strategy}") for strategy in STRATEGIES],
    log:
        f"{LOGS}/report/main_table.log",
    benchmark:
        bench("main_table")
    conda:
        ENV
    params:
        code=code_hash("report main-table"),
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        figures=lambda w, output: os.path.dirname(output.figure[0]),
        metrics=lambda w, output: os.path.dirname(output.metrics[0]),
        settings=settings(
            "seed", *STATS_SETTINGS, "report.baseline", "finetune.teacher", *FIGURE_SETTINGS
        ),
    message:
        "Main table: SelfReflect per strategy with bootstrap CIs and paired tests"
    shell:
        "selfreflect report main-table --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} --metrics-dir {params.metrics:q} {input.scores:q}"
        " 2> {log:q}"


rule validation:
    input:
        controlled=expand(run_path(paths.CONTROLLED), **EXPERIMENTS),
        code=code("report validation"),
    output:
        table=table_files("validation", "Metric validation"),
        figure=figure_files("validation", "Metric validation"),
        metrics=report_metrics("validation"),
    log:
        f"{LOGS}/report/validation.log",
    benchmark:
        bench("validation")
    conda:
        ENV
    params:
        code=code_hash("report validation"),
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        figures=lambda w, output: os.path.dirname(output.figure[0]),
        settings=settings("report.confidence", *FIGURE_SETTINGS),
    message:
        "Metric validation table: controlled pairs ranked correctly per metric"
    shell:
        "selfreflect report validation --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} --metrics {output.metrics:q} {input.controlled:q}"
        " 2> {log:q}"


rule mc_study:
    input:
        mc=expand(run_path(paths.MC), **EXPERIMENTS),
        code=code("report mc-study"),
    output:
        table=table_files("mc_study", "Multiple-choice study"),
        figure=figure_files("mc_study", "Multiple-choice study"),
        metrics=report_metrics("mc_study"),
    log:
        f"{LOGS}/report/mc_study.log",
    benchmark:
        bench("mc_study")
    conda:
        ENV
    params:
        code=code_hash("report mc-study"),
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        figures=lambda w, output: os.path.dirname(output.figure[0]),
        settings=settings("seed", *STATS_SETTINGS, *FIGURE_SETTINGS),
    message:
        "Multiple-choice study: SelfReflect against the true 1-Wasserstein distance"
    shell:
        "selfreflect report mc-study --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} --metrics {output.metrics:q} {input.mc:q} 2> {log:q}"


rule convergence:
    input:
        convergence=expand(run_path(paths.CONVERGENCE), **SUMMARY_EXPERIMENTS),
        code=code("report convergence"),
    output:
        table=table_files("convergence", "Convergence"),
        figure=figure_files("convergence", "Convergence"),
    log:
        f"{LOGS}/report/convergence.log",
    benchmark:
        bench("convergence")
    conda:
        ENV
    params:
        code=code_hash("report convergence"),
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        figures=lambda w, output: os.path.dirname(output.figure[0]),
        settings=settings("seed", *STATS_SETTINGS, *FIGURE_SETTINGS),
    message:
        "Convergence figure: score vs number of answers"
    shell:
        "selfreflect report convergence --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} {input.convergence:q} 2> {log:q}"


rule cost_table:
    input:
        summaries=expand(
            run_path(paths.SUMMARIES),
            dataset=SUMMARIZED,
            subject=config["subjects"],
            strategy=STRATEGIES,
        ),
        code=code("report cost-table"),
    output:
        table=table_files("cost", "Cost"),
    log:
        f"{LOGS}/report/cost_table.log",
    benchmark:
        bench("cost_table")
    conda:
        ENV
    params:
        code=code_hash("report cost-table"),
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        settings=settings("models"),
    message:
        "Cost table: tokens and seconds per strategy"
    shell:
        "selfreflect report cost-table --config {params.config:q} --out-dir {params.tables:q}"
        " {input.summaries:q} 2> {log:q}"


rule human_agreement:
    input:
        ratings=config["report"]["human_ratings"] or [],
        scores=expand(run_path(paths.SCORES), **SUMMARY_EXPERIMENTS, strategy=STRATEGIES),
        code=code("report human-agreement"),
    output:
        table=table_files("human_agreement", "Human agreement"),
    log:
        f"{LOGS}/report/human_agreement.log",
    benchmark:
        bench("human_agreement")
    conda:
        ENV
    params:
        code=code_hash("report human-agreement"),
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        settings=settings("report.human_ratings"),
    message:
        "Human agreement: Krippendorff's alpha among raters and with SelfReflect"
    shell:
        "selfreflect report human-agreement --config {params.config:q}"
        " --out-dir {params.tables:q} {input.scores:q} 2> {log:q}"


rule backend_agreement:
    input:
        agreement=expand(run_path(paths.AGREEMENT), **SUMMARY_EXPERIMENTS),
        code=code("report backend-agreement"),
    output:
        table=table_files("backend_agreement", "Backend agreement"),
        metrics=report_metrics("backend_agreement"),
    log:
        f"{LOGS}/report/backend_agreement.log",
    benchmark:
        bench("backend_agreement")
    conda:
        ENV
    params:
        code=code_hash("report backend-agreement"),
        config=RESOLVED_CONFIG,
        tables=lambda w, output: os.path.dirname(output.table[0]),
        settings=settings("scoring.backend", "report.agreement_questions"),
    message:
        "Judge backend agreement: each backend's scores against scoring.backend's"
    shell:
        "selfreflect report backend-agreement --config {params.config:q}"
        " --out-dir {params.tables:q} --metrics {output.metrics:q} {input.agreement:q}"
        " 2> {log:q}"


# Where the run's time, memory and judge work went, from every job's benchmark file (written by
# Snakemake, not DVC): after the run, as no rule's input can list every job of the DAG.
onsuccess:
    shell(
        "selfreflect report performance --config {RESOLVED_CONFIG:q} --out-dir {TABLES:q}"
        " --figure-dir {FIGURES:q} --results {RESULTS:q} --benchmarks {BENCHMARKS:q}"
        " --benchmarks {paths.MODEL_BENCHMARKS:q} > {PERFORMANCE_LOG:q} 2>&1"
    )
