rule tiny_model:
    output:
        directory(paths.TINY_MODEL),
    params:
        code=code_digest("tiny_model.py"),
    conda:
        ENV
    log:
        "logs/tiny_model.log",
    message:
        "Building the tiny random-weight chat model"
    shell:
        "selfreflect tiny-model --out {output} 2> {log}"
