"""The science run's records (selfreflect.bench.science_record) and the page rendered from them
(selfreflect.docs.science): what a record keeps, and one line naming the file and field for
a record the page cannot trust."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from selfreflect import paths
from selfreflect.bench.science_record import (
    CLUSTERS,
    OPTIONAL,
    RECORD,
    REQUIRED,
    check_unmixed,
    clustered,
    config_digest,
    recompute,
    record,
)
from selfreflect.cli import main
from selfreflect.config import load_config, read_config_file
from selfreflect.docs.science import text as render
from selfreflect.errors import InputError
from tests.conftest import REPO
from tests.test_fileio import before_rename

CONFIG = REPO / "config" / "smoke.yaml"
JUDGE = "tiny"


def table(name: str, judge: str = JUDGE) -> pd.DataFrame:
    """One row of report table ``name`` with the columns the page reads."""
    columns = {**REQUIRED, **OPTIONAL}[name]
    row = {column: 10 if column.startswith("n_") else 0.5 for column in columns}
    text = {"judge": judge, "dataset": "smoke", "strategy": "basic", "family": "strategies"}
    text |= {"pair_type": "idk", "metric": "selfreflect", "verdict": "better", "truth": "logprobs"}
    text |= {"decided_by": "within_question", "tracks_w1": "yes", "backend": "reference"}
    text |= {"truth_check": "agrees", "verdict_vs_chance": "above chance"}
    return pd.DataFrame([{**row, **{k: v for k, v in text.items() if k in columns}}])


def make_run(root: Path, name: str = "smoke.yaml", git: bool = True) -> Path:
    """A project folder (a git checkout with one commit, unless ``git`` is false) holding a
    finished run of the smoke config (as ``config/<name>``)'s report (no model ran): its
    resolved config, report tables, questions and one benchmark file per judge job."""
    config_path = root / "config" / name
    config_path.parent.mkdir(parents=True)
    config_path.write_text(yaml.safe_dump(read_config_file(CONFIG)), encoding="utf-8")
    config = load_config(config_path)
    run = config["run"]
    resolved = root / paths.RESOLVED_CONFIG.format(run=run)
    resolved.parent.mkdir(parents=True)
    resolved.write_text(yaml.safe_dump(config), encoding="utf-8")
    tables = root / paths.TABLES.format(run=run)
    tables.mkdir(parents=True)
    for name in [*REQUIRED, *OPTIONAL]:
        table(name).to_csv(tables / f"{name}.csv", index=False)
    for dataset in config["datasets"]:
        questions = root / paths.QUESTIONS.format(run=run, dataset=dataset)
        questions.parent.mkdir(parents=True)
        pd.DataFrame({"id": ["a", "b"]}).to_parquet(questions)
    benchmark = root / paths.BENCHMARKS.format(run=run) / "judge" / "smoke" / "tiny" / JUDGE
    benchmark.mkdir(parents=True)
    (benchmark / "0.tsv").write_text("s\tcpu_time\tmax_rss\n12.5\t20.0\t100\n", encoding="utf-8")
    if git:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "config"], cwd=root, check=True)
        commit = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "run"]
        subprocess.run(commit, cwd=root, check=True)
    return config_path


@pytest.fixture
def recorded(tmp_path) -> tuple[Path, Path]:
    """A run's config and the records folder science-record wrote for it."""
    config_path = make_run(tmp_path / "project")
    records = tmp_path / "records"
    assert record(config_path, records) == [records / JUDGE]
    return config_path, records


