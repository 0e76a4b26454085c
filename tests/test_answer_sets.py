"""Answer sets as Hugging Face datasets folders: exported from the smoke run and from the laptop
run's real SmolLM2 answers, loaded with `datasets`, imported back with nothing lost (failures
included)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from selfreflect import answer_sets, paths
from selfreflect.artifacts import read_metadata, read_table, write_table
from selfreflect.errors import InputError
from selfreflect.seeds import question_seed
from selfreflect.snakemake_jobs import job_stats
from tests import workflow_utils as workflow
from tests.assertions import one_line_error, snapshot
from tests.test_fileio import before_rename
from tests.workflow_utils import clone_completed, fresh_clone, snakemake

pytestmark = pytest.mark.workflow


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["selfreflect", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def answers_with_a_failure(smoke_run, tmp_path):
    """The smoke run's answers with one question failed, as sampling records it."""
    source = smoke_run / paths.ANSWERS.format(run="smoke", dataset="smoke", subject="tiny")
    answers = read_table("answers", source)
    answers.at[1, "error"] = "prompt too long"
    answers.at[1, "test_answers"], answers.at[1, "conditioning_answers"] = [], []
    path = tmp_path / "answers.parquet"
    write_table("answers", answers, path, read_metadata(source))
    return path


def plain(value):
    """A table cell as `datasets` gives it back: arrays and numpy scalars as Python values,
    missing values (NA, NaN) as None."""
    if pd.api.types.is_scalar(value) and pd.isna(value):
        return None
    return getattr(value, "tolist", lambda: value)()


def round_trip(
    answers: Path, questions: Path, folder: Path, project: Path, config: str
) -> pd.DataFrame:
    """Export ``answers`` as a datasets folder, load it with `datasets` and import it back into
    their run (``config`` in ``project``): every column and the metadata come back as they were.
    The exported table."""
    back = folder.with_suffix(".parquet")
    hf = ["export-answers", "--format", "hf", "--questions", str(questions)]
    assert run(*hf, str(answers), str(folder)).returncode == 0
    imported = run("import-answers", "--config", config, str(folder), str(back), cwd=project)
    assert imported.returncode == 0, imported.stderr
    original = read_table("answers", answers)
    pd.testing.assert_frame_equal(read_table("answers", back), original)
    assert read_metadata(back) == read_metadata(answers)

    import datasets

    loaded = datasets.load_dataset("parquet", data_dir=str(folder / "data"), split="train")
    assert loaded.column_names == list(original.columns)
    for column in original.columns:
        expected = [plain(v) for v in original[column]]
        assert loaded[column] == expected, column
    return original


def card_header(folder: Path) -> dict:
    return yaml.safe_load((folder / "README.md").read_text().split("---\n")[1])["selfreflect"]


def test_export_load_and_import_lose_nothing(smoke_run, answers_with_a_failure, tmp_path):
    questions = smoke_run / paths.QUESTIONS.format(run="smoke", dataset="smoke")
    original = round_trip(
        answers_with_a_failure, questions, tmp_path / "set", smoke_run, "config/smoke.yaml"
    )
    header = card_header(tmp_path / "set")
    assert header["subject"]["name"] == "tiny" and "sha256" in header["subject"]
    assert header["sampling"]["num_answers"] == 4 and header["seed"] == 1
    assert header["source_dataset"]["path"] == "data/questions/smoke.jsonl"
    assert header["failed"] == 1 and header["questions"] == len(original)


def test_the_laptop_runs_real_answers_travel_losslessly(tmp_path):
    """SmolLM2's own answers (real text: quotes, newlines, cut-off sentences) as the laptop
    config's jobs sampled them: the answer set the checkout ships (dvc/laptop, pulled from
    data/dvc-remote), imported where the laptop run converted its model."""
    project = fresh_clone(tmp_path / "project")  # with dvc/laptop/'s links to its folders
    answers = paths.ANSWERS.format(run="laptop", dataset="real", subject="smollm2")
    questions = paths.QUESTIONS.format(run="laptop", dataset="real")
    model = paths.CONVERTED_MODEL.format(model="smollm2")
    convert = ["snakemake", "--configfile", "config/laptop.yaml", "--cores", "2", model]
    workflow.run(convert, project)
    pull = ["dvc", "pull", "questions-real", "merge_answers@real-smollm2"]
    workflow.run(pull, project / paths.DVC_PROJECT.format(run="laptop"))
    original = round_trip(
        project / answers, project / questions, tmp_path / "set", project, "config/laptop.yaml"
    )
    assert original["test_answers"].map(len).eq(3).all()
    header = card_header(tmp_path / "set")
    assert header["subject"]["name"] == "smollm2" and header["questions"] == len(original) == 6


