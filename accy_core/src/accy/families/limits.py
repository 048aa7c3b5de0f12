"""Loop budgets: keep every family kernel under a device's per-work-item loop limit.

Some devices end a work-item silently after a fixed number of loop iterations
(:attr:`accy.backend.Capabilities.max_loop_iterations`; lavapipe: 65535, counted over all
loops of the kernel together, each loop with its longest lane). A family variant therefore
sizes every per-work-item loop on the host: it asks :func:`loop_budget` for the limit, keeps
its fixed loops (zeroing a 256-counter row, binary-search steps) plus its data loop plus one
count per loop it runs (the test that leaves a loop counts on lavapipe) under it
— by clamping tile lengths (:func:`clamp_tile`) or by splitting a long loop into several
launches that continue where the previous one stopped (:func:`loop_passes`) — and refuses
with a :class:`~accy.errors.CapabilityError` where neither is possible (:func:`require`).
"""

from __future__ import annotations

from typing import Any

from accy.errors import CapabilityError

__all__ = ["clamp_tile", "loop_budget", "loop_passes", "require"]


def loop_budget(backend: Any) -> int | None:
    """Return the backend's ``max_loop_iterations`` (None: unlimited).

    ``backend``: a live backend, a backend name, or the kernel stage's target (anything with
    ``capabilities()``); capabilities without the field (third-party backends) mean no limit.
    """
    from accy.families.runner import backend_object

    caps = backend_object(backend).capabilities()
    limit = getattr(caps, "max_loop_iterations", None)
    return int(limit) if limit else None


def _backend_name(backend: Any) -> str:
    from accy.families.runner import backend_object

    be = backend_object(backend)
    return str(getattr(be, "name", None) or getattr(be.capabilities(), "backend", "?"))


def require(trips: int, backend: Any, what: str, fix: str = "") -> None:
    """Refuse a kernel whose work-items would run ``trips`` loop iterations (all loops).

    Raises:
        CapabilityError: ``trips`` exceeds the backend's ``max_loop_iterations``; the message
            names ``what``, the count, the limit and ``fix``.
    """
    budget = loop_budget(backend)
    if budget is None or trips <= budget:
        return
    name = _backend_name(backend)
    raise CapabilityError(
        f"{what}: a work-item would run {trips} loop iterations, but backend {name!r} ends "
        f"work-items after {budget} (max_loop_iterations); "
        f"{fix or 'use a smaller problem or another backend'}",
        feature="max_loop_iterations", backend=name, alternative=fix)


def clamp_tile(chunk: int, backend: Any, fixed: int = 0, what: str = "kernel",
               loops: int = 1) -> int:
    """Return ``chunk`` (elements one work-item walks), lowered so that ``fixed + chunk``
    loop iterations plus ``loops`` (the loops a work-item runs, one count each) fit the
    backend's budget (unchanged without a limit).

    Raises:
        CapabilityError: ``fixed`` alone leaves no room for one element.
    """
    budget = loop_budget(backend)
    if budget is None:
        return chunk
    if fixed + loops + 1 > budget:
        require(fixed + loops + 1, backend, what)
    return max(1, min(chunk, budget - fixed - loops))


def loop_passes(trips: int, backend: Any, fixed: int = 0, what: str = "kernel",
                loops: int = 1) -> tuple[int, int]:
    """Return ``(passes, per_pass)``: a data loop of up to ``trips`` iterations split into
    launches of at most ``per_pass`` iterations each (plus ``fixed`` other iterations and
    ``loops`` loop exits per launch) under the backend's budget; ``(1, trips)`` without a
    limit or when it fits.

    Raises:
        CapabilityError: ``fixed`` alone leaves no room for one iteration per launch.
    """
    trips = max(0, int(trips))
    budget = loop_budget(backend)
    if budget is None or fixed + loops + trips <= budget:
        return 1, max(trips, 1)
    per_pass = clamp_tile(trips, backend, fixed, what, loops)
    return -(-trips // per_pass), per_pass
