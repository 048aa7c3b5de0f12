"""``import accy`` stays light: the frontend loads on first use of ``accy.jit``."""

from __future__ import annotations

import subprocess
import sys


def test_import_accy_does_not_load_the_frontend() -> None:
    code = (
        "import sys, accy\n"
        "assert 'accy.frontend' not in sys.modules and 'accy.numpy' not in sys.modules\n"
        "accy.jit\n"
        "assert 'accy.frontend' in sys.modules\n"
        "assert 'llvmlite' not in sys.modules and 'accy.plugins' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_attribute_of_accy_is_an_attribute_error() -> None:
    import accy

    assert not hasattr(accy, "no_such_thing")
