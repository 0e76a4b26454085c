rule tiny_model:
    input:
        code=code("tiny_model.py", "data/tiny_corpus.txt"),
    output:
        directory(paths.TINY_MODEL),
    conda:
        ENV
    log:
        "logs/tiny_model.log",
    message:
        "Building the tiny random-weight chat model"
    shell:
        "selfreflect tiny-model --out {output} 2> {log}"
