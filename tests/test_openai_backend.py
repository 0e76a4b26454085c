"""The openai backend against a real ``vllm serve`` of the tiny model on 127.0.0.1, and against
a stub endpoint that answers as a broken or overloaded server would.

The server is this module's only vLLM engine (it needs no in-process one). Covers sampling
fields and token counts, every built-in strategy with the endpoint as subject and summariser,
the ``answers`` and ``summarize`` jobs of the Snakemake DAG with hosted-style subject and
summariser, refused endpoints, that the API key never reaches a log or an artifact, and that
every malformed, short, slow or failed response fails its own prompt with the reason.
"""

import json
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest
import yaml

from selfreflect.artifacts import read_table, write_table
from selfreflect.backends import Sampling
from selfreflect.backends.registry import open_generator
from selfreflect.chat import question_chat
from selfreflect.config import finetuned, read_config_file, validate_config
from selfreflect.errors import ConfigError, InputError, StrategyError
from selfreflect.strategies.registry import builtin_names
from tests.test_strategies import QUESTIONS, summaries_config
from tests.test_strategies import run as run_strategy
from tests.workflow_utils import copy_project, free_port, run

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


def api_spec(base_url: str, api_key_env: str | None = KEY_ENV, **settings) -> dict:
    return {
        "name": "tiny-api",
        "path": "tiny",
        "backend": "openai",
        "base_url": base_url,
        "api_key_env": api_key_env,
        "max_concurrency": 4,
        "max_model_len": 2048,
        "timeout": 600,
        "max_retries": 2,
        **settings,
    }


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.mark.vllm
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


@pytest.mark.vllm
def test_too_long_prompt_fails_only_its_chat(server, api_key):
    generator = open_generator(api_spec(server))
    chats = [question_chat(QUESTIONS[0]), question_chat("why " * 3000)]
    ok, too_long = generator.chat(chats, Sampling(max_tokens=4))
    assert ok.error is None and ok.texts
    assert too_long.error.startswith("endpoint failed the request: BadRequestError")
    assert KEY not in too_long.error


