"""The tiny model loads in transformers and vLLM and supports the chat calls the SPEC needs."""

import filecmp
import os
import shutil
import stat
import subprocess

import pytest

from selfreflect.chat import question_chat
from selfreflect.families import CORRECTED, PromptFormat, detect_family
from selfreflect.fileio import OWNER_MARKER, SNAKEMAKE_STAMP
from selfreflect.tiny_model import build_tiny_model
from tests.assertions import one_line_error, snapshot


@pytest.fixture(scope="module")
def tokenizer(tiny_model):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


@pytest.fixture(scope="module")
def fmt(tokenizer):
    return PromptFormat(tokenizer, detect_family("tiny"), CORRECTED)


def render(fmt, chat, **kwargs):
    return fmt.render(chat, thinking=True, **kwargs)


def test_build_is_deterministic(tiny_model, tmp_path):
    again = build_tiny_model(tmp_path / "tiny")
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert filecmp.cmp(tiny_model / name, again / name, shallow=False)


def test_files_get_the_modes_of_the_umask(tiny_model):
    """Every file is readable as the umask allows (safetensors alone would write 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in tiny_model.iterdir()} == {
        f.name: 0o666 & ~umask for f in tiny_model.iterdir()
    }


def test_architecture(tiny_model):
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(tiny_model)
    assert config.model_type == "qwen2"
    assert config.head_dim == 64


def test_chat_template_roles_and_generation_prompt(fmt):
    text = render(fmt, question_chat("Question: Who?"))
    assert text.startswith("<|im_start|>system\nYou are a friendly chatbot")
    assert "<|im_start|>user\nQuestion: Who?<|im_end|>\n" in text
    assert text.endswith("<|im_start|>assistant\n")


def test_continue_final_message_extends_generation_prompt(fmt):
    chat = [*question_chat("Question: Who?"), {"role": "assistant", "content": "Paris"}]
    continued = render(fmt, chat, continue_final_message=True)
    prompt = render(fmt, chat[:-1])
    assert continued == prompt + "Paris"
    assert fmt.encode(continued)[: len(fmt.encode(prompt))] == fmt.encode(prompt)


def test_multi_turn_and_thinking_switch(fmt):
    chat = [
        *question_chat("Q?"),
        {"role": "assistant", "content": "A"},
        {"role": "user", "content": "More?"},
    ]
    text = render(fmt, chat)
    assert text.count("<|im_start|>") == 5
    assert fmt.render(chat, thinking=False).endswith("<think>\n\n</think>\n\n")


def test_no_special_tokens_added(fmt, tokenizer):
    text = render(fmt, question_chat("Q?"))
    assert tokenizer.decode(fmt.encode(text)) == text


def test_loads_in_transformers(tiny_model, tokenizer, fmt):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    ids = torch.tensor([fmt.encode(render(fmt, question_chat("Q?")))])
    logits = model(ids).logits
    assert logits.shape == (1, ids.shape[1], len(tokenizer))


def test_loads_in_vllm(vllm_engine, tokenizer, fmt):
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    ids = fmt.encode(render(fmt, question_chat("Q?")))
    params = SamplingParams(max_tokens=1, logprobs=-1, temperature=1.0)
    output = vllm_engine.generate([TokensPrompt(prompt_token_ids=ids)], params, use_tqdm=False)
    assert len(output[0].outputs[0].logprobs[0]) == len(tokenizer)


@pytest.mark.parametrize("owner", [None, "selfreflect export-answers"])
def test_replaces_no_folder_that_is_not_its_own(tmp_path, owner):
    """A folder of someone's files, or another command's output: refused before any model is
    built, every file as it was."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "README.md").write_text("mine")
    if owner:
        (out / OWNER_MARKER).write_text(owner)
    before = snapshot(tmp_path)
    result = subprocess.run(
        ["selfreflect", "tiny-model", "--out", str(out)], capture_output=True, text=True
    )
    whose = f"was written by {owner}" if owner else f"has no {OWNER_MARKER} marker"
    one_line_error(result, f"{out}: exists and {whose}")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("out", [".", ".."])
def test_replaces_no_folder_holding_the_working_directory(tiny_model, tmp_path, out):
    """Its own earlier output, run from inside it: refused (the swap would empty the folder
    the command runs in), every file as it was; so is a seed no library takes."""
    own = tmp_path / "tiny"
    shutil.copytree(tiny_model, own)
    before = snapshot(tmp_path)
    result = subprocess.run(
        ["selfreflect", "tiny-model", "--out", out], capture_output=True, text=True, cwd=own
    )
    one_line_error(result, f"{out}: holds the working directory")
    assert snapshot(tmp_path) == before
    big = ["selfreflect", "tiny-model", "--out", str(tmp_path / "t"), "--seed", str(2**64)]
    result = subprocess.run(big, capture_output=True, text=True)
    assert result.returncode == 2 and "not in the range 0<=x<=4294967295" in result.stderr
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("added", ["NOTES.md", "set/README.md"])
def test_replaces_no_own_output_that_something_else_was_added_to(tiny_model, tmp_path, added):
    """Its own earlier output holding a file a person added, or another command's output
    moved in: refused with one line naming the entry, every file as it was."""
    out = tmp_path / "tiny"
    shutil.copytree(tiny_model, out)
    (out / added).parent.mkdir(exist_ok=True)
    (out / added).write_text("mine")
    if added.startswith("set/"):
        (out / "set" / OWNER_MARKER).write_text("selfreflect export-answers\n")
    before = snapshot(tmp_path)
    result = subprocess.run(
        ["selfreflect", "tiny-model", "--out", str(out)], capture_output=True, text=True
    )
    one_line_error(result, f"{out}: holds {added.split('/')[0]}, which selfreflect tiny-model")
    assert snapshot(tmp_path) == before


def test_replaces_its_own_earlier_output(tiny_model, tmp_path):
    """As a workflow job left it too: Snakemake's timestamp file is in it."""
    out = tmp_path / "tiny"
    shutil.copytree(tiny_model, out)
    (out / "model.safetensors").write_bytes(b"stale")
    (out / SNAKEMAKE_STAMP).touch()
    result = subprocess.run(
        ["selfreflect", "tiny-model", "--out", str(out)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert filecmp.cmp(tiny_model / "model.safetensors", out / "model.safetensors", shallow=False)
