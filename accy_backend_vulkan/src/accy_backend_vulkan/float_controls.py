"""IEEE float semantics for SPIR-V modules: float-controls execution modes, exact arithmetic.

LLVM 22's SPIR-V backend emits no float-controls execution modes, and without them a Vulkan
driver may assume there are no NaNs, infinities or signed zeros (lavapipe folded ``x - x``
to 0 for ``x = inf``). :func:`add_float_controls` requests them; :func:`exact_float_arithmetic`
marks the float arithmetic ``NoContraction`` so Mesa's NIR treats it as exact (no algebraic
rewrite, no fused multiply-add). ``docs/numerics.md`` has the whole story.
"""

from __future__ import annotations

from accy.codegen.spirv import instructions, pack, words

__all__ = ["FLOAT_CONTROLS", "add_float_controls", "exact_float_arithmetic"]

#: SPV_KHR_float_controls (core in SPIR-V 1.4): execution mode name -> (mode, capability)
FLOAT_CONTROLS = {"SignedZeroInfNanPreserve": (4461, 4466), "DenormPreserve": (4459, 4464)}

_OP_CAPABILITY, _OP_ENTRY_POINT, _OP_EXECUTION_MODE, _OP_TYPE_FLOAT = 17, 15, 16, 22
_OP_DECORATE, _OP_MEMBER_DECORATE, _DECORATION_NO_CONTRACTION = 71, 72, 42
_FLOAT_ARITHMETIC = frozenset({127, 129, 131, 133, 136, 140, 141})  # FNegate ... FMod
_TYPES = frozenset(range(19, 40))  # OpTypeVoid ... OpTypeForwardPointer


def add_float_controls(spirv: bytes, modes: dict[str, frozenset[int]]) -> bytes:
    """Return ``spirv`` with float-controls execution modes on its entry point.

    ``modes`` maps a name of :data:`FLOAT_CONTROLS` to the float widths (32, 64) to request
    it for; a width is requested only when the module declares floats of that width, and
    the matching capability is added once.
    """
    w = words(spirv)
    widths: set[int] = set()
    caps: set[int] = set()
    entry, last_cap, mode_at = None, 5, None
    for i, n, op in instructions(w):
        if op == _OP_CAPABILITY:
            caps.add(w[i + 1])
            last_cap = i + n
        elif op == _OP_ENTRY_POINT and entry is None:
            entry, mode_at = w[i + 2], i + n
        elif op == _OP_EXECUTION_MODE:
            mode_at = i + n
        elif op == _OP_TYPE_FLOAT:
            widths.add(w[i + 2])
    if entry is None or mode_at is None:
        return spirv
    new_caps: list[int] = []
    new_modes: list[int] = []
    for name, wanted in sorted(modes.items()):
        mode, capability = FLOAT_CONTROLS[name]
        use = sorted(set(wanted) & widths)
        if use and capability not in caps:
            new_caps += [(2 << 16) | _OP_CAPABILITY, capability]
            caps.add(capability)
        for width in use:
            new_modes += [(4 << 16) | _OP_EXECUTION_MODE, entry, mode, width]
    return pack(w[:last_cap] + new_caps + w[last_cap:mode_at] + new_modes + w[mode_at:])


def exact_float_arithmetic(spirv: bytes) -> bytes:
    """Return ``spirv`` with every float ``OpF{Add,Sub,Mul,Div,Rem,Mod,Negate}`` decorated
    ``NoContraction``.

    ``SignedZeroInfNanPreserve`` alone leaves Mesa free to rewrite float expressions;
    ``NoContraction`` makes the NIR instructions exact, which no algebraic rewrite touches,
    and keeps ``a * b + c`` from becoming a fused multiply-add (numpy rounds twice).
    """
    w = words(spirv)
    ids: list[int] = []
    insert_at, first_type = None, None
    for i, n, op in instructions(w):
        if op in (_OP_DECORATE, _OP_MEMBER_DECORATE):
            insert_at = i + n
        elif op in _TYPES and first_type is None:
            first_type = i
        elif op in _FLOAT_ARITHMETIC:
            ids.append(w[i + 2])
    at = insert_at if insert_at is not None else first_type
    if not ids or at is None:
        return spirv
    decorations: list[int] = []
    for rid in ids:
        decorations += [(3 << 16) | _OP_DECORATE, rid, _DECORATION_NO_CONTRACTION]
    return pack(w[:at] + decorations + w[at:])