@pytest.mark.workflow
def test_a_record_keeps_its_per_question_rows_which_give_its_tables_again(smoke_run, tmp_path):
    """science-record of the smoke run keeps the rows each table was built from; building the
    tables again from them gives every recorded value, and a changed score is named with its
    table, column and row."""
    config_path = smoke_run / "config" / "smoke.yaml"
    records = tmp_path / "records"
    judges = record(config_path, records)
    config = load_config(config_path)
    done, differences = recompute(records, config)
    assert not differences
    tables = ("main", "validation", "mc_study")
    assert sorted(done) == sorted(f"{j.name}/{t}" for j in judges for t in tables)
    page = render(config_path, records)
    assert f"| {', '.join(sorted(tables))} |" in page
    # beside the rows, each question's cluster: the MMLU copy's subjects, none in smoke.jsonl
    clusters = pd.read_csv(judges[0] / "rows" / CLUSTERS)
    assert set(clusters.dropna()["dataset"]) == {"smoke_mmlu"}
    assert clusters["id"].is_unique
    by_cluster = clustered(records, config)
    free_form = by_cluster[by_cluster["dataset"] == "smoke"].dropna(subset=["design_effect"])
    assert len(free_form) and free_form["design_effect"].to_numpy() == pytest.approx(1.0)
    assert (free_form["n_clusters"] == free_form["n_questions"]).all()
    assert f"| {judges[0].name} | smoke_mmlu | mc | rho of score and W1 |" in page
    # the copy's one commit made the answers: no commit before them held the plan
    made = json.loads((judges[0] / RECORD).read_text())
    assert [c.removesuffix("-dirty") for c in made["data_commits"]] == [made["commit"][:40]]
    assert made["plan_commit"] is None
    rows_path = judges[0] / "rows" / "main.parquet"
    rows = pd.read_parquet(rows_path)
    scored = rows.index[rows["score"].notna()][0]
    rows.loc[scored, "score"] += 0.5
    rows.to_parquet(rows_path, index=False)
    _, differences = recompute(records, config)
    assert differences and all(
        line.startswith(f"{judges[0] / 'main.csv'}: ") for line in differences
    )
    strategy = rows.loc[scored, "strategy"]
    assert any(line.split(": ")[1] == "mean" and strategy in line for line in differences)


def test_a_record_keeps_the_judges_rows_and_the_runs_provenance(recorded):
    config_path, records = recorded
    made = json.loads((records / JUDGE / RECORD).read_text(encoding="utf-8"))
    config = load_config(config_path)
    assert made["plan"] == config["report"]["plan"] and made["subjects"] == config["subjects"]
    assert made["questions"]["smoke"] == 2
    assert made["time"] == {"jobs": 1, "wall_s": 12.5, "cpu_s": 20.0}
    text = render(config_path, records)
    assert "| tiny | basic | strategies |" in text and "## 2. Multiple-choice study" in text


def test_recording_again_replaces_the_judges_folder_whole(recorded):
    """A table the new report no longer has does not stay beside the new record."""
    config_path, records = recorded
    (config_path.parents[1] / paths.TABLES.format(run="smoke") / "mc_study.csv").unlink()
    record(config_path, records)
    assert not (records / JUDGE / "mc_study.csv").exists()
    assert (records / JUDGE / "main.csv").is_file()


def test_a_judge_the_run_does_not_name_is_not_recorded(tmp_path):
    """A hand-edited table naming another judge (even a path) writes nothing."""
    config_path = make_run(tmp_path / "project")
    main = config_path.parents[1] / paths.TABLES.format(run="smoke") / "main.csv"
    table("main", judge="../../escaped").to_csv(main, index=False)
    with pytest.raises(InputError, match=r"main.csv: judge: '../../escaped' is not one of"):
        record(config_path, tmp_path / "records")
    assert not (tmp_path / "records").exists() and not (tmp_path / "escaped").exists()


def spoil_record(records: Path, spoil) -> None:
    path = records / JUDGE / RECORD
    path.write_text(spoil(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")


RECORD_CASES = {
    "malformed": (lambda made: "{", r"record.json: malformed JSON"),
    "a list": (lambda made: "[1, 2]", r"record.json: record: \[1, 2\] is not of type 'object'"),
    "no plan": (
        lambda made: json.dumps({k: v for k, v in made.items() if k != "plan"}),
        r"record.json: record: 'plan' is a required property",
    ),
    "no time": (
        lambda made: json.dumps({**made, "time": None}),
        r"record.json: time: None is not of type 'object'",
    ),
    "commit a number": (
        lambda made: json.dumps({**made, "commit": 7}),
        r"record.json: commit: 7 is not of type 'string'",
    ),
    "other subjects": (
        lambda made: json.dumps({**made, "subjects": ["somebody"]}),
        r"record.json: judge, subjects: the record's tiny, somebody, not tiny, tiny",
    ),
    "another plan": (
        lambda made: json.dumps({**made, "plan": {**made["plan"], "level": 0.01}}),
        r"record.json: plan: made under another analysis plan than the config's \(level\)",
    ),
}


@pytest.mark.parametrize("case", RECORD_CASES)
def test_a_record_the_page_cannot_trust_is_refused_with_one_line(recorded, case):
    config_path, records = recorded
    spoil, message = RECORD_CASES[case]
    spoil_record(records, spoil)
    with pytest.raises(InputError, match=message):
        render(config_path, records)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("main.csv", None, r"main.csv: file not found"),
        ("validation.csv", "judge\ntiny\n", r"validation.csv: missing column\(s\) dataset"),
        ("mc_study.csv", '"unclosed\n', r"mc_study.csv: not a readable CSV table"),
    ],
)
def test_a_records_table_the_page_cannot_read_is_refused(recorded, name, content, message):
    config_path, records = recorded
    path = records / JUDGE / name
    if content is None:
        path.unlink()
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        render(config_path, records)


