# SelfReflect workflow. Run: snakemake --cores all --resources gpu=1 [--configfile config/smoke.yaml]
import sys

from snakemake.utils import min_version

min_version("9.0")


DEFAULT_CONFIG = "config/config.yaml"
if not workflow.config_settings.configfiles:  # a --configfile replaces the paper config
    from selfreflect.config import read_config_file
    from selfreflect.errors import ConfigError

    try:  # Snakemake's own error for a malformed file names no file
        read_config_file(DEFAULT_CONFIG)
    except ConfigError as err:
        sys.exit(f"error: {err}")

    configfile: DEFAULT_CONFIG


include: "workflow/rules/common.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/questions.smk"
include: "workflow/rules/answers.smk"
include: "workflow/rules/summaries.smk"
include: "workflow/rules/scores.smk"
include: "workflow/rules/finetune.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/explorer.smk"


rule all:
    default_target: True
    input:
        targets_agreeing_with_dvc,
        rules.explorer.output,
