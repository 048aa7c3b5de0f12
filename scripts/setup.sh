# Set up accy's development environment in .venv; sourced by .ci/run and scripts/setup-and-run.sh.
#
# What it does, from the repository root:
#   1. installs Mesa's Vulkan drivers (lavapipe), the Vulkan loader and spirv-tools with apt, so
#      the Vulkan backend really runs and SPIR-V is validated, and PoCL (an OpenCL CPU device),
#      the OpenCL ICD loader and the SPIR-V -> SPIR translator llvm-spirv-15 for the OpenCL
#      backend, and binutils (ld: the CPU backend links programs into shared objects that a
#      warm cache loads with dlopen, without llvmlite); a failure there (no root, no network,
#      not Debian) is only a warning: the CPU tests still run;
#   2. creates a clean .venv (no system site-packages: everything accy needs is installed from
#      PyPI, so a green run here is a green run on a fresh machine);
#   3. installs every accy package editable and the test tools, in one pip call so the resolver
#      sees everything at once. The test plugins under tests/plugins/ are not installed: the
#      root conftest.py registers them for the test run only (a user's `accy backends` shows
#      no deliberately broken plugin).
# Afterwards ACCY_ROOT is the repository root and ACCY_PYTHON the venv's python.
# It is meant to be sourced from a script running under `set -euo pipefail`.

ACCY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ACCY_PYTHON="$ACCY_ROOT/.venv/bin/python"
cd "$ACCY_ROOT"

accy_install_system_packages() {
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
            echo "warning: not root and no sudo; skipping apt (Vulkan tests will skip)" >&2
            return 0
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "warning: apt-get not found; skipping system packages (Vulkan tests will skip)" >&2
        return 0
    fi
    if ! { $sudo apt-get update -q \
            && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
               --no-install-recommends mesa-vulkan-drivers libvulkan1 spirv-tools binutils \
               pocl-opencl-icd ocl-icd-libopencl1 llvm-spirv-15 clinfo; }; then
        echo "warning: apt-get failed; continuing without Vulkan/OpenCL drivers and spirv-tools" >&2
    fi
}

accy_create_venv() {
    if [ ! -x "$ACCY_PYTHON" ]; then
        python3 -m venv "$ACCY_ROOT/.venv"
    fi
    local editable=()
    local pkg
    for pkg in accy_core accy_backend_cpu accy_backend_vulkan accy_backend_cuda accy_backend_opencl \
               accy_kernels; do
        if [ -f "$pkg/pyproject.toml" ]; then editable+=(-e "./${pkg%/}"); fi
    done
    "$ACCY_PYTHON" -m pip install --disable-pip-version-check -q \
        "${editable[@]}" pytest pytest-xdist pytest-timeout hypothesis ruff scipy numexpr vulkan jsonschema matplotlib \
        "dask[array]" distributed wheel threadpoolctl
}

accy_install_system_packages
accy_create_venv
