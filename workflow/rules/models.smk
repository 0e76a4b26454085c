rule tiny_model:
    output:
        directory(paths.TINY_MODEL),
    log:
        "logs/tiny_model.log",
    shell:
        "selfreflect tiny-model --out {output:q} 2> {log:q}"


rule convert_model:
    output:
        directory(paths.CONVERTED_MODEL),
    log:
        "logs/models/{model}.log",
    wildcard_constraints:
        model=RUN.converted,
    shell:
        "selfreflect convert-model --config {params.config:q} --model {wildcards.model:q}"
        " --out {output:q} 2> {log:q}"
