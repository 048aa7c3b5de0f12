"""Every kernel of the backend-parametrised programs (``tests/programs``) assembles with ptxas.

Each program test is run with ``accy.compile`` replaced by a function that lowers the module
through the stages against the CUDA target profile, emits PTX for every kernel for sm_80 and
sm_90 (compile-only backend, no GPU needed), assembles each with ``ptxas`` and stops the test
there. Skipped only when ptxas is absent.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import re
from pathlib import Path

import pytest
from accy_backend_cuda.toolchain import check_ptx, find_ptxas

PROGRAMS = Path(__file__).resolve().parents[2] / "tests" / "programs"
SMS = (80, 90)
ASSEMBLED: dict[int, int] = {sm: 0 for sm in SMS}


class _Checked(Exception):
    """Raised by the fake compile once every kernel of the program was assembled."""


def _cases():
    for path in sorted(PROGRAMS.glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"_cuda_ptx_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, fn in sorted(vars(module).items()):
            if not (name.startswith("test_") and callable(fn)):
                continue
            if "backend" not in inspect.signature(fn).parameters:
                continue
            # a test's own backend list (``parametrize("backend", ...)``) is replaced by cuda
            marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"
                     and m.args[0] != "backend"]
            axes = []
            for m in marks:
                names = [n.strip() for n in m.args[0].split(",")] if isinstance(m.args[0], str) \
                    else list(m.args[0])
                axis = []
                for v in m.args[1]:
                    values = getattr(v, "values", v)  # unwrap pytest.param
                    kwargs = dict(zip(names, values if len(names) > 1 else (values,), strict=True))
                    axis.append((_label(getattr(v, "id", None), kwargs), kwargs))
                axes.append(axis)
            given = {"backend"} | {n for axis in axes for _, d in axis[:1] for n in d}
            if set(inspect.signature(fn).parameters) - given:
                continue  # needs other fixtures: not a plain backend-parametrised program
            for combo in itertools.product(*axes) if axes else [()]:
                kwargs = {k: v for _, d in combo for k, v in d.items()}
                label = "-".join(part for part, _ in combo)
                yield pytest.param(fn, kwargs, id=f"{path.stem}::{name}" + (f"[{label}]" if label else ""))


def _label(given_id: str | None, kwargs: dict) -> str:
    """The test id part of one parametrize entry: its own ``id=`` where it has one, else its
    values. Object addresses (``<lambda> at 0x7f...``) are dropped: pytest-xdist requires
    every worker to collect the same ids, and an address differs between processes."""
    if given_id is not None:
        return given_id
    return re.sub(r" at 0x[0-9a-fA-F]+", "", "-".join(str(v) for v in kwargs.values()))


def _fake_compile(module, backend="cpu", **_options):
    from accy.passes import PassContext, run_stages
    from accy_backend_cuda.plugin import open_compile_only

    be = open_compile_only(90)
    products = run_stages(module, PassContext(target_profile=be.target_profile(), backend="cuda"),
                          until="target")
    kernels = products[-1].module.attrs.get("kernels", {})
    for name, kernel in sorted(kernels.items()):
        for sm in SMS:
            check_ptx(be.emit(kernel, "ptx", target=f"sm_{sm}").decode(), sm, name)
            ASSEMBLED[sm] += 1
    raise _Checked(len(kernels))


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found on PATH/CUDA_HOME")
@pytest.mark.parametrize(("test", "kwargs"), list(_cases()))
def test_program_kernels_assemble(test, kwargs, monkeypatch):
    import accy

    monkeypatch.setattr(accy, "compile", _fake_compile)
    with pytest.raises(_Checked):
        test(backend="cuda", **kwargs)


def test_report_assembled_counts():
    """Print how many kernels were assembled per SM (``pytest -s`` shows it)."""
    print("ptxas-assembled kernels:", ", ".join(f"sm_{k}: {v}" for k, v in ASSEMBLED.items()))


def test_case_ids_are_the_same_in_every_process():
    """pytest-xdist refuses a run whose workers collected different ids: no object address
    (``<lambda> at 0x7f...``) may appear in one."""
    ids = [case.id for case in _cases()]
    assert ids and not [i for i in ids if " at 0x" in i]
    assert any("test_every_op_on_empty_inputs[elementwise]" in i for i in ids)
