"""The original tool's algorithm, kept as the benchmark's baseline.

One full forward pass per target token over everything before it (no cache reuse), and each
task's full-vocabulary vector copied to the host; all of a question's vectors are held there
before any distance is taken. (The original stored them in float16; float32 here, so the
baseline is exact and comparable with the other judges.)
"""

from __future__ import annotations

from typing import Any

import torch

from selfreflect.families import PromptFormat
from selfreflect.scoring.contexts import ContextTasks
from selfreflect.scoring.forwards import Judge
from selfreflect.scoring.hf_judge import load_judge_model


class ReferenceJudge(Judge):
    def __init__(
        self, name: str, fmt: PromptFormat, model: Any, max_model_len: int | None = None
    ) -> None:
        self.name = name
        self.format = fmt
        self.tokenizer = fmt.tokenizer
        self.model = model.eval()
        self.batch_size = None  # the whole question at once
        self.max_model_len = max_model_len or model.config.max_position_embeddings

    @classmethod
    def open(
        cls, spec: dict[str, Any], settings: dict[str, Any], llm: Any = None
    ) -> ReferenceJudge:
        fmt, model = load_judge_model(spec)
        return cls(spec["name"], fmt, model, spec["max_model_len"])

    def logits(self, tasks: ContextTasks, rows: range) -> torch.Tensor:
        vectors = []
        for k in rows:
            sequence = tasks.sequences[k]
            for j in range(tasks.starts[k], len(sequence)):
                ids = torch.tensor([sequence[:j]], device=self.model.device)
                self.forward_tokens += j
                logits = self.model(input_ids=ids, logits_to_keep=1).logits[0, -1]
                vectors.append(logits.float().cpu())
        return torch.stack(vectors)

    def close(self) -> None:
        del self.model
