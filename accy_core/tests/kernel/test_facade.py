"""The accy.kernel facade: every public name resolves, and importing the package (what a
warm-cache load does, through the dtype tables) does not import the kernel IR."""

from __future__ import annotations

import subprocess
import sys

import accy.kernel
import accy.kernel.ir


def test_every_public_name_resolves_to_the_ir_or_its_module():
    for name in accy.kernel.__all__:
        assert getattr(accy.kernel, name) is not None, name
    assert accy.kernel.Kernel is accy.kernel.ir.Kernel
    assert accy.kernel.dtype_bytes("f64") == 8


def test_importing_the_package_and_its_dtypes_imports_no_ir():
    code = ("import sys, accy.kernel, accy.kernel.dtypes\n"
            "print('accy.kernel.ir' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "False"
