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
        "selfreflect report alt-metrics --gpus {resources.gpu:q}"
        " --config {params.config:q}"
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
        "selfreflect report agreement-scores --gpus {resources.gpu:q}"
        " --config {params.config:q}"
        " --dataset {wildcards.dataset:q} --subject {wildcards.subject:q} --judge {wildcards.judge:q}"
        " --answers {input.answers:q} --out {output:q} {input.summaries:q} 2> {log:q}"


# The run's tables (selfreflect.report.catalog), one rule each: the artifacts of every experiment
# a table reads (its FILES, and what else it reads), its files, figure and DVC metrics.
TABLE_INPUTS = {
    "main-table": dict(files=expand(run_path(paths.SCORES), **SCORED)),
    "validation": dict(files=expand(run_path(paths.CONTROLLED), **RUN.experiments)),
    "mc-study": dict(files=expand(run_path(paths.MC), **RUN.experiments)),
    "convergence": dict(files=expand(run_path(paths.CONVERGENCE), **RUN.summary_experiments)),
    "cost-table": dict(files=expand(run_path(paths.SUMMARIES), **RUN.summaries)),
    "human-agreement": dict(
        files=expand(run_path(paths.SCORES), **SCORED),
        ratings=config["report"]["human_ratings"] or [],
    ),
    "backend-agreement": dict(files=expand(run_path(paths.AGREEMENT), **RUN.summary_experiments)),
}

for table in REPORTS:

    rule:
        name:
            table_rule(table)
        input:
            **TABLE_INPUTS[table.name],
            code=RUN.code(f"report {table.name}"),
        output:
            report_files(table.table, table.title, figure=bool(table.figure)),
            metrics=table_metrics(table),
        log:
            RUN.log(table_rule(table)),
        benchmark:
            RUN.benchmark(table_rule(table))
        conda:
            RUN.env
        params:
            **RUN.command_params(f"report {table.name}"),
            command=table.name,
            outputs=table_outputs(table),
        shell:
            "selfreflect report {params.command:q} --config {params.config:q} {params.outputs:q}"
            " {input.files:q} 2> {log:q}"


# Where the run's time, memory and judge work went, from every job's benchmark file (written by
# Snakemake, not DVC): after the run, as no rule's input can list every job of the DAG.
onsuccess:
    shell(
        "selfreflect report performance --config {RESOLVED_CONFIG:q} --out-dir {RUN.tables:q}"
        " --figure-dir {RUN.figures:q} --results {RUN.results:q}"
        " --benchmarks {RUN.benchmarks:q} --benchmarks {paths.MODEL_BENCHMARKS:q}"
        " > {RUN.performance_log:q} 2>&1"
    )