def test_records_of_a_judge_the_config_does_not_name_or_a_missing_folder_are_refused(
    recorded, tmp_path
):
    config_path, records = recorded
    with pytest.raises(InputError, match=r"nowhere: no such folder of science records"):
        render(config_path, tmp_path / "nowhere")
    shutil.copytree(records / JUDGE, records / "old-judge")
    with pytest.raises(InputError, match=r"old-judge/record.json: judge: 'old-judge' is not one"):
        render(config_path, records)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [", r"plan_changes.yaml: malformed YAML"),
        ("just words", r"plan_changes.yaml: expected a list of changes"),
        ("- {date: '2026-01-01', reason: r}", r"plan_changes.yaml: change 1: needs date, change"),
        (
            "- {date: d, change: c, reason: r, exploratory: [claims]}",
            r"plan_changes.yaml: change 1: exploratory: a list of pairs, mc, strategies",
        ),
    ],
)
def test_a_malformed_list_of_plan_changes_is_refused(recorded, text, message):
    config_path, records = recorded
    (records / "plan_changes.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        render(config_path, records)


def test_a_plan_change_with_a_pipe_or_line_break_stays_one_table_row(recorded):
    config_path, records = recorded
    change = [{"date": "2026-01-01", "change": "a | b\nc", "reason": "r"}]
    (records / "plan_changes.yaml").write_text(yaml.safe_dump(change), encoding="utf-8")
    assert "| 2026-01-01 | a \\| b c | r |" in render(config_path, records)


def test_a_plan_change_after_the_data_were_seen_labels_its_studies_exploratory(recorded):
    """Each study's verdicts are exploratory where a record names no plan committed before its
    data, else labelled by the numbered plan changes that name it; the others stay
    confirmatory, and the verdict table says which."""
    config_path, records = recorded
    undated = "Verdicts: exploratory (no record of a plan committed before the data of tiny)."
    assert undated in render(config_path, records)
    made = json.loads((records / JUDGE / RECORD).read_text())
    made["plan_commit"] = "0" * 40  # as though the plan had been committed before the data
    (records / JUDGE / RECORD).write_text(json.dumps(made), encoding="utf-8")
    assert "Verdicts: confirmatory." in render(config_path, records)
    changes = [
        {"date": "1", "change": "c", "reason": "r"},
        {"date": "2", "change": "c", "reason": "r", "exploratory": ["pairs", "strategies"]},
    ]
    (records / "plan_changes.yaml").write_text(yaml.safe_dump(changes), encoding="utf-8")
    page = render(config_path, records)
    pairs, strategies = (page.index(f"## {n}. ") for n in (1, 3))
    assert page[pairs:].startswith(
        "## 1. Controlled pairs (paper Table 1)\n\nVerdicts: exploratory (plan change 2)."
    )
    assert "Verdicts: exploratory (plan change 2)." in page[strategies:]
    assert "Confirmatory: multiple-choice study." in page
    assert "| 2 | 2 | c | r | pairs, strategies |" in page


def tables_folder(config_path: Path) -> Path:
    return config_path.parents[1] / paths.TABLES.format(run="smoke")


def one_line_error(args: list[str], monkeypatch, capsys) -> str:
    """The one stderr line of ``selfreflect ARGS`` run in-process, which must fail."""
    monkeypatch.setattr(sys, "argv", ["selfreflect", *args])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code not in (0, None)
    [line] = capsys.readouterr().err.strip().splitlines()
    return line


def test_another_configs_run_is_recorded_in_its_own_folder(tmp_path, monkeypatch):
    """``science-record --config config/laptop.yaml`` (no --records) leaves the science run's
    records alone: a config other than science.yaml writes docs/science-<name>/."""
    project = make_run(tmp_path / "project", name="laptop.yaml").parents[1]
    kept = project / "docs" / "science" / JUDGE
    shutil.copytree(REPO / "docs" / "science" / "smollm2", kept)
    before = {path.name: path.read_bytes() for path in kept.iterdir()}
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "argv", ["selfreflect", "bench", "science-record", "--config"])
    sys.argv.append("config/laptop.yaml")
    main()
    assert {path.name: path.read_bytes() for path in kept.iterdir()} == before
    made = json.loads((project / "docs" / "science-laptop" / JUDGE / RECORD).read_text())
    assert made["config"] == "config/laptop.yaml" and len(made["config_digest"]) == 64


