#!/usr/bin/env bash
# A lent GPU in one call (docs/performance.md, "On a lent GPU").
#
#   bash scripts/device.sh prepare [folder]   # here, in the repository's root: the DAG's
#       # requirements as wheels in <folder>/.whl, wordfreq with its English word lists only in
#       # <folder>/.device/site, this checkout's commit in <folder>/.device/commit (folder: the
#       # repository's root)
#   bash scripts/device.sh run [device-run options]   # there, carrying .whl and .device
#
# A lent machine has torch and transformers but no network, and takes at most 64 MiB. `prepare`
# downloads, for Python $DEVICE_PYTHON (default 3.12, the lent machines' so far), a wheel of each
# package that Snakemake, jsonschema, datasets, wordfreq and the reports need, at the version
# installed here, leaving out those too large to carry (HEAVY: a lent machine has had them).
# `run` installs the wheels of the packages the machine lacks, then runs `selfreflect bench
# device-run`: with no options, on CUDA at the paper's shape and N, writing $OUT/device.json.
set -euo pipefail

DEVICE_PYTHON=${DEVICE_PYTHON:-3.12}
NEEDS="snakemake jsonschema datasets matplotlib tabulate psutil jinja2 wordfreq"
HEAVY="numpy pandas pyarrow scipy pulp hf-xet torch transformers"
PAPER_CALL="--device cuda --preset qwen2.5-7b --answers 50 --conditioning 50"

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
    local folder=${1:-.}
    local wheels=$folder/.whl site=$folder/.device/site downloads pins
    rm -rf "$wheels" "$folder/.device"
    mkdir -p "$wheels" "$site"
    downloads=$(mktemp -d)
    mapfile -t pins < <(requirement_closure)
    # in one pip call: each package's wheel for $DEVICE_PYTHON, or its sdist where it has none
    python3 -m pip download -q --no-deps --prefer-binary --python-version "$DEVICE_PYTHON" \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$downloads" "${pins[@]}"
    python3 -m zipfile -e "$downloads"/wordfreq-*.whl "$site"  # a 57 MB wheel: its English lists
    rm "$downloads"/wordfreq-*.whl
    find "$site/wordfreq/data" -type f ! -name '*_en.*' -delete
    local sdist
    for sdist in "$downloads"/*.tar.gz "$downloads"/*.zip; do
        [[ -e $sdist ]] || continue
        python3 -m pip wheel -q --no-deps -w "$wheels" "$sdist"  # an sdist: pure Python
        rm "$sdist"
    done
    mv "$downloads"/*.whl "$wheels"
    rm -rf "$downloads"
    # this package's wheel, built in a copy: a build writes into the tree it builds
    local tree
    tree=$(mktemp -d)
    python3 -c 'import pathlib, sys; from selfreflect.bench.real_run import copy_tracked
copy_tracked(pathlib.Path(sys.argv[1]))' "$tree"
    python3 -m pip wheel -q --no-deps -w "$wheels" "$tree"
    rm -rf "$tree"
    python3 -c 'from selfreflect.bench.scorer import commit; print(commit())' \
        > "$folder/.device/commit"  # as the records name it
    du -sh "$wheels" "$folder/.device"
}

run() {
    local site lacking
    site=$(mktemp -d)
    # the wheels of the distributions this machine lacks; those not built for its Python named
    lacking=$(python3 - <<'EOF'
import sys
from importlib import metadata
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename

supported = set(sys_tags())
for wheel in sorted(Path(".whl").glob("*.whl")):
    name, _, _, tags = parse_wheel_filename(wheel.name)
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        if tags & supported:
            print(wheel)
        else:
            print(f"not for this Python, left out: {wheel.name}", file=sys.stderr)
EOF
)
    echo "installing the wheels of what this machine lacks:" ${lacking:-none}
    if [[ -n $lacking ]]; then
        python3 -m pip install -q --no-index --no-deps --target "$site" $lacking
    fi
    export PYTHONPATH=$site:$PWD/.device/site${PYTHONPATH:+:$PYTHONPATH} PATH=$site/bin:$PATH
    # the DAG runs in a copy of the files git lists: list this tree's (a copy may have no .git,
    # or an older one); the records name the commit `prepare` ran on (git describe: its tag)
    git rev-parse --is-inside-work-tree &>/dev/null || git init -q
    git add -A
    if [[ -f .device/commit ]]; then
        git -c user.name=device -c user.email=device@localhost commit -q --allow-empty \
            --no-verify -m "the files carried from $(cat .device/commit)"
        git -c user.name=device -c user.email=device@localhost tag -f -a \
            -m "prepared here" "$(cat .device/commit)" > /dev/null
    fi
    if [[ $# -eq 0 ]]; then
        set -- $PAPER_CALL --json "$OUT/device.json"
    fi
    selfreflect bench device-run "$@"
}

case ${1:-} in
    prepare | run) "$@" ;;
    *) echo "usage: bash scripts/device.sh prepare [folder] | run [device-run options]" >&2; exit 2 ;;
esac
