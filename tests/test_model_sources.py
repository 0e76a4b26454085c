"""Model sources: a GGUF file, or one shipped inside an installed package, converted once."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from selfreflect.config import converted_models, validate_config
from selfreflect.errors import ConfigError, InputError
from selfreflect.fileio import OWNER_MARKER, file_digest
from selfreflect.model_sources import SOURCE_FILE, gguf_file, package_chunks, package_file
from tests.assertions import one_line_error, snapshot
from tests.conftest import (
    GEMMA_FILE,
    GEMMA_PACKAGES,
    QWEN_FILE,
    QWEN_PACKAGES,
    QWEN_SHA256,
    SMOLLM2_FILE,
    SMOLLM2_PACKAGE,
)


def _config(model: dict) -> dict:
    return {
        "models": {"m": model},
        "subjects": ["m"],
        "judges": ["m"],
        "datasets": {"d": {"source": "local", "path": "q.jsonl"}},
    }


def test_gguf_model_is_converted_into_results_models():
    config = validate_config(_config({"gguf": SMOLLM2_FILE, "package": SMOLLM2_PACKAGE}))
    assert config["models"]["m"]["path"] == "results/models/m"
    assert converted_models(config) == ["m"]
    assert converted_models(validate_config(_config({"path": "some/model"}))) == []


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ({}, "models.m"),
        ({"package": SMOLLM2_PACKAGE, "path": "x"}, "models.m.package: needs `gguf`"),
        ({"gguf": "x.gguf", "path": "elsewhere"}, "models.m.path: a gguf model is converted"),
    ],
)
def test_model_source_errors_name_the_key(model, message):
    with pytest.raises(ConfigError, match=message):
        validate_config(_config(model), source="c.yaml")


def test_package_file_is_found_without_importing_the_package():
    path = package_file(SMOLLM2_PACKAGE, SMOLLM2_FILE)
    assert path.is_file() and path.stat().st_size > 50 * 2**20


@pytest.mark.parametrize(
    ("package", "name", "message"),
    [
        ("no-such-package-xyz", "a.gguf", "package 'no-such-package-xyz' is not installed"),
        (SMOLLM2_PACKAGE, "missing.gguf", "no file named 'missing.gguf'"),
    ],
)
def test_package_file_errors(package, name, message):
    with pytest.raises(InputError, match=message):
        package_file(package, name)


GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"  # the package's


def test_gguf_chunks_across_packages_are_joined_in_order():
    spec = validate_config(_config({"gguf": GEMMA_FILE, "package": GEMMA_PACKAGES}))["models"]["m"]
    with gguf_file(spec) as path:
        assert path.name == GEMMA_FILE and file_digest(path) == GEMMA_SHA256
    assert not path.exists()
    with pytest.raises(InputError, match=f"package '{SMOLLM2_PACKAGE}': no chunk of"):
        package_chunks([SMOLLM2_PACKAGE], GEMMA_FILE)


def test_numbered_part_packages_join_into_the_file_their_sha256_names():
    entry = {"gguf": QWEN_FILE, "package": QWEN_PACKAGES, "sha256": QWEN_SHA256}
    spec = validate_config(_config(entry))["models"]["m"]
    with gguf_file(spec) as path:
        assert path.stat().st_size == 491_400_064
    reordered = {**spec, "package": [*QWEN_PACKAGES[1:], QWEN_PACKAGES[0]]}
    with (
        pytest.raises(
            InputError,
            match=rf"{QWEN_FILE} \(from .*\): sha256 is [0-9a-f]{{64}}, expected {QWEN_SHA256}",
        ),
        gguf_file(reordered),
    ):
        pass


def test_converted_folder_loads_and_records_its_source(smollm2_model):
    from transformers import AutoConfig, AutoTokenizer

    from selfreflect.provenance import model_fingerprint

    source = json.loads((smollm2_model / SOURCE_FILE).read_text())
    assert source["package"] == SMOLLM2_PACKAGE and len(source["sha256"]) == 64
    assert source["dtype"] == "float32"
    config = AutoConfig.from_pretrained(smollm2_model)
    assert config.head_dim == 64 and config.vocab_size == 49152
    assert not hasattr(config, "quantization_config")
    assert AutoTokenizer.from_pretrained(smollm2_model).eos_token == "<|im_end|>"
    assert model_fingerprint(str(smollm2_model))["sha256"]
    # the same bytes with HF_HUB_OFFLINE set or not (it would set this key to true)
    tokenizer_config = json.loads((smollm2_model / "tokenizer_config.json").read_text())
    assert tokenizer_config["local_files_only"] is True


def test_vllm_reads_auto_dtype_as_the_checkpoint_dtype(smollm2_model):
    from selfreflect.backends.vllm_engine import checkpoint_dtype

    # vLLM's own `auto` would run this float32 checkpoint in 16 bits, unlike the hf backend
    assert checkpoint_dtype({"dtype": "auto", "path": str(smollm2_model)}) == "float32"
    assert checkpoint_dtype({"dtype": "bfloat16", "path": str(smollm2_model)}) == "bfloat16"


def test_convert_model_replaces_no_folder_that_is_not_its_own(tmp_path):
    """Refused before the GGUF file is read, every file as it was."""
    (tmp_path / "c.yaml").write_text(
        yaml.safe_dump(_config({"gguf": SMOLLM2_FILE, "package": SMOLLM2_PACKAGE}))
    )
    out = tmp_path / "config"
    out.mkdir()
    for name in ("smoke.yaml", "real.yaml"):
        (out / name).write_text(f"{name}'s settings")
    before = snapshot(tmp_path)
    command = ["selfreflect", "convert-model", "--config", "c.yaml", "--model", "m"]
    result = subprocess.run(
        [*command, "--out", "config"], capture_output=True, text=True, cwd=tmp_path
    )
    one_line_error(result, f"config: exists and has no {OWNER_MARKER} marker")
    assert snapshot(tmp_path) == before


def test_a_hub_id_the_cache_and_hub_lack_fails_as_the_job_opens_it(tmp_path, monkeypatch):
    """A missing local folder that reads as a hub id (``models/qwen``) fails in one line naming
    it, before any loader (the tests run offline: HF_HUB_OFFLINE); one in the cache opens, and
    an existing local folder of that shape is not looked for in the cache or hub."""
    from huggingface_hub import constants

    from selfreflect.backends.registry import open_generator
    from selfreflect.model_sources import check_loadable
    from selfreflect.scoring.registry import open_judge

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    spec = {"name": "m", "backend": "hf", "path": "models/qwen"}
    missing = r"^models/qwen: model directory not found, nor a Hugging Face model of that id in"
    with pytest.raises(InputError, match=missing + r" the cache \(HF_HUB_OFFLINE is set\) \("):
        open_generator(spec)
    with pytest.raises(InputError, match=missing):
        open_judge(spec, {"backend": "hf", "dtype": "auto"})
    cached = tmp_path / "hub/models--models--qwen"
    (cached / "snapshots/0123abcd").mkdir(parents=True)
    (cached / "snapshots/0123abcd/config.json").write_text("{}")
    (cached / "refs").mkdir()
    (cached / "refs/main").write_text("0123abcd")
    check_loadable("models/qwen")  # in the cache: the loader reads it from there
    (tmp_path / "models/local").mkdir(parents=True)
    (tmp_path / "models/local/config.json").write_text("{}")
    check_loadable("models/local")  # a local folder, though it reads as a hub id: not looked up


def test_a_model_folder_needs_config_json_and_a_file_is_no_hub_id(tmp_path, monkeypatch):
    """A folder without config.json is named (not left to the loader); a file at a path that
    reads as a hub id (``org/model``) is a local path, so no model folder."""
    from selfreflect.model_sources import check_model_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "org").mkdir()
    with pytest.raises(InputError, match=r"^org: model directory has no config\.json$"):
        check_model_path("org")
    (tmp_path / "org" / "model").write_text("not a folder")
    with pytest.raises(InputError, match=r"^org/model: model directory not found$"):
        check_model_path("org/model")


def _distribution(site, name: str, files: dict[str, bytes | None]) -> None:
    """An installed distribution ``name`` in the folder ``site`` whose RECORD lists ``files``
    in that order (a file whose content is None is listed but absent)."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "RECORD").write_text("".join(f"{file},,\n" for file in files))
    for file, content in files.items():
        if content is not None:
            (site / file).parent.mkdir(parents=True, exist_ok=True)
            (site / file).write_bytes(content)


