#!/usr/bin/env bash
# Main job: set up .venv (see scripts/setup.sh), then run the example, a two-layer MLP.
set -euo pipefail

# shellcheck source=scripts/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

"$ACCY_PYTHON" -m accy backends
"$ACCY_PYTHON" examples/mlp.py