def test_a_record_of_another_config_or_subjects_is_not_replaced(tmp_path):
    """Named --records explicitly, a folder holding another experiment's record of the same
    judge is refused before anything is written."""
    config_path = make_run(tmp_path / "project")
    records = tmp_path / "records"
    shutil.copytree(REPO / "docs" / "science" / "smollm2", records / JUDGE)
    before = (records / JUDGE / RECORD).read_bytes()
    with pytest.raises(InputError, match=r"tiny/record.json: config: config/science.yaml, not"):
        record(config_path, records)
    assert (records / JUDGE / RECORD).read_bytes() == before


def test_every_judge_is_checked_before_any_record_is_written(tmp_path):
    """A report naming the run's judge and an unknown one writes no record at all."""
    config_path = make_run(tmp_path / "project")
    main_csv = tables_folder(config_path) / "main.csv"
    pd.concat([table("main"), table("main", judge="ghost")]).to_csv(main_csv, index=False)
    with pytest.raises(InputError, match=r"main.csv: judge: 'ghost' is not one of"):
        record(config_path, tmp_path / "records")
    assert not (tmp_path / "records").exists()


def test_science_doc_refuses_to_write_over_its_own_records(recorded, monkeypatch, capsys):
    config_path, records = recorded
    target = records / JUDGE / RECORD
    before = target.read_bytes()
    args = ["docs", "science", "--config", str(config_path), "--records", str(records)]
    line = one_line_error([*args, "--out", str(target)], monkeypatch, capsys)
    assert f"{target}: is an input of this command" in line
    assert target.read_bytes() == before


def test_a_report_older_than_its_resolved_config_is_not_recorded(tmp_path):
    """A plan change, then an interrupted rerun: the tables are the earlier config's."""
    config_path = make_run(tmp_path / "project")
    resolved = config_path.parents[1] / paths.RESOLVED_CONFIG.format(run="smoke")
    stamp = resolved.stat().st_mtime
    os.utime(tables_folder(config_path) / "validation.csv", (stamp - 60, stamp - 60))
    with pytest.raises(InputError, match=r"validation.csv: older than .*logs/smoke/config.yaml"):
        record(config_path, tmp_path / "records")
    assert not (tmp_path / "records").exists()


def test_only_the_benchmark_files_of_the_runs_jobs_count(tmp_path):
    """Files an earlier sitting left of jobs the run no longer has (a shard past the config's
    shards, a strategy it dropped) are not the judge's time."""
    config_path = make_run(tmp_path / "project")
    benchmarks = config_path.parents[1] / paths.BENCHMARKS.format(run="smoke")
    stale = {"judge/smoke/tiny/tiny/7.tsv", "strategy_scores/smoke/tiny/tiny/dropped.tsv"}
    for name in stale:
        (benchmarks / name).parent.mkdir(parents=True, exist_ok=True)
        (benchmarks / name).write_text("s\tcpu_time\n300.0\t300.0\n", encoding="utf-8")
    record(config_path, tmp_path / "records")
    made = json.loads((tmp_path / "records" / JUDGE / RECORD).read_text(encoding="utf-8"))
    assert made["time"] == {"jobs": 1, "wall_s": 12.5, "cpu_s": 20.0}


def test_a_records_table_with_another_judges_rows_is_refused(recorded):
    """The page would show those rows twice (once from each judge's record)."""
    config_path, records = recorded
    main_csv = records / JUDGE / "main.csv"
    pd.concat([table("main"), table("main", judge="other")]).to_csv(main_csv, index=False)
    with pytest.raises(InputError, match=r"tiny/main.csv: judge: rows of 'other' in the record"):
        render(config_path, records)


