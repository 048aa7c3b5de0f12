"""``import accy`` alone gives the submodules users reach as attributes (``accy.lax``,
``accy.numpy``), imported on first use; unknown names stay an AttributeError."""

from __future__ import annotations

import subprocess
import sys


def test_submodules_are_attributes_after_a_bare_import() -> None:
    code = ("import sys, accy\n"
            "assert 'accy.lax' not in sys.modules\n"
            "assert accy.lax.while_loop is accy.while_loop\n"
            "assert callable(accy.numpy.sum)\n"
            "try:\n    accy.no_such_name\nexcept AttributeError as e:\n"
            "    assert 'no_such_name' in str(e)\nelse:\n    raise SystemExit('no error')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
