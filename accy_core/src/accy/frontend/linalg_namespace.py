"""``accy.numpy.linalg``: the ``numpy.linalg`` names accy has (``norm`` from
:mod:`accy.frontend.matrix_api`; ``solve``, ``inv``, ``det``, ``slogdet``, ``matrix_power``
from :mod:`accy.frontend.linalg_solve`; ``cholesky``, ``qr`` from
:mod:`accy.frontend.linalg_factor`; ``eigh``, ``eigvalsh`` from
:mod:`accy.frontend.linalg_eigh`; ``multi_dot`` from :mod:`accy.frontend.linalg_api`), and a
clear refusal of the others. A module of its own so
that the matrix helpers do not import the solver (whose ``fori_loop`` reaches back to them)."""

from __future__ import annotations

from typing import Any

from accy.frontend import linalg_eigh, linalg_factor, linalg_solve
from accy.frontend.errors import UnsupportedFunctionError
from accy.frontend.linalg_api import multi_dot
from accy.frontend.matrix_api import norm

__all__ = ["linalg"]


class _Linalg:
    """``accy.numpy.linalg``: ``norm``, ``solve``, ``inv``, ``det``, ``slogdet``,
    ``matrix_power``, ``cholesky``, ``qr``, ``eigh``, ``eigvalsh``, ``multi_dot``; other
    ``numpy.linalg`` names are refused."""

    norm = staticmethod(norm)
    solve = staticmethod(linalg_solve.solve)
    inv = staticmethod(linalg_solve.inv)
    det = staticmethod(linalg_solve.det)
    slogdet = staticmethod(linalg_solve.slogdet)
    matrix_power = staticmethod(linalg_solve.matrix_power)
    cholesky = staticmethod(linalg_factor.cholesky)
    qr = staticmethod(linalg_factor.qr)
    eigh = staticmethod(linalg_eigh.eigh)
    eigvalsh = staticmethod(linalg_eigh.eigvalsh)
    multi_dot = staticmethod(multi_dot)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedFunctionError(
            f"accy.numpy.linalg.{name}: numpy.linalg.{name} is not supported by accy; "
            "supported: linalg.norm, solve, inv, det, slogdet, matrix_power, cholesky, qr, "
            "eigh, eigvalsh, multi_dot, matmul/einsum, and iterations written with "
            "accy.lax.while_loop (Jacobi, conjugate gradient, power iteration); or call "
            "numpy.linalg on the host outside the jitted function",
            feature=f"numpy.linalg.{name}", alternative="linalg.norm, accy.lax.while_loop")

    def __dir__(self) -> list[str]:
        return ["cholesky", "det", "eigh", "eigvalsh", "inv", "matrix_power", "multi_dot",
                "norm", "qr", "slogdet", "solve"]


linalg = _Linalg()
