rule questions:
    input:
        dataset_files,
    output:
        run_path(paths.QUESTIONS),
    log:
        f"{LOGS}/questions/{{dataset}}.log",
    params:
        digest=dataset_digest,
    shell:
        "selfreflect questions --config {RESOLVED_CONFIG:q} --dataset {wildcards.dataset:q}"
        " --out {output:q} 2> {log:q}"
