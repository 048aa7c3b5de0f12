"""Vectorizable f32 ``exp``, ``log`` and ``tanh`` for the CPU target.

libm's scalar ``expf``/``tanhf`` calls stop LLVM's loop vectorizer, so a kernel using them
runs one element at a time. The CPU target maps these f32 ops to the straight-line
polynomial versions in ``_data/vecmath.ll`` (Cephes algorithms, measured ≤ 3 ulp for exp,
≤ 4 ulp for log, ≤ 2 ulp for tanh against numpy's float32 results; NaN, ±inf and ±0 as libm),
which are inlined and vectorized with the rest of the work-item loop. f64 math keeps the
libm intrinsics.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["VECMATH_F32", "link_vecmath"]

#: kernel-IR unary op → function defined in vecmath.ll (f32 only).
VECMATH_F32 = {"exp": "accy_cpu_expf", "log": "accy_cpu_logf", "tanh": "accy_cpu_tanhf"}

_DECLARE = re.compile(r"^declare .*? @([\w.]+)\(", re.MULTILINE)


@lru_cache(maxsize=1)
def _library() -> tuple[str, dict[str, str]]:
    from importlib import resources  # ~7 ms to import: only when compiling

    text = resources.files("accy_backend_cpu").joinpath("_data/vecmath.ll").read_text()
    body = [ln for ln in text.splitlines() if not ln.startswith("declare ")]
    decls = {}
    for ln in text.splitlines():
        m = _DECLARE.match(ln)
        if m:
            decls[m.group(1)] = ln
    return "\n".join(body), decls


def link_vecmath(llvm_ir: str) -> str:
    """Append the vecmath definitions to ``llvm_ir`` when it calls any of them."""
    if not any(f"@{fn}(" in llvm_ir for fn in VECMATH_F32.values()):
        return llvm_ir
    body, decls = _library()
    ours = set(VECMATH_F32.values())
    llvm_ir = "\n".join(
        ln for ln in llvm_ir.splitlines()
        if not (ln.startswith("declare ") and (m := _DECLARE.match(ln)) and m.group(1) in ours)
    )
    present = set(_DECLARE.findall(llvm_ir))
    extra = [line for name, line in decls.items() if name not in present]
    return "\n".join([llvm_ir, *extra, body, ""])
