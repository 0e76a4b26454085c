# The paper's tables and figures: per-experiment judge-scored studies, then run-wide tables
# (CSV/Markdown/LaTeX), figures (PNG/PDF) and DVC metrics, collected by `snakemake --report`.
include: "report_common.smk"


rule report_alt_metrics:
    input:
        answers=rules.merge_answers.output[0],
        models=RUN.models("{judge}"),
        code=RUN.code("report alt-metrics"),
    output:
        run_path(paths.ALT_METRICS),
    log:
        RUN.log("report_alt_metrics/{dataset}/{subject}/{judge}"),
    benchmark:
        RUN.benchmark("report_alt_metrics/{dataset}/{subject}/{judge}")
    conda:
        RUN.env
    resources:
        **RUN.model_resources(lambda w: [w.judge]),
    params:
        **RUN.command_params("report alt-metrics"),
    shell:
        "selfreflect report alt-metrics --config {params.config:q}"
        " --dataset {wildcards.dataset:q} --subject {wildcards.subject:q} --judge {wildcards.judge:q}"
        " --answers {input.answers:q} --out {output:q} 2> {log:q}"


rule report_controlled_scores:
    input:
        judgements=rules.merge_judgements.output[0],
        alternatives=rules.report_alt_metrics.output[0],
        code=RUN.code("report controlled-scores"),
    output:
        run_path(paths.CONTROLLED),
    log:
        RUN.log("report_controlled_scores/{dataset}/{subject}/{judge}"),
    benchmark:
        RUN.benchmark("report_controlled_scores/{dataset}/{subject}/{judge}")
    conda:
        RUN.env
    params:
        **RUN.command_params("report controlled-scores"),
    shell:
        "selfreflect report controlled-scores --config {params.config:q}"
        " --judgements {input.judgements:q} --alternatives {input.alternatives:q}"
        " --out {output:q} 2> {log:q}"


rule report_mc_scores:
    input:
        questions=rules.questions.output[0],
        answers=rules.merge_answers.output[0],
        judgements=rules.merge_judgements.output[0],
        code=RUN.code("report mc-scores"),
    output:
        run_path(paths.MC),
    log:
        RUN.log("report_mc_scores/{dataset}/{subject}/{judge}"),
    benchmark:
        RUN.benchmark("report_mc_scores/{dataset}/{subject}/{judge}")
    conda:
        RUN.env
    params:
        **RUN.command_params("report mc-scores"),
    shell:
        "selfreflect report mc-scores --config {params.config:q}"
        " --questions {input.questions:q} --answers {input.answers:q}"
        " --judgements {input.judgements:q} --out {output:q} 2> {log:q}"


rule report_convergence_scores:
    input:
        judgements=rules.merge_judgements.output[0],
        code=RUN.code("report convergence-scores"),
    output:
        run_path(paths.CONVERGENCE),
    log:
        RUN.log("report_convergence_scores/{dataset}/{subject}/{judge}"),
    benchmark:
        RUN.benchmark("report_convergence_scores/{dataset}/{subject}/{judge}")
    conda:
        RUN.env
    params:
        **RUN.command_params("report convergence-scores"),
    shell:
        "selfreflect report convergence-scores --config {params.config:q}"
        " --judgements {input.judgements:q} --out {output:q} 2> {log:q}"


rule report_agreement_scores:
    input:
        answers=rules.merge_answers.output[0],
        summaries=expand(rules.summarize.output[0], strategy=RUN.strategies, allow_missing=True),
        stopwords=RUN.stopword_files,
        models=RUN.models("{judge}"),
        code=RUN.code("report agreement-scores"),
    output:
        run_path(paths.AGREEMENT),
    log:
        RUN.log("report_agreement_scores/{dataset}/{subject}/{judge}"),
    benchmark:
        RUN.benchmark("report_agreement_scores/{dataset}/{subject}/{judge}")
    conda:
        RUN.env
    resources:
        **RUN.model_resources(lambda w: [w.judge]),
    params:
        **RUN.command_params("report agreement-scores"),
    shell:
        "selfreflect report agreement-scores --config {params.config:q}"
        " --dataset {wildcards.dataset:q} --subject {wildcards.subject:q} --judge {wildcards.judge:q}"
        " --answers {input.answers:q} --out {output:q} {input.summaries:q} 2> {log:q}"


