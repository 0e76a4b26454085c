"""The openai backend against a real ``vllm serve`` of the tiny model on 127.0.0.1.

The server is this module's only vLLM engine (it needs no in-process one). Covers sampling
fields and token counts, the ``summarize`` command for every strategy through the Snakemake
DAG with hosted-style subject and summariser, refused endpoints, and that the API key never
reaches a log or an artifact.
"""

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from selfreflect.artifacts import read_table
from selfreflect.backends import Sampling, open_generator
from selfreflect.chat import question_chat
from selfreflect.errors import InputError
from selfreflect.finetune import FINETUNED
from selfreflect.strategies import builtin_names
from tests.test_strategies import QUESTIONS
from tests.workflow_utils import copy_project, free_port, run

pytestmark = [pytest.mark.vllm, pytest.mark.workflow]

KEY = "sk-test-9f8e7d6c5b4a-never-log-me"
KEY_ENV = "SELFREFLECT_TEST_API_KEY"


@pytest.fixture(scope="module")
def server(tiny_model, tmp_path_factory):
    """``vllm serve`` of the tiny model (served as ``tiny``, key required): its base URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    args = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(tiny_model)]
    args += ["--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--dtype", "float32", "--max-model-len", "2048", "--enforce-eager", "--seed", "0"]
    args += ["--kv-cache-memory-bytes", str(128 * 2**20), "--no-enable-chunked-prefill"]
    args += ["--api-key", KEY, "--disable-log-stats"]
    with log.open("w") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/health", process, log)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def wait_healthy(url: str, process: subprocess.Popen, log: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"vllm serve exited:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(1)
    raise RuntimeError(f"vllm serve not healthy after {timeout} s:\n{log.read_text()[-3000:]}")


def api_spec(base_url: str, api_key_env: str | None = KEY_ENV) -> dict:
    return {
        "name": "tiny-api",
        "path": "tiny",
        "backend": "openai",
        "base_url": base_url,
        "api_key_env": api_key_env,
        "max_concurrency": 4,
        "max_model_len": 2048,
    }


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


def test_chat_samples_with_seed_and_counts_tokens(server, api_key):
    generator = open_generator(api_spec(server))
    chats = [question_chat(q) for q in QUESTIONS]
    sampling = Sampling(n=3, temperature=1.0, max_tokens=8, seed=7)
    first, again = generator.chat(chats, sampling), generator.chat(chats, sampling)
    assert [g.texts for g in first] == [g.texts for g in again]
    assert all(len(g.texts) == 3 and g.error is None for g in first)
    assert all(g.prompt_tokens > 20 and 0 < g.completion_tokens <= 24 for g in first)
    greedy = generator.chat(chats, Sampling(max_tokens=8, top_k=5))
    assert [g.texts for g in greedy] == [
        g.texts for g in generator.chat(chats, Sampling(max_tokens=8))
    ]


def test_too_long_prompt_fails_only_its_chat(server, api_key):
    generator = open_generator(api_spec(server))
    chats = [question_chat(QUESTIONS[0]), question_chat("why " * 3000)]
    ok, too_long = generator.chat(chats, Sampling(max_tokens=4))
    assert ok.error is None and ok.texts
    assert too_long.error.startswith("endpoint rejected the request: BadRequestError")
    assert KEY not in too_long.error


def test_missing_key_and_refused_endpoint(server, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(InputError, match=f"environment variable {KEY_ENV} is not set"):
        open_generator(api_spec(server))
    monkeypatch.setenv(KEY_ENV, "sk-wrong-key-0000")
    with pytest.raises(InputError, match=r"endpoint .* failed: AuthenticationError") as err:
        open_generator(api_spec(server)).chat([question_chat("Hi?")], Sampling(max_tokens=2))
    assert "sk-wrong-key-0000" not in str(err.value)


def api_project(tmp_path: Path, base_url: str, strategies: list[str]) -> Path:
    """The smoke project with the tiny model behind the endpoint as subject and summariser."""
    project = copy_project(tmp_path / "p")
    config = yaml.safe_load((project / "config/smoke.yaml").read_text())
    config["run"] = "api"
    config["models"]["tiny-api"] = {k: v for k, v in api_spec(base_url).items() if k != "name"}
    config["subjects"] = ["tiny-api"]
    config["summarizer"] = None
    config["summaries"]["strategies"] = strategies
    config["summaries"]["plugins"]["echo"] = "tests.test_strategies_plugins:echo_plugin"
    (project / "config/api.yaml").write_text(yaml.safe_dump(config))
    return project


def summary_targets(strategies: list[str]) -> list[str]:
    return [f"results/api/smoke/tiny-api/summaries/{s}.parquet" for s in strategies]


def snakemake_api(project: Path, *args: str, check: bool = True):
    options = ["--configfile", "config/api.yaml", "--cores", "2", "--resources", "gpu=1"]
    return run(["snakemake", *args, *options], project, check=check)  # targets before --resources


def test_dag_with_hosted_subject_and_summariser(server, tmp_path, monkeypatch):
    """Answers and every strategy's summaries come from the endpoint; the key leaks nowhere."""
    monkeypatch.setenv(KEY_ENV, KEY)
    adapterless = [name for name in builtin_names() if name not in FINETUNED]  # a local model's
    strategies = [*adapterless, "majority_vote", "echo"]
    project = api_project(tmp_path, server, strategies)
    snakemake_api(
        project, *summary_targets(strategies), "results/api/smoke/tiny-api/answers.parquet"
    )
    answers = read_table("answers", project / "results/api/smoke/tiny-api/answers.parquet")
    assert answers["error"].isna().all() and answers["test_answers"].map(len).eq(4).all()
    for path in summary_targets(strategies):
        table = read_table("summaries", project / path)
        assert len(table) == 20 and table["error"].isna().all(), (path, table["error"].tolist())
        assert table["summary"].notna().all()
    written = ["results", "logs", ".snakemake", "config"]  # every artifact, log and config
    leaks = subprocess.run(
        ["grep", "-rl", KEY, *written], cwd=project, capture_output=True, text=True
    )
    assert leaks.stdout == ""

    project_config = project / "config/api.yaml"
    config = yaml.safe_load(project_config.read_text())
    config["models"]["tiny-api"]["base_url"] = f"http://127.0.0.1:{free_port()}/v1"  # closed port
    project_config.write_text(yaml.safe_dump(config))
    kept = (project / summary_targets(["basic"])[0]).read_bytes()
    (project / summary_targets(["greedy"])[0]).unlink()
    result = snakemake_api(project, *summary_targets(["greedy"]), check=False)
    assert result.returncode != 0
    log = (project / "logs/api/summaries/smoke/tiny-api/greedy.log").read_text()
    assert "error: strategy 'greedy': model 'tiny-api': endpoint http://127.0.0.1:" in log
    assert "APIConnectionError" in log
    assert (project / summary_targets(["basic"])[0]).read_bytes() == kept
