rule questions:
    input:
        dataset_files,
    output:
        run_path(paths.QUESTIONS),
    params:
        config=RESOLVED_CONFIG,
        dataset=lambda w: config["datasets"][w.dataset],
        digest=dataset_digest,
        questions=config["questions"],
        seed=config["seed"],
        code=code_digest("questions.py"),
    conda:
        ENV
    log:
        f"{LOGS}/questions/{{dataset}}.log",
    message:
        "Loading questions of {wildcards.dataset}"
    shell:
        "selfreflect questions --config {params.config} --dataset {wildcards.dataset}"
        " --out {output} 2> {log}"
