# The paper's tables and figures: per-experiment judge-scored studies, then run-wide tables
# (CSV/Markdown/LaTeX), figures (PNG/PDF) and DVC metrics, collected by `snakemake --report`.
include: "report_common.smk"


rule report_alt_metrics:
    input:
        answers=rules.merge_answers.output[0],
        models=RUN.models("{judge}"),
    output:
        run_path(paths.ALT_METRICS),
    log:
        f"{RUN.logs}/studies/{{dataset}}/{{subject}}/{{judge}}/alt_metrics.log",
    resources:
        **RUN.model_resources(lambda w: [w.judge]),
    shell:
        "selfreflect report alt-metrics --config {params.config:q}"
        " --dataset {wildcards.dataset:q} --subject {wildcards.subject:q} --judge {wildcards.judge:q}"
        " --answers {input.answers:q} --out {output:q} 2> {log:q}"


rule report_controlled_scores:
    input:
        judgements=rules.merge_judgements.output[0],
        alternatives=rules.report_alt_metrics.output[0],
    output:
        run_path(paths.CONTROLLED),
    log:
        f"{RUN.logs}/studies/{{dataset}}/{{subject}}/{{judge}}/controlled.log",
    shell:
        "selfreflect report controlled-scores --config {params.config:q}"
        " --judgements {input.judgements:q} --alternatives {input.alternatives:q}"
        " --out {output:q} 2> {log:q}"


rule report_mc_scores:
    input:
        questions=rules.questions.output[0],
        answers=rules.merge_answers.output[0],
        judgements=rules.merge_judgements.output[0],
    output:
        run_path(paths.MC),
    log:
        f"{RUN.logs}/studies/{{dataset}}/{{subject}}/{{judge}}/mc.log",
    shell:
        "selfreflect report mc-scores --config {params.config:q}"
        " --questions {input.questions:q} --answers {input.answers:q}"
        " --judgements {input.judgements:q} --out {output:q} 2> {log:q}"


rule report_convergence_scores:
    input:
        judgements=rules.merge_judgements.output[0],
    output:
        run_path(paths.CONVERGENCE),
    log:
        f"{RUN.logs}/studies/{{dataset}}/{{subject}}/{{judge}}/convergence.log",
    shell:
        "selfreflect report convergence-scores --config {params.config:q}"
        " --judgements {input.judgements:q} --out {output:q} 2> {log:q}"


rule report_agreement_scores:
    input:
        answers=rules.merge_answers.output[0],
        summaries=expand(rules.summarize.output[0], strategy=RUN.strategies, allow_missing=True),
        stopwords=RUN.stopword_files,
        models=RUN.models("{judge}"),
    output:
        run_path(paths.AGREEMENT),
    log:
        f"{RUN.logs}/studies/{{dataset}}/{{subject}}/{{judge}}/agreement.log",
    resources:
        **RUN.model_resources(lambda w: [w.judge]),
    shell:
        "selfreflect report agreement-scores --config {params.config:q}"
        " --dataset {wildcards.dataset:q} --subject {wildcards.subject:q} --judge {wildcards.judge:q}"
        " --answers {input.answers:q} --out {output:q} {input.summaries:q} 2> {log:q}"


rule report_main_table:
    input:
        scores=expand(run_path(paths.SCORES), **RUN.summary_experiments, strategy=RUN.strategies),
    output:
        report_files("main", "Main table", figure=True),
        metrics=[RUN.report_metrics(f"main/{strategy}") for strategy in RUN.strategies],
    log:
        f"{RUN.logs}/report/main_table.log",
    params:
        **REPORT_DIRS,
    shell:
        "selfreflect report main-table --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} --metrics-dir {params.metrics:q} {input.scores:q} 2> {log:q}"


rule report_validation:
    input:
        controlled=expand(run_path(paths.CONTROLLED), **RUN.experiments),
    output:
        report_files("validation", "Metric validation", figure=True),
        metrics=RUN.report_metrics("validation"),
    log:
        f"{RUN.logs}/report/validation.log",
    params:
        **REPORT_DIRS,
    shell:
        "selfreflect report validation --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} --metrics {output.metrics:q} {input.controlled:q} 2> {log:q}"


rule report_mc_study:
    input:
        mc=expand(run_path(paths.MC), **RUN.experiments),
    output:
        report_files("mc_study", "Multiple-choice study", figure=True),
        metrics=RUN.report_metrics("mc_study"),
    log:
        f"{RUN.logs}/report/mc_study.log",
    params:
        **REPORT_DIRS,
    shell:
        "selfreflect report mc-study --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} --metrics {output.metrics:q} {input.mc:q} 2> {log:q}"


rule report_convergence:
    input:
        convergence=expand(run_path(paths.CONVERGENCE), **RUN.summary_experiments),
    output:
        report_files("convergence", "Convergence", figure=True),
    log:
        f"{RUN.logs}/report/convergence.log",
    params:
        **REPORT_DIRS,
    shell:
        "selfreflect report convergence --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} {input.convergence:q} 2> {log:q}"


rule report_cost_table:
    input:
        summaries=expand(run_path(paths.SUMMARIES), **RUN.summaries),
    output:
        report_files("cost", "Cost"),
    log:
        f"{RUN.logs}/report/cost_table.log",
    params:
        **REPORT_DIRS,
    shell:
        "selfreflect report cost-table --config {params.config:q} --out-dir {params.tables:q}"
        " {input.summaries:q} 2> {log:q}"


rule report_human_agreement:
    input:
        ratings=config["report"]["human_ratings"] or [],
        scores=expand(run_path(paths.SCORES), **RUN.summary_experiments, strategy=RUN.strategies),
    output:
        report_files("human_agreement", "Human agreement"),
    log:
        f"{RUN.logs}/report/human_agreement.log",
    params:
        **REPORT_DIRS,
    shell:
        "selfreflect report human-agreement --config {params.config:q}"
        " --out-dir {params.tables:q} {input.scores:q} 2> {log:q}"


rule report_backend_agreement:
    input:
        agreement=expand(run_path(paths.AGREEMENT), **RUN.summary_experiments),
    output:
        report_files("backend_agreement", "Backend agreement"),
        metrics=RUN.report_metrics("backend_agreement"),
    log:
        f"{RUN.logs}/report/backend_agreement.log",
    params:
        **REPORT_DIRS,
    shell:
        "selfreflect report backend-agreement --config {params.config:q}"
        " --out-dir {params.tables:q} --metrics {output.metrics:q} {input.agreement:q} 2> {log:q}"


# Where the run's time, memory and judge work went, from every job's benchmark file (written by
# Snakemake, not DVC): after the run, as no rule's input can list every job of the DAG.
onsuccess:
    shell(
        "selfreflect report performance --config {RESOLVED_CONFIG:q} --out-dir {RUN.tables:q}"
        " --figure-dir {RUN.figures:q} --results {RUN.results:q}"
        " --benchmarks {RUN.benchmarks:q} --benchmarks {paths.MODEL_BENCHMARKS:q}"
        " > {RUN.performance_log:q} 2>&1"
    )