def test_a_package_file_is_one_listed_file_that_is_there(tmp_path, monkeypatch):
    """A name two files of the package share is refused (which one is meant is a guess), and
    so is a listed file missing from the installed folder."""
    _distribution(
        tmp_path, "fake-weights", {"a/m.gguf": b"a", "b/m.gguf": b"b", "c/gone.gguf": None}
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert package_file("fake-weights", "a/m.gguf").read_bytes() == b"a"
    with pytest.raises(InputError, match=r"^package 'fake-weights': 2 files named 'm\.gguf'$"):
        package_file("fake-weights", "m.gguf")
    with pytest.raises(InputError, match=r"'c/gone\.gguf' is listed but missing at"):
        package_file("fake-weights", "gone.gguf")


def test_chunks_are_joined_in_name_order_whatever_the_record_lists(tmp_path, monkeypatch):
    """A package's chunks are taken in name order (RECORD may list them in any), and only its
    ``partNN.bin`` files, not other files whose names start with ``part``."""
    chunks = {"w/part01.bin": b"B", "w/partial.json": b"{}", "w/part00.bin": b"A"}
    _distribution(tmp_path, "fake-parts-one", chunks)
    _distribution(tmp_path, "fake-parts-two", {"x/m.gguf.part1": b"D", "x/m.gguf.part0": b"C"})
    monkeypatch.syspath_prepend(str(tmp_path))
    paths = package_chunks(["fake-parts-one"], "m.gguf")
    assert [path.read_bytes() for path in paths] == [b"A", b"B"]
    paths = package_chunks(["fake-parts-one", "fake-parts-two"], "m.gguf")
    assert b"".join(path.read_bytes() for path in paths) == b"ABCD"
