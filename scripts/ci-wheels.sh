#!/usr/bin/env bash
# CI job: what a new user gets from the wheels alone (issue 13, acceptance). Called by .ci/run;
# runs on its own too: `bash scripts/ci-wheels.sh` (PYTHON=python3.x to pick the interpreter).
#
#   1. builds every package as a wheel (pip wheel --no-deps) and checks each wheel's licence
#      metadata;
#   2. installs accy-core + accy-backend-cpu alone into a fresh venv (dependencies from the
#      package index, nothing from this repository's .venv), checks that neither matplotlib
#      nor tqdm came with them, and runs, from outside the repository: the README's first
#      program, `accy profile --suite quick` (progress bar on) and `accy profile report`
#      (plots skipped in one line: matplotlib is absent);
#   3. adds accy-backend-vulkan alone: `accy backends` shows it available when lavapipe is
#      installed, and `accy compile --emit spirv` writes valid SPIR-V, with a device and with
#      none (the loader pointed at no driver);
#   4. adds accy-backend-opencl alone: `accy backends` shows it available when PoCL and
#      llvm-spirv-15 are installed, `opencl: unavailable (no OpenCL platform ...)` with the ICD
#      loader pointed at no driver, and `accy compile --emit spirv` still writes SPIR-V then.
# Everything happens in a temporary folder, removed at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/accy-ci-wheels.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export ACCY_CACHE_DIR="$WORK/cache"
unset PYTHONPATH
step() { echo "== ci-wheels: $*"; }
fail() { echo "ci-wheels: FAILED: $*" >&2; exit 1; }

step "build wheels"
for pkg in accy_core accy_backend_cpu accy_backend_vulkan accy_backend_cuda accy_backend_opencl \
           accy_kernels; do
    "$PYTHON" -m pip wheel --disable-pip-version-check --no-deps -q -w "$WORK/wheels" \
        "$ROOT/$pkg"
done
"$PYTHON" - "$WORK/wheels" <<'EOF'
import sys, zipfile, pathlib
wheels = sorted(pathlib.Path(sys.argv[1]).glob("*.whl"))
assert len(wheels) == 6, wheels
for w in wheels:
    z = zipfile.ZipFile(w)
    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    text = z.read(meta).decode()
    for field in ("License-Expression: Apache-2.0",
                  "Description-Content-Type: text/markdown"):
        assert field in text, f"{w.name}: no {field!r} in METADATA"
    assert any(n.endswith("licenses/LICENSE") for n in z.namelist()), f"{w.name}: no LICENSE"
    print(f"{w.name}: licence and readme present")
EOF
wheel() { ls "$WORK"/wheels/"$1"-*.whl; }

step "fresh venv: accy-core + accy-backend-cpu"
"$PYTHON" -m venv "$WORK/venv"
BIN="$WORK/venv/bin"
"$BIN/python" -m pip install --disable-pip-version-check -q "$(wheel accy_core)" \
    "$(wheel accy_backend_cpu)"
cd "$WORK"  # nothing from the repository on the path (its folders are namespace packages)
"$BIN/python" -c "
import importlib.util, sys
extra = [m for m in ('matplotlib', 'tqdm', 'accy_backend_vulkan', 'accy_kernels')
         if importlib.util.find_spec(m)]
sys.exit(f'unexpected packages in the fresh venv: {extra}' if extra else 0)"

step "README's first program"
"$BIN/python" - "$ROOT/README.md" > first.py <<'EOF'
import re, sys
blocks = re.findall(r"```python\n(.*?)```", open(sys.argv[1]).read(), re.S)
print(blocks[0])
EOF
"$BIN/python" first.py

step "accy backends"
"$BIN/accy" backends | tee backends.txt
grep -q '^cpu: available' backends.txt || fail "cpu backend not available"
if grep -Eq 'failed|^recording' backends.txt; then fail "plugin failure or testing backend"; fi

step "accy profile --suite quick"
"$BIN/accy" profile --suite quick -o run.jsonl
step "accy profile report (no matplotlib)"
"$BIN/accy" profile report run.jsonl > report.txt 2> report.err
cat report.txt report.err
grep -q 'transformer_block' report.txt || fail "report table lacks transformer_block"
[ "$(wc -l < report.err)" -eq 1 ] && grep -q '^plots skipped: matplotlib' report.err \
    || fail "expected one 'plots skipped' line on stderr"
[ ! -e run_plots ] || fail "plots folder written without matplotlib"
"$BIN/accy" profile report run.jsonl --no-plots > /dev/null

step "add accy-backend-vulkan alone"
"$BIN/python" -m pip install --disable-pip-version-check -q "$(wheel accy_backend_vulkan)"
"$BIN/accy" backends | tee backends.txt
if ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
    grep -q '^vulkan: available' backends.txt || fail "vulkan unavailable although lavapipe is installed"
else
    echo "warning: lavapipe not installed here: only compile-only Vulkan is checked" >&2
fi
cat > prog.accy <<'EOF'
module {
  func @scale_add(%arg0: f32[8], %arg1: f32[8]) -> (f32[8]) {
    %0 = arith.mul %arg0, %arg1 : (f32[8], f32[8]) -> f32[8]
    %1 = arith.add %0, %arg0 : (f32[8], f32[8]) -> f32[8]
    func.return %1 : (f32[8]) -> ()
  }
}
EOF
check_spirv() {
    local f
    for f in "$1"/*.spv; do
        [ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')" = "03022307" ] || fail "$f: not SPIR-V"
        if command -v spirv-val >/dev/null; then spirv-val --target-env vulkan1.3 "$f"; fi
    done
}
step "accy compile --backend vulkan --emit spirv"
"$BIN/accy" compile prog.accy --backend vulkan --emit spirv -o spv
check_spirv spv
step "accy compile --backend vulkan --emit spirv, no Vulkan driver"
VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json \
    "$BIN/accy" compile prog.accy --backend vulkan --emit spirv -o spv-nodev
check_spirv spv-nodev
step "add accy-backend-opencl alone"
"$BIN/python" -m pip install --disable-pip-version-check -q "$(wheel accy_backend_opencl)"
"$BIN/accy" backends | tee backends.txt
if ls /etc/OpenCL/vendors/pocl*.icd >/dev/null 2>&1 && command -v llvm-spirv-15 >/dev/null; then
    grep -q '^opencl: available (pocl' backends.txt || fail "opencl unavailable although PoCL is installed"
else
    echo "warning: PoCL or llvm-spirv-15 not installed here: only compile-only OpenCL is checked" >&2
fi
step "accy compile --backend opencl --emit spirv, no OpenCL platform"
mkdir -p no-icds
OCL_ICD_VENDORS="$PWD/no-icds" "$BIN/accy" backends > backends-no-icd.txt
grep -q '^opencl: unavailable (no OpenCL platform' backends-no-icd.txt \
    || fail "opencl without a platform must say unavailable (no OpenCL platform ...)"
OCL_ICD_VENDORS="$PWD/no-icds" "$BIN/accy" compile prog.accy --backend opencl --emit spirv -o cl-spv
for f in cl-spv/*.spv; do
    [ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')" = "03022307" ] || fail "$f: not SPIR-V"
done
step "passed"
