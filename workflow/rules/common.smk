# The config, checked, and RUN, what the rules read off it (selfreflect.rule_inputs); here the
# helpers that need Snakemake's own globals (temp, expand, rules, workflow).
from selfreflect import paths
from selfreflect.config import adapter_of, write_resolved_config
from selfreflect.dvc_record import align_with_dvc
from selfreflect.rule_inputs import (
    NAME_WILDCARD,
    RunInputs,
    checked_config,
    config_errors_exit,
    input_flags,
)

_source = ", ".join(map(str, workflow.config_settings.configfiles)) or DEFAULT_CONFIG
config = checked_config(config, workflow.config_settings.configfiles, _source)
RUN = RunInputs(config)
RESOLVED_CONFIG = RUN.resolved_config  # the config every rule's command reads


wildcard_constraints:
    dataset=NAME_WILDCARD,
    subject=NAME_WILDCARD,
    judge=NAME_WILDCARD,
    strategy=NAME_WILDCARD,
    shard=r"\d+",


onstart:  # not on a dry run: a dry run with another config must not touch a running run's file
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


def made_by_snakemake(path):
    """Whether Snakemake keeps a record (its metadata) of making ``path``."""
    return workflow.persistence.metadata(IOFile(path)) is not None


def targets_agreeing_with_dvc(wildcards):
    """Rule all's input: every target, once Snakemake agrees with the outputs DVC recorded
    (selfreflect.dvc_record). An input function runs while the DAG is built, before Snakemake
    plans, when it knows --forcerun and whether it is a dry run (which must change nothing: it
    dates no file); a forced run (`selfreflect dvc-yaml`'s DAG) reruns everything anyway."""
    if not workflow.dag_settings.forceall:
        with config_errors_exit():
            align_with_dvc(
                config,
                _source,
                made_by_snakemake,
                forced=workflow.dag_settings.forcerun,
                dry_run=workflow.dryrun,
            )
    return all_targets()


def all_targets():
    """Every answer set, summary and score file, the report's files."""
    answers = expand(run_path(paths.ANSWERS), dataset=RUN.evaluated, subject=config["subjects"])
    summaries = expand(run_path(paths.SUMMARIES), **RUN.summaries)
    scores = expand(run_path(paths.SCORES), **RUN.summary_experiments, strategy=RUN.strategies)
    return answers + summaries + scores + report_targets()


def judged_summaries(wildcards):
    strategies = RUN.judged_strategies(wildcards)
    return expand(rules.summarize.output[0], strategy=strategies, allow_missing=True)
