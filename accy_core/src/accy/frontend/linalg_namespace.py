"""``accy.numpy.linalg``: the ``numpy.linalg`` names accy has (``norm`` from
:mod:`accy.frontend.matrix_api`; ``solve``, ``inv``, ``det`` from
:mod:`accy.frontend.linalg_solve`), and a clear refusal of the others. A module of its own so
that the matrix helpers do not import the solver (whose ``fori_loop`` reaches back to them)."""

from __future__ import annotations

from typing import Any

from accy.frontend import linalg_solve
from accy.frontend.errors import UnsupportedFunctionError
from accy.frontend.matrix_api import norm

__all__ = ["linalg"]


class _Linalg:
    """``accy.numpy.linalg``: ``norm``, ``solve``, ``inv``, ``det``
    (:mod:`accy.frontend.linalg_solve`); other ``numpy.linalg`` names are refused."""

    norm = staticmethod(norm)
    solve = staticmethod(linalg_solve.solve)
    inv = staticmethod(linalg_solve.inv)
    det = staticmethod(linalg_solve.det)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedFunctionError(
            f"accy.numpy.linalg.{name}: numpy.linalg.{name} is not supported by accy; "
            "supported: linalg.norm, solve, inv, det, matmul/einsum, and iterations written with "
            "accy.lax.while_loop (Jacobi, conjugate gradient, power iteration); or call "
            "numpy.linalg on the host outside the jitted function",
            feature=f"numpy.linalg.{name}", alternative="linalg.norm, accy.lax.while_loop")

    def __dir__(self) -> list[str]:
        return ["det", "inv", "norm", "solve"]


linalg = _Linalg()
