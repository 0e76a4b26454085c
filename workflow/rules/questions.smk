rule questions:
    input:
        dataset_files,
        code=code("questions"),
    output:
        run_path(paths.QUESTIONS),
    log:
        f"{LOGS}/questions/{{dataset}}.log",
    benchmark:
        bench("questions", "{dataset}")
    conda:
        ENV
    params:
        code=code_hash("questions"),
        config=RESOLVED_CONFIG,
        settings=settings("seed", "questions", "datasets.{dataset}"),
        digest=dataset_digest,
    message:
        "Loading questions of {wildcards.dataset}"
    shell:
        "selfreflect questions --config {params.config:q} --dataset {wildcards.dataset:q}"
        " --out {output:q} 2> {log:q}"
