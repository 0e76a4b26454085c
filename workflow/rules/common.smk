# The config, checked, and RUN, what the rules read off it (selfreflect.rule_inputs); here the
# helpers that need Snakemake's own globals (temp, expand, rules, workflow).
import sys

from selfreflect import paths
from selfreflect.cli import command_deps
from selfreflect.config import adapter_of, write_resolved_config
from selfreflect.dvc_record import sync_plan
from selfreflect.rule_inputs import (
    NAME_WILDCARD,
    RunInputs,
    checked_config,
    config_errors_exit,
    input_flags,
    override_arguments,
)
from selfreflect.snakemake_jobs import listing_jobs

# the --configfile files, else the configfile: of a Snakefile using this one as a module
# (docs/deploy.md), else the paper's; their includes resolved, and the --config overrides
_configfiles = workflow.config_settings.configfiles or workflow.configfiles
_configfiles = _configfiles or [paths.DEFAULT_CONFIG]
_source = ", ".join(map(str, _configfiles))
config = checked_config(_configfiles, workflow.config_settings.config, _source)
RUN = RunInputs(config, command_deps)
RESOLVED_CONFIG = RUN.resolved_config  # the config every rule's command reads


wildcard_constraints:
    dataset=NAME_WILDCARD,
    subject=NAME_WILDCARD,
    judge=NAME_WILDCARD,
    strategy=NAME_WILDCARD,
    shard=r"\d+",


# DVC's record (dvc.lock), read, never changed (selfreflect.dvc_record): outputs `dvc pull` or
# `dvc checkout` left dated before their inputs, or DVC made with other settings, are named in
# one line with the command that dates them, `selfreflect dvc-sync`; a dry run plans as the files
# are, a run stops before its first job (onstart; with no job to do it ends after the line). Not
# while a cluster job or `selfreflect dvc-yaml` reads this file: they run no plan.
with config_errors_exit():
    DVC_SYNC = sync_plan(config) if workflow.is_main_process and not listing_jobs() else None
_overrides = override_arguments(workflow.config_settings.config)
if DVC_SYNC:
    print(f"warning: {DVC_SYNC.message(_source, _overrides)}", file=sys.stderr)


onstart:  # not on a dry run: a dry run with another config must not touch a running run's file
    if (
        not workflow.dag_settings.forceall
        and DVC_SYNC
        and DVC_SYNC.unforced(workflow.dag_settings.forcerun)
    ):
        sys.exit(f"error: {DVC_SYNC.message(_source, _overrides)}")
    with config_errors_exit():  # held until the run ends: a run with other settings is refused
        write_resolved_config(config, RESOLVED_CONFIG, _source)


def run_path(template):
    """An artifact path template of this run (other wildcards left open); shards are temporary."""
    path = paths.for_run(template, RUN.name)
    return temp(path) if template in paths.SHARDS else path


def finetuned_adapter(wildcards):
    """The LoRA adapter a finetuned strategy's summaries run with (none for the others)."""
    trained = adapter_of(config, wildcards.strategy)
    if trained is None:
        return []
    method, seed = trained
    adapter = rules.finetune_train.output.adapter
    return expand(adapter, subject=wildcards.subject, method=method, seed=seed)


def all_targets():
    """Rule all's input: every answer set, summary and score file, the report's files."""
    answers = expand(run_path(paths.ANSWERS), dataset=RUN.evaluated, subject=config["subjects"])
    summaries = expand(run_path(paths.SUMMARIES), **RUN.summaries)
    scores = expand(run_path(paths.SCORES), **RUN.summary_experiments, strategy=RUN.strategies)
    return answers + summaries + scores + report_targets()


def judged_summaries(wildcards):
    strategies = RUN.judged_strategies(wildcards)
    return expand(rules.summarize.output[0], strategy=strategies, allow_missing=True)
