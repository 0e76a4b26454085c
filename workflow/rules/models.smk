rule tiny_model:
    input:
        code=code("tiny-model"),
    output:
        directory(paths.TINY_MODEL),
    log:
        "logs/tiny_model.log",
    benchmark:
        bench("tiny_model", root=paths.MODEL_BENCHMARKS)
    conda:
        ENV
    params:
        code=code_hash("tiny-model"),
    message:
        "Building the tiny random-weight chat model"
    shell:
        "selfreflect tiny-model --out {output:q} 2> {log:q}"


rule convert_model:
    input:
        code=code("convert-model"),
    output:
        directory(paths.CONVERTED_MODEL),
    log:
        "logs/models/{model}.log",
    benchmark:
        bench("convert_model", "{model}", root=paths.MODEL_BENCHMARKS)
    wildcard_constraints:
        model="|".join(map(re.escape, CONVERTED)) or "(?!)",
    conda:
        ENV
    params:
        code=code_hash("convert-model"),
        config=RESOLVED_CONFIG,
        settings=settings(lambda w: [("models", w.model, k) for k in ("gguf", "package", "dtype")]),
    message:
        "Converting the GGUF model {wildcards.model} to a safetensors folder"
    shell:
        "selfreflect convert-model --config {params.config:q} --model {wildcards.model:q}"
        " --out {output:q} 2> {log:q}"
