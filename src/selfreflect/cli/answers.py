"""``selfreflect answers``: the subject's sampled answers (one shard)."""

from __future__ import annotations

import click

from selfreflect.cli.options import (
    CONFIG,
    OUT,
    QUESTIONS,
    SHARD,
    SHARDS,
    SUBJECT,
    generating,
    gpus_option,
    reads,
)


@reads("seed", "answers", "datasets.{dataset}.answers", generating("subject"), prompts=True)
@click.command()
@gpus_option()
@CONFIG
@SUBJECT
@QUESTIONS
@SHARD
@SHARDS
@OUT
def answers(
    config_path: str, subject: str, questions_path: str, shard: int, shards: int, out: str
) -> None:
    """Sample 2N answers per question from the subject model (docs/protocol.md §3); resumable."""
    from selfreflect import checkpoints, sharding
    from selfreflect.answers import sample_answers
    from selfreflect.artifacts import one_label, read_table, write_table
    from selfreflect.backends.registry import open_generator
    from selfreflect.code_deps import job_identity
    from selfreflect.config import answer_settings, load_config, model_spec
    from selfreflect.failures import check_failures
    from selfreflect.fileio import check_writable
    from selfreflect.progress import name_job, shard_part
    from selfreflect.provenance import provenance

    config = load_config(config_path)
    spec = model_spec(config, subject, source=config_path)
    questions = read_table("questions", questions_path)
    dataset = one_label(questions, "dataset", questions_path)
    settings = answer_settings(config, dataset)
    table = sharding.shard(questions, shard, shards)
    name_job(f"{dataset}/{subject}", *shard_part(shard, shards))
    key = checkpoints.fingerprint(job_identity(settings, spec), config["seed"])
    directory = checkpoints.checkpoint_dir(out, key)
    check_writable(out)
    check_writable(directory)
    with open_generator(spec) as generator:

        def sample(chunk):
            return sample_answers(generator, chunk, settings, config["seed"], spec["backend"])

        result = checkpoints.run_chunked(
            "answers", table, sample, directory, settings["checkpoint_every"]
        )
    check_failures(result, config["max_failed_share"], f"answers of {subject}")
    meta = provenance(
        config,
        [subject],
        dataset=dataset,
        subject=subject,
        settings=settings,
        shard=[shard, shards],
    )
    write_table("answers", result, out, meta)
    checkpoints.clear(directory)
    failed = int(result["error"].notna().sum())
    click.echo(f"answers for {len(result)} questions ({failed} failed) written to {out}")
