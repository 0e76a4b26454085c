rule questions:
    input:
        RUN.dataset_files,
    output:
        run_path(paths.QUESTIONS),
    log:
        f"{RUN.logs}/questions/{{dataset}}.log",
    params:
        digest=RUN.dataset_digest,
    shell:
        "selfreflect questions --config {params.config:q} --dataset {wildcards.dataset:q}"
        " --out {output:q} 2> {log:q}"