def test_large_sets_are_sharded(answers_with_a_failure, tmp_path, monkeypatch):
    monkeypatch.setattr(answer_sets, "SHARD_ROWS", 7)
    folder = tmp_path / "set"
    shards = answer_sets.write_answer_set(answers_with_a_failure, folder, None)
    original = read_table("answers", answers_with_a_failure)
    assert shards == len(list((folder / "data").glob("train-*-of-*.parquet"))) > 1
    pd.testing.assert_frame_equal(answer_sets.read_answer_set(folder)[0], original)


def test_a_later_run_starts_from_an_imported_answer_set(smoke_run, tmp_path):
    """As docs/answer-sets.md says: a fresh checkout with the run's questions imports the answer
    set where the run keeps its answers, and Snakemake samples nothing."""
    answers = paths.ANSWERS.format(run="smoke", dataset="smoke", subject="tiny")
    folder = tmp_path / "set"
    assert (
        run("export-answers", "--format", "hf", str(smoke_run / answers), str(folder)).returncode
        == 0
    )
    project = clone_completed(smoke_run, tmp_path / "later")
    shutil.rmtree(project / ".snakemake")
    shutil.rmtree(project / Path(answers).parent)
    imported = run(
        "import-answers", "--config", "config/smoke.yaml", str(folder), answers, cwd=project
    )
    assert imported.returncode == 0, imported.stderr
    jobs = job_stats(snakemake(project, "-n").stdout)
    assert "merge_answers" not in jobs and "answers" not in jobs
    assert jobs["strategy_scores"] == jobs["summarize"] > 0


# --- answer sets fit the run they join; export writes only its own folder ---------------------


QUESTIONS = ["What is one?", "What is two?", "What is three?"]