rule report_main_table:
    input:
        scores=expand(run_path(paths.SCORES), **RUN.summary_experiments, strategy=RUN.strategies),
        code=RUN.code("report main-table"),
    output:
        report_files("main", "Main table", figure=True),
        metrics=[RUN.report_metrics(f"main/{strategy}") for strategy in RUN.strategies],
    log:
        RUN.log("report_main_table"),
    benchmark:
        RUN.benchmark("report_main_table")
    conda:
        RUN.env
    params:
        **REPORT_DIRS,
        **RUN.command_params("report main-table"),
    shell:
        "selfreflect report main-table --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} --metrics-dir {params.metrics:q} {input.scores:q} 2> {log:q}"


rule report_validation:
    input:
        controlled=expand(run_path(paths.CONTROLLED), **RUN.experiments),
        code=RUN.code("report validation"),
    output:
        report_files("validation", "Metric validation", figure=True),
        metrics=RUN.report_metrics("validation"),
    log:
        RUN.log("report_validation"),
    benchmark:
        RUN.benchmark("report_validation")
    conda:
        RUN.env
    params:
        **REPORT_DIRS,
        **RUN.command_params("report validation"),
    shell:
        "selfreflect report validation --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} --metrics {output.metrics:q} {input.controlled:q} 2> {log:q}"


rule report_mc_study:
    input:
        mc=expand(run_path(paths.MC), **RUN.experiments),
        code=RUN.code("report mc-study"),
    output:
        report_files("mc_study", "Multiple-choice study", figure=True),
        metrics=RUN.report_metrics("mc_study"),
    log:
        RUN.log("report_mc_study"),
    benchmark:
        RUN.benchmark("report_mc_study")
    conda:
        RUN.env
    params:
        **REPORT_DIRS,
        **RUN.command_params("report mc-study"),
    shell:
        "selfreflect report mc-study --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} --metrics {output.metrics:q} {input.mc:q} 2> {log:q}"


rule report_convergence:
    input:
        convergence=expand(run_path(paths.CONVERGENCE), **RUN.summary_experiments),
        code=RUN.code("report convergence"),
    output:
        report_files("convergence", "Convergence", figure=True),
    log:
        RUN.log("report_convergence"),
    benchmark:
        RUN.benchmark("report_convergence")
    conda:
        RUN.env
    params:
        **REPORT_DIRS,
        **RUN.command_params("report convergence"),
    shell:
        "selfreflect report convergence --config {params.config:q} --out-dir {params.tables:q}"
        " --figure-dir {params.figures:q} {input.convergence:q} 2> {log:q}"


rule report_cost_table:
    input:
        summaries=expand(run_path(paths.SUMMARIES), **RUN.summaries),
        code=RUN.code("report cost-table"),
    output:
        report_files("cost", "Cost"),
    log:
        RUN.log("report_cost_table"),
    benchmark:
        RUN.benchmark("report_cost_table")
    conda:
        RUN.env
    params:
        **REPORT_DIRS,
        **RUN.command_params("report cost-table"),
    shell:
        "selfreflect report cost-table --config {params.config:q} --out-dir {params.tables:q}"
        " {input.summaries:q} 2> {log:q}"


rule report_human_agreement:
    input:
        ratings=config["report"]["human_ratings"] or [],
        scores=expand(run_path(paths.SCORES), **RUN.summary_experiments, strategy=RUN.strategies),
        code=RUN.code("report human-agreement"),
    output:
        report_files("human_agreement", "Human agreement"),
    log:
        RUN.log("report_human_agreement"),
    benchmark:
        RUN.benchmark("report_human_agreement")
    conda:
        RUN.env
    params:
        **REPORT_DIRS,
        **RUN.command_params("report human-agreement"),
    shell:
        "selfreflect report human-agreement --config {params.config:q}"
        " --out-dir {params.tables:q} {input.scores:q} 2> {log:q}"


rule report_backend_agreement:
    input:
        agreement=expand(run_path(paths.AGREEMENT), **RUN.summary_experiments),
        code=RUN.code("report backend-agreement"),
    output:
        report_files("backend_agreement", "Backend agreement"),
        metrics=RUN.report_metrics("backend_agreement"),
    log:
        RUN.log("report_backend_agreement"),
    benchmark:
        RUN.benchmark("report_backend_agreement")
    conda:
        RUN.env
    params:
        **REPORT_DIRS,
        **RUN.command_params("report backend-agreement"),
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
