rule tiny_model:
    input:
        code=code("tiny-model"),
    output:
        directory(paths.TINY_MODEL),
    params:
        code=code_hash("tiny-model"),
    conda:
        ENV
    log:
        "logs/tiny_model.log",
    message:
        "Building the tiny random-weight chat model"
    shell:
        "selfreflect tiny-model --out {output:q} 2> {log:q}"


rule convert_model:
    input:
        code=code("convert-model"),
    output:
        directory(paths.CONVERTED_MODEL),
    params:
        code=code_hash("convert-model"),
        config=RESOLVED_CONFIG,
        settings=settings(lambda w: [("models", w.model, k) for k in ("gguf", "package", "dtype")]),
    wildcard_constraints:
        model="|".join(map(re.escape, CONVERTED)) or "(?!)",
    conda:
        ENV
    log:
        "logs/models/{model}.log",
    message:
        "Converting the GGUF model {wildcards.model} to a safetensors folder"
    shell:
        "selfreflect convert-model --config {params.config:q} --model {wildcards.model:q}"
        " --out {output:q} 2> {log:q}"