@pytest.fixture
def fitting_run(tmp_path) -> Path:
    """A run (``config.yaml`` in ``tmp_path``: subject tiny, dataset d, N = 2) with its questions
    table where the run keeps it, and its answers as `selfreflect answers` writes them (same
    metadata) in ``answers.parquet``; the subject "model" is a folder of one file."""
    from selfreflect.config import answer_settings, load_config
    from selfreflect.provenance import provenance

    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "weights.bin").write_bytes(b"weights")
    config = {
        "run": "r",
        "seed": 1,
        "models": {"tiny": {"path": str(tmp_path / "model"), "backend": "hf"}},
        "subjects": ["tiny"],
        "judges": ["tiny"],
        "datasets": {"d": {"source": "local", "path": "q.jsonl"}},
        "answers": {"num_answers": 2, "temperature": 1.0, "top_p": 1.0, "max_tokens": 8},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    config = load_config(tmp_path / "config.yaml")
    ids = [f"q{i}" for i in range(len(QUESTIONS))]
    questions = pd.DataFrame({"id": ids, "question": QUESTIONS, "dataset": "d"})
    write_table(
        "questions",
        questions.assign(source_index=range(3), choices=None, gold=None),
        tmp_path / paths.QUESTIONS.format(run="r", dataset="d"),
        provenance(config, [], dataset="d", source={"path": "q.jsonl"}),
    )
    answers = questions[["id", "question"]].assign(
        test_answers=[["a", "b"]] * 3, conditioning_answers=[["c", "d"]] * 3, backend="hf"
    )
    answers = answers.assign(model="tiny", seed=[question_seed(1, qid) for qid in ids], error=None)
    meta = provenance(
        config,
        ["tiny"],
        dataset="d",
        subject="tiny",
        settings=answer_settings(config, "d"),
        shard=[0, 1],
    )
    write_table("answers", answers, tmp_path / "answers.parquet", meta)
    return tmp_path


def export(project: Path, out: Path, answers: str = "answers.parquet", *questions: str):
    """``selfreflect export-answers --format hf`` of the run's answers (and ``questions``)."""
    args = ["export-answers", "--format", "hf", *questions, str(project / answers), str(out)]
    return run(*args, cwd=project)


def import_set(project: Path, folder: Path, *options: str) -> subprocess.CompletedProcess:
    """``selfreflect import-answers`` of ``folder`` into the run of ``project``'s config."""
    command = ["import-answers", "--config", "config.yaml", *options, str(folder), "back.parquet"]
    return run(*command, cwd=project)


def consistent(answers: pd.DataFrame, meta: dict) -> pd.DataFrame:
    """``answers`` as a run of ``meta`` samples them: its subject's name, each question's seed
    from the run seed, N test and N conditioning answers."""
    n = meta["settings"]["num_answers"]
    return answers.assign(
        model=meta["subject"],
        seed=[question_seed(meta["seed"], qid) for qid in answers["id"]],
        test_answers=[[f"t{i}" for i in range(n)]] * len(answers),
        conditioning_answers=[[f"c{i}" for i in range(n)]] * len(answers),
    )


def claiming(project: Path, changes: dict) -> Path:
    """An exported answer set of the run whose metadata claims ``changes`` (dotted keys; the
    model is the claimed subject's)."""
    meta = read_metadata(project / "answers.parquet")
    for dotted, value in changes.items():
        *parents, key = dotted.split(".")
        node = meta
        for parent in parents:
            node = node[parent]
        node[key] = value
    meta["models"] = {meta["subject"]: meta["models"]["tiny"]}  # keyed by the claimed subject
    answers = consistent(read_table("answers", project / "answers.parquet"), meta)
    write_table("answers", answers, project / "c.pq", meta)
    assert export(project, project / "set", "c.pq").returncode == 0
    return project / "set"


def test_a_set_that_fits_its_run_imports_as_it_was(fitting_run):
    assert export(fitting_run, fitting_run / "set").returncode == 0
    result = import_set(fitting_run, fitting_run / "set")
    assert result.returncode == 0, result.stderr
    back, original = fitting_run / "back.parquet", fitting_run / "answers.parquet"
    pd.testing.assert_frame_equal(read_table("answers", back), read_table("answers", original))
    assert read_metadata(back) == read_metadata(original)


# the probe's set: another subject, another temperature, N = 2 where the run has 4 ...
MISMATCHES = {
    "subject": ({"subject": "other"}, "the set's 'other'", "the run's 'tiny'"),
    "model": ({"models.tiny.sha256": "0" * 64}, f"'{'0' * 64}'", "the run's '"),
    "dataset": ({"dataset": "e"}, "the set's 'e'", "the run's 'd'"),
    "seed": ({"seed": 2}, "the set's 2", "the run's 1"),
    "num_answers": ({"settings.num_answers": 4}, "the set's 4", "the run's 2"),
    "temperature": ({"settings.temperature": 0.7}, "the set's 0.7", "the run's 1.0"),
    "top_p": ({"settings.top_p": 0.9}, "the set's 0.9", "the run's 1.0"),
    "max_tokens": ({"settings.max_tokens": 64}, "the set's 64", "the run's 8"),
}


@pytest.mark.parametrize("field", MISMATCHES)
def test_a_set_that_does_not_fit_is_refused_unless_accepted(fitting_run, field):
    """One line names the field and both values and nothing is written; `--accept FIELD`
    imports it, the metadata recording what was accepted."""
    changes, theirs, ours = MISMATCHES[field]
    folder = claiming(fitting_run, changes)
    named = ["--subject", "tiny", "--dataset", "d"]
    one_line_error(import_set(fitting_run, folder, *named), f"{folder}: {field}: ", theirs, ours)
    assert not (fitting_run / "back.parquet").exists()
    result = import_set(fitting_run, folder, *named, "--accept", field)
    assert result.returncode == 0, result.stderr
    meta = read_metadata(fitting_run / "back.parquet")
    assert list(meta["accepted"]) == [field]
    assert meta["subject"] == "tiny" and meta["dataset"] == "d"


@pytest.mark.parametrize(("field", "value"), [("subject", "other"), ("seed", 99)])
def test_shards_of_two_runs_are_not_one_set(fitting_run, monkeypatch, field, value):
    """A set whose later shard's metadata claims another subject or seed is refused, naming
    that shard and the field."""
    monkeypatch.setattr(answer_sets, "SHARD_ROWS", 2)
    folder = fitting_run / "set"
    answer_sets.write_answer_set(fitting_run / "answers.parquet", folder, None)
    first, last = sorted((folder / "data").glob("*.parquet"))
    meta = {key: v for key, v in read_metadata(last).items() if key != "kind"}
    meta[field] = value
    write_table("answers", read_table("answers", last), last, meta)
    with pytest.raises(
        InputError, match=rf"{last}: {field} {value!r}, not .* as in .*{first.name}"
    ):
        answer_sets.read_answer_set(folder)


ROW_DEFECTS = {
    "fewer answers": (
        lambda a: a.assign(test_answers=[["a"]] * 3),
        "question q0: 1 test and 2 conditioning answers, not num_answers 2 each",
    ),
    "another model": (lambda a: a.assign(model="other"), "question q0: model 'other', not"),
    "another seed": (lambda a: a.assign(seed=7), "question q0: seed 7, not the one the set's"),
}


@pytest.mark.parametrize("defect", ROW_DEFECTS)
def test_a_set_whose_rows_are_not_what_it_claims_is_refused(fitting_run, defect):
    """A row's answers, model and seed must be what the set's metadata says it sampled."""
    change, message = ROW_DEFECTS[defect]
    folder = set_of(fitting_run, change(read_table("answers", fitting_run / "answers.parquet")))
    with pytest.raises(InputError, match=message):
        answer_sets.read_answer_set(folder)


@pytest.mark.parametrize("field", ["seed", "settings", "models"])
def test_a_shard_that_does_not_name_its_run_is_refused(fitting_run, monkeypatch, field):
    """A shard with no provenance of its own cannot join the set on the first shard's word."""
    monkeypatch.setattr(answer_sets, "SHARD_ROWS", 2)
    folder = fitting_run / "set"
    answer_sets.write_answer_set(fitting_run / "answers.parquet", folder, None)
    last = sorted((folder / "data").glob("*.parquet"))[-1]
    meta = {key: v for key, v in read_metadata(last).items() if key not in ("kind", field)}
    write_table("answers", read_table("answers", last), last, meta)
    with pytest.raises(InputError, match=rf"{last}: {field}: not recorded"):
        answer_sets.read_answer_set(folder)


@pytest.mark.parametrize(("field", "value"), [("subject", "other"), ("dataset", "e")])
def test_a_set_of_a_subject_or_dataset_the_run_lacks_is_refused(fitting_run, field, value):
    folder = claiming(fitting_run, {field: value})
    one_line_error(
        import_set(fitting_run, folder), f"{folder}: {field}: the set's '{value}', not one of"
    )


def set_of(project: Path, answers: pd.DataFrame) -> Path:
    """An answer-set folder holding ``answers`` with the run's metadata and their digest, as a
    hand-made set might be (export itself refuses what these tests import)."""
    folder = project / "set"
    meta = read_metadata(project / "answers.parquet")
    meta[answer_sets.DIGEST] = answer_sets.rows_digest(answers)
    write_table("answers", answers, folder / "data" / "train-00000-of-00001.parquet", meta)
    return folder


QUESTION_DEFECTS = {
    "duplicated": (lambda a: pd.concat([a, a.iloc[:1]]), "answers row (id q0) is twice in this"),
    "foreign": (  # a question of another run, sampled with its seed
        lambda a: a.assign(
            id=["q0", "q1", "x"], seed=[*a["seed"].tolist()[:2], question_seed(1, "x")]
        ),
        "question x is not among",
    ),
    "missing": (lambda a: a.iloc[:2], "no answers to question q2"),
    "other text": (lambda a: a.assign(question=["A?", *QUESTIONS[1:]]), "q0: its text is not"),
}


@pytest.mark.parametrize("defect", QUESTION_DEFECTS)
def test_a_set_must_answer_the_runs_questions_once(fitting_run, defect):
    change, message = QUESTION_DEFECTS[defect]
    folder = set_of(fitting_run, change(read_table("answers", fitting_run / "answers.parquet")))
    one_line_error(import_set(fitting_run, folder, "--accept", "subject"), str(folder), message)
    assert not (fitting_run / "back.parquet").exists()


def rewritten_shard(project: Path, edit) -> Path:
    """An exported set of the run whose one shard was rewritten by ``edit`` (answers, metadata)
    -> (answers, metadata), as a user editing its Parquet file with pandas would."""
    assert export(project, project / "set").returncode == 0
    [shard] = (project / "set" / "data").glob("*.parquet")
    meta = {key: value for key, value in read_metadata(shard).items() if key != "kind"}
    answers, meta = edit(read_table("answers", shard), meta)
    write_table("answers", answers, shard, meta)
    return shard


def test_an_answer_set_whose_answer_text_was_edited_is_refused(fitting_run):
    """The probe's edit: one test answer's text changed, metadata kept. It used to import as
    the subject's answers with the original provenance."""

    def edit(answers, meta):
        answers.at[1, "test_answers"] = ["an answer the subject never gave", "b"]
        return answers, meta

    shard = rewritten_shard(fitting_run, edit)
    one_line_error(import_set(fitting_run, fitting_run / "set"), str(shard), "rows_sha256 differs")
    assert not (fitting_run / "back.parquet").exists()


def test_an_answer_set_exported_without_a_digest_is_refused(fitting_run):
    """A set exported before shards recorded their rows' digest: one line saying to export it
    again (an unverified set could be an edited one whose digest was removed)."""

    def older(answers, meta):
        return answers, {key: value for key, value in meta.items() if key != "rows_sha256"}

    shard = rewritten_shard(fitting_run, older)
    one_line_error(
        import_set(fitting_run, fitting_run / "set"),
        f"{shard}: metadata: no rows_sha256",
        "export it again",
    )
    assert not (fitting_run / "back.parquet").exists()


def test_an_answer_set_needs_the_run_it_joins(fitting_run):
    assert export(fitting_run, fitting_run / "set").returncode == 0
    result = run("import-answers", "set", "back.parquet", cwd=fitting_run)
    one_line_error(result, "set: ", "--config")


def test_export_refuses_questions_that_are_not_the_answers(fitting_run):
    """Another dataset's questions table, and answers holding a question twice."""
    other = fitting_run / "other.parquet"
    questions = read_table("questions", fitting_run / paths.QUESTIONS.format(run="r", dataset="d"))
    write_table("questions", questions.assign(dataset="e"), other)
    one_line_error(
        export(fitting_run, fitting_run / "set", "answers.parquet", "--questions", str(other)),
        str(other),
        "dataset 'e', not of the answers' 'd'",
    )
    answers = read_table("answers", fitting_run / "answers.parquet")
    meta = read_metadata(fitting_run / "answers.parquet")
    write_table("answers", pd.concat([answers, answers.iloc[:1]]), fitting_run / "twice.pq", meta)
    one_line_error(
        export(fitting_run, fitting_run / "set", "twice.pq"), "answers row (id q0) is twice"
    )
    assert not (fitting_run / "set").exists()


def foreign_folder(project: Path, kind: str) -> Path:
    """What export must never replace: a folder with a README.md and more, a folder of
    configs, a file, a link to a folder."""
    out = project / "out"
    if kind == "file":
        out.write_text("notes")
    elif kind == "link":
        (project / "target").mkdir()
        (project / "target" / "keep.txt").write_text("keep")
        out.symlink_to(project / "target")
    else:
        out.mkdir()
        names = ["README.md", "notes.txt"] if kind == "readme" else ["smoke.yaml", "real.yaml"]
        for name in names:
            (out / name).write_text(f"{name}'s text")
    return out


@pytest.mark.parametrize("kind", ["readme", "configs", "file", "link"])
def test_export_replaces_no_folder_that_is_not_its_own(fitting_run, kind):
    out = foreign_folder(fitting_run, kind)
    before = snapshot(fitting_run)
    one_line_error(export(fitting_run, out), f"{out}: exists and ")
    assert snapshot(fitting_run) == before


@pytest.mark.parametrize("start", ["empty", "own export"])
def test_export_writes_an_empty_folder_or_replaces_its_own(fitting_run, start):
    out = fitting_run / "set"
    out.mkdir()
    if start == "own export":
        assert export(fitting_run, out).returncode == 0
        (out / "data" / "train-00000-of-00001.parquet").write_bytes(b"stale")
    assert export(fitting_run, out).returncode == 0
    answers, _ = answer_sets.read_answer_set(out)
    pd.testing.assert_frame_equal(answers, read_table("answers", fitting_run / "answers.parquet"))


def test_of_two_exports_into_one_folder_one_writes_and_the_other_says_it_is_taken(
    fitting_run, monkeypatch
):
    """Another export into the folder runs while this one is about to move its folder into
    place: it is refused with one line naming the folder, and this one writes the set."""
    out = fitting_run / "set"
    others = before_rename(monkeypatch, lambda: export(fitting_run, out), folder=True)
    answer_sets.write_answer_set(fitting_run / "answers.parquet", out, None)
    [other] = others
    one_line_error(other, f"{out}: another writer is writing it now")
    answers, _ = answer_sets.read_answer_set(out)
    pd.testing.assert_frame_equal(answers, read_table("answers", fitting_run / "answers.parquet"))


def test_a_setting_of_another_type_does_not_fit():
    """Python holds True equal to 1.0: a set claiming temperature `true` is no set of a run
    at temperature 1.0."""
    from selfreflect.errors import InputError

    run = {field: f"{field}-value" for field in answer_sets.CHECKED} | {"temperature": 1.0}
    with pytest.raises(InputError, match=r"temperature: the set's True, the run's 1\.0"):
        answer_sets.check_fits({**run, "temperature": True}, run, set(), "set")
    assert answer_sets.check_fits({**run, "temperature": 1}, run, set(), "set") == {}


def test_an_unknown_model_never_fits_even_a_run_whose_model_is_unknown():
    """A set whose model has neither hash nor hub revision is no set of a run whose model has
    none either (None == None is not the same model); --accept model takes it."""
    run = {field: f"{field}-value" for field in answer_sets.CHECKED} | {"model": None}
    with pytest.raises(InputError, match=r"set: model: the set's None, the run's None"):
        answer_sets.check_fits(run, run, set(), "set")
    assert answer_sets.check_fits(run, run, {"model"}, "set") == {
        "model": {"set": None, "run": None}
    }


def test_a_failed_question_of_a_set_holds_no_answers():
    """A row whose sampling failed (its reason in ``error``) holds no answers: check_rows
    counts N test and N conditioning answers on answered rows alone."""
    meta = {"subject": "tiny", "seed": 1, "settings": {"num_answers": 2}}
    failed = pd.DataFrame(
        {"id": ["q0"], "model": "tiny", "seed": [question_seed(1, "q0")], "error": "too long"}
    ).assign(test_answers=[[]], conditioning_answers=[[]])
    answer_sets.check_rows(failed, meta, "set")
    with pytest.raises(InputError, match="question q0: 0 test and 0 conditioning answers"):
        answer_sets.check_rows(failed.assign(error=None), meta, "set")


def test_a_question_answered_in_two_shards_is_refused():
    """Shards are read one at a time (each refuses a question given twice in it): a question
    the set's shards answer twice between them is refused when it joins a run."""
    answers = pd.DataFrame({"id": ["q0", "q1", "q0"], "question": ["A?", "B?", "A?"]})
    with pytest.raises(InputError, match=r"^set: question q0 is answered more than once$"):
        answer_sets.check_questions(answers, None, "set", None)
