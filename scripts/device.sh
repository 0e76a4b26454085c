#!/usr/bin/env bash
# A lent GPU in one call (docs/performance.md, "On a lent GPU").
#
#   bash scripts/device.sh prepare   # here: the DAG's requirements as wheels in .whl/, and
#                                    # wordfreq with its English word lists only in .device/site
#   bash scripts/device.sh run [device-run options]   # there, carrying .whl and .device
#
# A lent machine has torch and transformers but no network, and takes at most 64 MiB. `prepare`
# downloads, for Python $DEVICE_PYTHON (default 3.12, the lent machines' so far), a wheel of each
# package that Snakemake, jsonschema, datasets, wordfreq and the reports need, at the version
# installed here, leaving out those too large to carry (HEAVY: a lent machine has had them).
# `run` installs the wheels of the packages the machine lacks, then runs `selfreflect bench
# device-run --device cuda` with the paper's N, writing $OUT/device.json.
set -euo pipefail

DEVICE_PYTHON=${DEVICE_PYTHON:-3.12}
NEEDS="snakemake jsonschema datasets matplotlib tabulate psutil jinja2 wordfreq"
HEAVY="numpy pandas pyarrow scipy pulp hf-xet torch transformers"

requirement_closure() {
    # the installed distributions $NEEDS needs, as name==version, $HEAVY left out
    python3 - "$DEVICE_PYTHON" "$HEAVY" $NEEDS <<'EOF'
import sys
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

python, heavy = sys.argv[1], set(sys.argv[2].split())
env = {"python_version": python, "python_full_version": f"{python}.0", "extra": ""}
todo, seen = list(sys.argv[3:]), {}
while todo:
    name = canonicalize_name(todo.pop())
    if name in seen or name in heavy:
        continue
    seen[name] = metadata.version(name)
    for line in metadata.requires(name) or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(env):
            todo.append(requirement.name)
print("\n".join(f"{name}=={version}" for name, version in sorted(seen.items())))
EOF
}

prepare() {
    rm -rf .whl .device
    mkdir -p .whl .device/site
    for pinned in $(requirement_closure); do
        [[ $pinned == wordfreq==* ]] && continue  # 57 MB: its English lists go to .device
        python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$DEVICE_PYTHON" \
            --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
            --platform manylinux2014_x86_64 -d .whl "$pinned" 2>/dev/null ||
            python3 -m pip wheel -q --no-deps -w .whl "$pinned"  # an sdist only: pure Python
    done
    python3 -m pip wheel -q --no-deps -w .whl .
    python3 -m pip download -q --no-deps -d .device "wordfreq==$(python3 -c \
        'from importlib.metadata import version; print(version("wordfreq"))')"
    (cd .device/site && python3 -m zipfile -e ../wordfreq-*.whl .)
    rm .device/wordfreq-*.whl
    find .device/site/wordfreq/data -type f ! -name '*_en.*' -delete
    du -sh .whl .device
}

run() {
    # the wheels of the distributions this machine lacks
    python3 - > /tmp/lacking.txt <<'EOF'
from importlib import metadata
from pathlib import Path

for wheel in sorted(Path(".whl").glob("*.whl")):
    try:
        metadata.version(wheel.name.split("-")[0])
    except metadata.PackageNotFoundError:
        print(wheel)
EOF
    echo "installing $(wc -l < /tmp/lacking.txt) wheels: $(xargs -n1 basename < /tmp/lacking.txt | tr '\n' ' ')"
    xargs -r python3 -m pip install -q --no-index --no-deps --target /tmp/site < /tmp/lacking.txt
    export PYTHONPATH=/tmp/site:$PWD/.device/site PATH=/tmp/site/bin:$PATH
    git add -A 2>/dev/null || (git init -q && git add -A)  # the DAG copies the listed files
    selfreflect bench device-run --device cuda --preset qwen2.5-7b --answers 50 \
        --conditioning 50 --json "$OUT/device.json" "$@"
}

"$@"
