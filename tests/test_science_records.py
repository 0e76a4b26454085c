"""The science run's records (selfreflect.bench.science_record) and the page rendered from them
(selfreflect.bench.science_doc): what a record keeps, and one line naming the file and field for
a record the page cannot trust."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from selfreflect import paths
from selfreflect.bench.science_doc import render
from selfreflect.bench.science_record import OPTIONAL, RECORD, REQUIRED, record
from selfreflect.config import load_config
from selfreflect.errors import InputError
from tests.conftest import REPO
from tests.test_fileio import before_rename

CONFIG = REPO / "config" / "smoke.yaml"
JUDGE = "tiny"


def table(name: str, judge: str = JUDGE) -> pd.DataFrame:
    """One row of report table ``name`` with the columns the page reads."""
    columns = {**REQUIRED, **OPTIONAL}[name]
    row = {column: 0.5 for column in columns}
    text = {"judge": judge, "dataset": "smoke", "strategy": "basic", "family": "strategies"}
    text |= {"pair_type": "idk", "metric": "selfreflect", "verdict": "better", "truth": "logprobs"}
    text |= {"decided_by": "within_question", "tracks_w1": "yes", "backend": "reference"}
    text |= {"truth_check": "agrees", "verdict_vs_chance": "above chance"}
    return pd.DataFrame([{**row, **{k: v for k, v in text.items() if k in columns}}])


def make_run(root: Path) -> Path:
    """A project folder holding a finished run of the smoke config's report (no model ran):
    its resolved config, report tables, questions and one benchmark file per judge job."""
    config_path = root / "config" / "smoke.yaml"
    config_path.parent.mkdir(parents=True)
    shutil.copy(CONFIG, config_path)
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
    return config_path


@pytest.fixture
def recorded(tmp_path) -> tuple[Path, Path]:
    """A run's config and the records folder science-record wrote for it."""
    config_path = make_run(tmp_path / "project")
    records = tmp_path / "records"
    assert record(config_path, records) == [records / JUDGE]
    return config_path, records


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