def test_a_records_row_given_twice_is_refused(recorded):
    config_path, records = recorded
    pd.concat([table("main")] * 2).to_csv(records / JUDGE / "main.csv", index=False)
    with pytest.raises(InputError, match=r"main.csv: dataset, judge, strategy: smoke, tiny, basic"):
        render(config_path, records)


def test_recording_outside_git_is_refused_with_one_line(tmp_path):
    config_path = make_run(tmp_path / "project", git=False)
    with pytest.raises(InputError, match=r"project: not a git checkout with a commit"):
        record(config_path, tmp_path / "records")
    assert not (tmp_path / "records").exists()


def test_records_carry_their_configs_digest_and_refuse_to_mix(recorded):
    """Records of one folder with different digests are refused; the earliest records carry
    none and mix with any (the committed ones render, see test_report)."""
    _, records = recorded
    made = json.loads((records / JUDGE / RECORD).read_text(encoding="utf-8"))
    legacy = {k: v for k, v in made.items() if k != "config_digest"}
    other = {**made, "config_digest": "0" * 64}
    check_unmixed([(Path("a"), made), (Path("b"), legacy)])
    with pytest.raises(InputError, match=r"^b: config_digest: 0{64}, not [0-9a-f]{64}"):
        check_unmixed([(Path("a"), made), (Path("b"), other)])


def test_the_digest_leaves_out_the_judges_and_their_models(tmp_path):
    """Each judge's sitting overrides ``judges``: its records stay one experiment's."""
    config_path = make_run(tmp_path / "project")
    raw = read_config_file(config_path)
    digest = config_digest(config_path)
    raw["judges"], raw["models"]["extra"] = ["extra"], {"path": "elsewhere"}
    config_path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert config_digest(config_path) == digest
    raw["seed"] = raw.get("seed", 0) + 1
    config_path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert config_digest(config_path) != digest


def test_a_non_numeric_cell_is_refused_with_one_line(recorded):
    config_path, records = recorded
    spoiled = table("main").assign(mean="high")
    spoiled.to_csv(records / JUDGE / "main.csv", index=False)
    with pytest.raises(InputError, match=r"main.csv: mean: 'high' on line 2 is not a number"):
        render(config_path, records)


@pytest.mark.parametrize("content", ["", "s\tcpu_time\tmax_rss\n"], ids=["empty", "header only"])
def test_a_benchmark_file_without_a_measure_is_refused_with_one_line(tmp_path, content):
    config_path = make_run(tmp_path / "project")
    benchmark = config_path.parents[1] / paths.BENCHMARKS.format(run="smoke")
    (benchmark / "judge" / "smoke" / "tiny" / JUDGE / "0.tsv").write_text(content)
    with pytest.raises(InputError, match=r"0.tsv: no measurement \(s, cpu_time\)"):
        record(config_path, tmp_path / "records")
    assert not (tmp_path / "records").exists()


def test_a_record_without_the_optional_mc_study_renders(recorded):
    config_path, records = recorded
    (records / JUDGE / "mc_study.csv").unlink()
    text = render(config_path, records)
    assert "## 2. Multiple-choice study" not in text and "| tiny | basic | strategies |" in text


def test_of_two_records_at_once_one_writes_and_the_other_is_refused(tmp_path, monkeypatch):
    """Another science-record of the run runs while this one is about to move a judge's folder
    into place: it is refused with one line naming the folder; this one records the judge."""
    config_path = make_run(tmp_path / "project")
    records = tmp_path / "records"

    def other() -> str:
        with pytest.raises(InputError) as refused:
            record(config_path, records)
        return str(refused.value)

    messages = before_rename(monkeypatch, other, folder=True)
    assert record(config_path, records) == [records / JUDGE]
    [message] = messages
    assert message.startswith(f"{records / JUDGE}: another writer is writing it now")
    assert list(records.iterdir()) == [records / JUDGE]
    assert (records / JUDGE / RECORD).is_file()


