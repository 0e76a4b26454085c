rule questions:
    input:
        RUN.dataset_files,
        code=RUN.code("questions"),
    output:
        run_path(paths.QUESTIONS),
    log:
        RUN.log("questions/{dataset}"),
    benchmark:
        RUN.benchmark("questions/{dataset}")
    conda:
        RUN.env
    params:
        **RUN.command_params("questions"),
        digest=RUN.dataset_digest,
    shell:
        "selfreflect questions --config {params.config:q} --dataset {wildcards.dataset:q}"
        " --out {output:q} 2> {log:q}"