@pytest.mark.vllm
def test_missing_key_and_refused_endpoint(server, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(InputError, match=f"environment variable {KEY_ENV} is not set"):
        open_generator(api_spec(server))
    monkeypatch.setenv(KEY_ENV, "sk-wrong-key-0000")
    with pytest.raises(InputError, match=r"endpoint .* failed: AuthenticationError") as err:
        open_generator(api_spec(server)).chat([question_chat("Hi?")], Sampling(max_tokens=2))
    assert "sk-wrong-key-0000" not in str(err.value)


@pytest.mark.vllm
@pytest.mark.parametrize("strategy", [name for name in builtin_names() if not finetuned(name)])
def test_every_strategy_summarises_through_the_endpoint(server, api_key, strategy):
    """Each built-in strategy but the finetuned ones (a local model's adapter) with the hosted
    model as summariser and subject: what the DAG's summary jobs run, in this process."""
    table = run_strategy(strategy, open_generator(api_spec(server)))
    assert table["error"].isna().all(), table["error"].tolist()
    assert table["summary"].notna().all() and (table["prompt_tokens"] > 0).all()


def api_project(tmp_path: Path, base_url: str, strategies: list[str]) -> Path:
    """The smoke project with the tiny model behind the endpoint as subject and summariser."""
    project = copy_project(tmp_path / "p")
    config = read_config_file(project / "config/smoke.yaml")
    config["run"] = "api"
    config["models"]["tiny-api"] = {k: v for k, v in api_spec(base_url).items() if k != "name"}
    config["subjects"] = ["tiny-api"]
    config["summarizer"] = None
    config["answers"]["choice_truth"] = "samples"  # an endpoint gives no letter probabilities
    config["summaries"]["strategies"] = strategies
    config["summaries"]["plugins"]["echo"] = "tests.test_strategies_plugins:echo_plugin"
    (project / "config/api.yaml").write_text(yaml.safe_dump(config))
    return project


def summary_targets(strategies: list[str]) -> list[str]:
    return [f"results/api/smoke/tiny-api/summaries/{s}.parquet" for s in strategies]


def snakemake_api(project: Path, *args: str, check: bool = True):
    options = ["--configfile", "config/api.yaml", "--cores", "2", "--resources", "gpu=1"]
    return run(["snakemake", *args, *options], project, check=check)  # targets before --resources


@pytest.mark.vllm
@pytest.mark.workflow
def test_dag_with_hosted_subject_and_summariser(server, tmp_path, monkeypatch):
    """Answers and summaries (the baseline, fresh answers summarised, a plug-in) come from the
    endpoint; the key leaks nowhere."""
    monkeypatch.setenv(KEY_ENV, KEY)
    strategies = ["greedy", "sample_and_summarize", "echo"]
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
    config = read_config_file(project_config)
    config["models"]["tiny-api"]["base_url"] = f"http://127.0.0.1:{free_port()}/v1"  # closed port
    project_config.write_text(yaml.safe_dump(config))
    kept = (project / summary_targets(["sample_and_summarize"])[0]).read_bytes()
    (project / summary_targets(["greedy"])[0]).unlink()
    result = snakemake_api(project, *summary_targets(["greedy"]), check=False)
    assert result.returncode != 0
    log = (project / "logs/api/summarize/smoke/tiny-api/greedy.log").read_text()
    assert "error: strategy 'greedy': model 'tiny-api': endpoint http://127.0.0.1:" in log
    assert "APIConnectionError" in log
    assert (project / summary_targets(["sample_and_summarize"])[0]).read_bytes() == kept


# --- a stub endpoint: broken, short, slow and overloaded responses -----------------------------


@dataclass
class Reply:
    """One scripted HTTP response of the stub endpoint."""

    body: bytes | dict
    status: int = 200
    content_type: str = "application/json"
    delay: float = 0.0


def completion(n: int) -> dict:
    """A chat completion body with ``n`` choices."""
    choices = [
        {"index": i, "message": {"role": "assistant", "content": f"answer {i}"}} for i in range(n)
    ]
    usage = {"prompt_tokens": 5, "completion_tokens": 2 * n, "total_tokens": 5 + 2 * n}
    return {"id": "c", "object": "chat.completion", "choices": choices, "usage": usage}


def null_content(body: dict) -> dict:
    """``body`` with its last choice's content null (a reasoning model's, cut short)."""
    *kept, last = body["choices"]
    return {**body, "choices": [*kept, {**last, "message": {**last["message"], "content": None}}]}


class Stub:
    """Answers each request with the next scripted :class:`Reply` (the last one repeats)."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                reply = stub.replies[min(stub.requests, len(stub.replies) - 1)]
                stub.requests += 1
                time.sleep(reply.delay)
                body = reply.body
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up waiting (timeout)
                    pass

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def serve(self, *replies: Reply) -> None:
        self.replies, self.requests = list(replies), 0


@pytest.fixture
def stub() -> Iterator[Stub]:
    endpoint = Stub()
    thread = threading.Thread(target=endpoint.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield endpoint
    endpoint.server.shutdown()
    endpoint.server.server_close()


def ask(stub: Stub, n: int = 3, **settings) -> str | None:
    """The error of one chat sampled ``n`` times from the stub (``None``: it succeeded)."""
    generator = open_generator(api_spec(stub.url, api_key_env=None, **settings))
    (generation,) = generator.chat([question_chat("Hi?")], Sampling(n=n, max_tokens=4))
    assert generation.error or len(generation.texts) == n
    return generation.error


HTML_502 = Reply(b"<html><body><h1>502 Bad Gateway</h1></body></html>", 502, "text/html")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply(completion(0)), "endpoint returned 0 of 3 choices"),
        (Reply(completion(2)), "endpoint returned 2 of 3 choices"),
        (Reply({**completion(3), "choices": None}), "endpoint sent no choices"),
        (Reply(null_content(completion(3))), "endpoint returned a choice without text"),
        (Reply(b'{"id": "c", "choices": [{"ind'), "endpoint sent malformed JSON"),
        (
            Reply(b"<html>maintenance</html>", content_type="text/html"),
            "endpoint sent no choices: <html>",
        ),
        (HTML_502, "endpoint failed the request: InternalServerError: Error code: 502"),
        (Reply(completion(3), delay=3), "endpoint failed the request: APITimeoutError"),
    ],
    ids=[
        "empty-choices",
        "too-few-choices",
        "no-choices",
        "null-content",
        "truncated-json",
        "html-200",
        "html-502",
        "slow",
    ],
)
def test_a_bad_response_fails_its_prompt_with_the_reason(stub, reply, expected):
    stub.serve(reply)
    error = ask(stub, timeout=0.5, max_retries=1)
    assert error.startswith(expected) and "\n" not in error and len(error) <= 300, error
    retried = reply.status >= 500 or reply.delay
    assert stub.requests == (2 if retried else 1)


def test_overload_is_retried_with_backoff_then_succeeds(stub):
    stub.serve(Reply({"error": {"message": "slow down"}}, 429), HTML_502, Reply(completion(3)))
    start = time.monotonic()
    assert ask(stub, max_retries=2) is None
    assert stub.requests == 3 and time.monotonic() - start >= 0.5  # two backoffs


def test_each_response_is_judged_on_its_own(stub):
    stub.serve(Reply(completion(2)), Reply(completion(1)), Reply(completion(2)))
    generator = open_generator(api_spec(stub.url, api_key_env=None, max_concurrency=1))
    chats = [question_chat(q) for q in ("A?", "B?", "C?")]
    first, short, last = generator.chat(chats, Sampling(n=2, max_tokens=4))
    assert first.texts == last.texts == ["answer 0", "answer 1"] and first.prompt_tokens == 5
    assert short.texts == [] and short.error == "endpoint returned 1 of 2 choices"


def hosted_config(**changes) -> dict:
    """A config whose subject ``api`` is served by an endpoint and judged by ``local``."""
    api = {"path": "gpt", "backend": "openai", "base_url": "http://127.0.0.1:1/v1"}
    config = {
        "run": "t",
        "models": {"api": api, "local": {"path": "m"}},
        "subjects": ["api"],
        "judges": ["local"],
        "datasets": {"d": {"source": "local", "path": "q.jsonl"}},
    }
    return {**config, **changes}


def test_answers_job_on_short_responses_stops_with_one_quiet_line(stub, tmp_path):
    """Too few choices fail every question; the job stops with one error line, and only its own
    progress lines before it (no request logs)."""
    stub.serve(Reply(completion(1)))
    config = hosted_config(answers={"num_answers": 2})
    config["models"]["api"] |= {"base_url": stub.url, "max_retries": 0}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    questions = pd.DataFrame(
        {"id": ["a", "b"], "question": ["Question: A?", "Question: B?"], "dataset": "d"}
    ).assign(source_index=[0, 1], choices=None, gold=None)
    write_table("questions", questions, tmp_path / "q.pq")
    args = ["answers", "--config", "c.yaml", "--subject", "api", "--questions", "q.pq"]
    result = run(["selfreflect", *args, "--out", "a.pq"], tmp_path, check=False)
    assert result.returncode == 1 and stub.requests == 2
    *progress, error = result.stderr.splitlines()
    assert error == (
        "error: answers of api: 2 of 2 questions failed, more than max_failed_share=0.5:"
        " 2x 'endpoint returned 1 of 4 choices'"
    )
    assert all(line.startswith("INFO selfreflect.progress: ") for line in progress), progress
    assert not (tmp_path / "a.pq").exists()


def test_openai_model_without_base_url_is_a_config_error():
    config = {
        "run": "t",
        "models": {"api": {"path": "gpt", "backend": "openai", "timeout": 30}},
        "subjects": ["api"],
        "judges": ["api"],
        "datasets": {"d": {"source": "local", "path": "q.jsonl"}},
    }
    with pytest.raises(ConfigError, match=r"^c\.yaml: models\.api\.base_url: required"):
        validate_config(config, source="c.yaml")
    config["models"]["api"]["timeout"] = 0
    with pytest.raises(ConfigError, match=r"^c\.yaml: models\.api\.timeout: "):
        validate_config(config, source="c.yaml")


def test_an_openai_model_judges_nothing():
    """The probe's: an openai judge passed every check and failed after sampling and summaries
    with "model directory not found"."""
    validate_config(hosted_config(), source="c.yaml")
    finetune = {"judge": "api"}
    for changes, key in [
        ({"judges": ["api"]}, "judges"),
        ({"finetune": finetune}, "finetune.judge"),
    ]:
        with pytest.raises(ConfigError) as err:
            validate_config(hosted_config(**changes), source="c.yaml")
        assert str(err.value) == (
            f"c.yaml: {key}: 'api' is served by backend openai, which samples and summarises"
            " only; a judge needs the model's weights (backend hf or vllm)"
        )


def test_an_openai_subject_on_multiple_choice_questions_samples_their_truth():
    """The probe's: the MC truth by logprobs crashed the answers job with a traceback."""
    mmlu = {"d": {"source": "local", "path": "q.jsonl"}, "m": {"source": "mmlu"}}
    with pytest.raises(ConfigError) as err:
        validate_config(hosted_config(datasets=mmlu), source="c.yaml")
    assert str(err.value) == (
        "c.yaml: answers.choice_truth: logprobs reads the subject's own letter probabilities,"
        " which subject 'api' (backend openai) does not give on multiple-choice dataset 'm'; set"
        " choice_truth: samples"
    )
    sampled = {"choice_truth": "samples"}
    validate_config(hosted_config(datasets=mmlu, answers=sampled), source="c.yaml")


def test_pasted_key_is_not_echoed_when_its_variable_is_missing():
    """A key that matches the variable-name pattern (hf_...) is not echoed either."""
    from selfreflect.backends.openai_engine import api_key
    from selfreflect.errors import InputError

    with pytest.raises(InputError) as err:
        api_key({"name": "m", "api_key_env": "hf_AbCdEfSecret123"})
    assert "hf_AbCdEfSecret123" not in str(err.value)
    assert "name not shown" in str(err.value)


def test_a_variable_name_with_a_trailing_line_break_is_not_echoed():
    """The name check matches the whole name: "KEY\n" (a pasted value) is not shown as one."""
    from selfreflect.backends.openai_engine import api_key
    from selfreflect.errors import InputError

    with pytest.raises(InputError, match="name not shown"):
        api_key({"name": "m", "api_key_env": "SELFREFLECT_UNSET_KEY\n"})


def test_an_endpoints_error_inside_a_plugin_is_reported_as_the_endpoints(stub):
    """A plug-in's `ctx.fresh_answers()` from an endpoint refusing the key: the job's error is
    the endpoint's, as a built-in strategy's is, not "plug-in … raised InputError" at a line of
    the backend's code."""
    stub.serve(Reply({"error": {"message": "invalid key"}}, 401))
    subject = open_generator(api_spec(stub.url, api_key_env=None, max_retries=0))
    plugin = {"fresh": "tests.test_strategies_plugins:fresh_answers_only"}
    endpoint = r"model 'tiny-api': endpoint \S+ failed: AuthenticationError: Error code: 401"
    for strategy, plugins in (("fresh", plugin), ("concatenated_answers", {})):
        with pytest.raises(StrategyError) as err:
            config = summaries_config(plugins=plugins)
            run_strategy(strategy, None, config=config, subject=subject)
        assert re.fullmatch(f"strategy '{strategy}': {endpoint} - invalid key", str(err.value))