def test_the_page_marks_a_dirty_commit_and_shows_the_other_datasets_pairs(recorded):
    """A record whose run's tree was modified shows its commit ``-dirty``; pairs on a dataset
    that is not summarised (the MMLU-format questions) get a table of their own."""
    config_path, records = recorded
    path = records / JUDGE / RECORD
    made = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**made, "commit": f"{'a' * 40}-dirty"}), encoding="utf-8")
    validation = records / JUDGE / "validation.csv"
    rows = pd.read_csv(validation)
    pd.concat([rows, rows.assign(dataset="other")]).to_csv(validation, index=False)
    text = render(config_path, records)
    assert f"| `{'a' * 10}-dirty` |" in text
    assert "other datasets' questions (`other`" in text
    assert text.count("| tiny | idk | selfreflect |") == 2


def test_the_page_shows_the_plans_own_family_where_the_records_hold_it(recorded):
    """A main table with versus_* columns (report.plan.versus) gets the claim's table, each
    strategy against the claim's; without them the page says the records' plan has none."""
    config_path, records = recorded
    assert "which these records' plan does not hold" in render(config_path, records)
    main = records / JUDGE / "main.csv"
    versus = {"versus": "sample_and_summarize", "versus_diff": 0.0085, "versus_verdict": "worse"}
    versus |= {"versus_diff_low": 0.006, "versus_diff_high": 0.011}
    versus |= {"versus_p_value": 8.3e-08, "versus_p_adjusted": 0.0496, "versus_n_paired": 10}
    pd.read_csv(main).assign(**versus).to_csv(main, index=False)
    text = render(config_path, records)
    row = "| tiny | basic | sample_and_summarize | +0.0085 [+0.0060, +0.0110] | 8.3e-08 | 0.0496 |"
    assert f"{row} worse |" in text and "does not hold" not in text


def test_the_page_states_each_tests_power_at_the_pairs_and_questions_its_records_hold(
    recorded,
):
    """Beside the pairs and the strategies, the power of the plan's tests at the sizes the
    records hold, at the strictest Holm step of each family (the level over its tests), for
    the effects the power study names; a reference, a family of one, is left out."""
    from selfreflect.bench.power import ACCURACIES, EFFECTS, STRATEGY_TRIALS
    from selfreflect.stats import binomial_power, signed_rank_power

    config_path, records = recorded
    plan = load_config(config_path)["report"]["plan"]
    validation, main = records / JUDGE / "validation.csv", records / JUDGE / "main.csv"
    pairs = pd.read_csv(validation).assign(n_pairs=129)
    pd.concat([pairs, pairs.assign(pair_type="extra_option")]).to_csv(validation, index=False)
    rows = pd.read_csv(main).assign(n_paired=60)
    reference = rows.assign(strategy="concatenated_answers", family="concatenated_answers")
    both = pd.concat([rows, rows.assign(strategy="cot"), reference])
    both.to_csv(main, index=False)
    text = render(config_path, records)
    level, two_sided = plan["level"], plan.get("two_sided", False)
    shares = [f"{binomial_power(129, a, level / 2, 0.5, two_sided):.2f}" for a in ACCURACIES]
    assert f"| smoke | extra_option | 129 | {' | '.join(shares)} |" in text
    assert shares[1] != shares[-1]  # the effects tell powers apart
    effects = [f"{signed_rank_power(60, e, level / 2, STRATEGY_TRIALS):.2f}" for e in EFFECTS]
    assert f"| smoke | strategies | 2 | 60 | {' | '.join(effects)} |" in text
    assert "| smoke | concatenated_answers | 1 |" not in text


def test_a_pair_type_below_chance_is_shown_as_a_reversal(recorded):
    """A two-sided plan's "below chance" verdict reads as a no with its direction."""
    config_path, records = recorded
    validation = records / JUDGE / "validation.csv"
    pd.read_csv(validation).assign(verdict_vs_chance="below chance").to_csv(validation, index=False)
    assert "| **no** (below chance) |" in render(config_path, records)


def test_a_one_sided_plans_interval_below_chance_is_marked(recorded):
    """Under a one-sided plan (the recorded smoke run's) a pair type whose Wilson interval
    lies below chance keeps its "no" and says where its interval lies; above it, nothing."""
    config_path, records = recorded
    validation = records / JUDGE / "validation.csv"
    rows = pd.read_csv(validation).assign(verdict_vs_chance="not significant")
    rows.assign(ci_low=0.1, ci_high=0.4).to_csv(validation, index=False)
    below = "| **no** (interval below chance; one-sided test) |"
    assert below in render(config_path, records)
    rows.assign(ci_low=0.3, ci_high=0.6).to_csv(validation, index=False)
    assert "interval below chance" not in render(config_path, records)
