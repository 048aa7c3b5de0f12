#!/usr/bin/env bash
# Run accy's CUDA tests and benchmarks on a machine with an NVIDIA GPU (no network needed).
#
#   bash scripts/gpu-check.sh [OUT_DIR]        (default OUT_DIR: ./gpu-check-out)
#
# Needs: python3 >= 3.11 with numpy (and pip), an NVIDIA driver. Installs accy's packages from
# this checkout into a fresh venv (--system-site-packages, so an installed pycuda,
# cuda-bindings, CuPy or pytest is reused) with --no-index: nothing is downloaded. Extra
# wheels (pycuda / cuda-bindings / llvmlite / pluggy / platformdirs / rich / pytest / cupy)
# may be dropped into .whl/ (git-ignored) and are installed from there.
# Writes OUT_DIR/summary.json (probe, device, per-step exit codes, test counts, bench lines)
# plus the raw logs. Exit code: 0 when every step passed. Budget: about 8 minutes.
set -u
cd "$(dirname "$0")/.."
OUT=${1:-gpu-check-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
VENV="$OUT/venv"
START=$(date +%s)
log() { echo "[gpu-check $(( $(date +%s) - START ))s] $*"; }

log "venv + install (offline)"
"$PY" -m venv --system-site-packages "$VENV" >"$OUT/install.log" 2>&1
VPY="$VENV/bin/python"
FIND=()
[ -d .whl ] && FIND=(--find-links .whl)
if ls .whl/*.whl >/dev/null 2>&1; then
  "$VPY" -m pip install --no-index "${FIND[@]}" .whl/*.whl >>"$OUT/install.log" 2>&1
fi
PKGS=(accy_core)
for p in accy_backend_cpu accy_backend_cuda accy_kernels; do [ -f "$p/pyproject.toml" ] && PKGS+=("$p"); done
ARGS=()
for p in "${PKGS[@]}"; do ARGS+=(-e "$p"); done
"$VPY" -m pip install --no-index --no-build-isolation "${FIND[@]}" "${ARGS[@]}" >>"$OUT/install.log" 2>&1 \
  || "$VPY" -m pip install --no-index "${FIND[@]}" "${ARGS[@]}" >>"$OUT/install.log" 2>&1 \
  || "$VPY" - "${PKGS[@]}" >>"$OUT/install.log" 2>&1 <<'PYEOF'
# Offline fallback without setuptools/wheel: a .pth entry per package's src/ plus a
# dist-info with its entry points, which is all that plugin discovery reads.
import pathlib, sys, sysconfig, tomllib
site = pathlib.Path(sysconfig.get_paths()["purelib"])
lines = []
for folder in sys.argv[1:]:
    project = tomllib.loads(pathlib.Path(folder, "pyproject.toml").read_text())["project"]
    lines.append(str(pathlib.Path(folder, "src").resolve()))
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = dict(project.get("entry-points", {}))
    if project.get("scripts"):
        groups["console_scripts"] = project["scripts"]
    (info / "entry_points.txt").write_text("".join(
        f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for g, eps in groups.items()))
(site / "accy-checkout.pth").write_text("\n".join(lines) + "\n")
print("installed by .pth fallback:", ", ".join(sys.argv[1:]))
PYEOF
INSTALL_RC=$?

log "probe"
"$VPY" - >"$OUT/probe.json" 2>"$OUT/probe.err" <<'PYEOF'
import json
from accy.plugins import probe_backend
ok, reason = probe_backend("cuda")
info = {}
if ok:
    from accy.plugins import open_backend
    be = open_backend("cuda")
    caps = be.capabilities()
    info = {"device": caps.device_name, "sm": be.target.sm, "ptx_isa": be.target.ptx_isa,
            "libdevice": bool(be.target.libdevice), "binding": be.driver.binding,
            "driver_version": be.info.driver_version,
            "memory_bytes": be.info.total_memory_bytes}
print(json.dumps({"available": ok, "reason": reason, **info}))
PYEOF

run_step() {  # name timeout command...
  local name=$1 limit=$2; shift 2
  log "$name"
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  echo $? >"$OUT/$name.rc"
}
export ACCY_CACHE_DIR="$OUT/cache"
run_step tests_cuda_marked 150 "$VPY" -m pytest -q -m cuda -p no:cacheprovider accy_backend_cuda/tests
run_step tests_programs_cuda 180 "$VPY" -m pytest -q -p no:cacheprovider -k cuda tests/programs
[ -d tests/kernels ] && run_step tests_kernels_cuda 120 "$VPY" -m pytest -q -p no:cacheprovider -k cuda tests/kernels
for b in bench/*.py; do
  [ -f "$b" ] || continue
  n=$(basename "$b" .py)
  run_step "bench_$n" 60 "$VPY" "$b" --backend cuda
done

log "summary"
"$VPY" - "$OUT" "$INSTALL_RC" "$(( $(date +%s) - START ))" >"$OUT/summary.json" <<'PYEOF'
import json, pathlib, re, sys
out, install_rc, seconds = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
steps = {}
for rc in sorted(out.glob("*.rc")):
    text = (out / f"{rc.stem}.log").read_text(errors="replace")
    tail = text.strip().splitlines()[-1:] or [""]
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|error|errors)", tail[0])}
    steps[rc.stem] = {"rc": int(rc.read_text()), "tail": tail[0][:300], **counts}
    if rc.stem.startswith("bench_"):
        steps[rc.stem]["lines"] = text.strip().splitlines()[-12:]
probe = json.loads((out / "probe.json").read_text() or "{}") if (out / "probe.json").stat().st_size else {}
ok = install_rc == 0 and probe.get("available") and all(s["rc"] == 0 for s in steps.values())
print(json.dumps({"ok": bool(ok), "seconds": seconds, "install_rc": install_rc, "probe": probe,
                  "steps": steps}, indent=2))
PYEOF
cat "$OUT/summary.json"
grep -q '"ok": true' "$OUT/summary.json"
