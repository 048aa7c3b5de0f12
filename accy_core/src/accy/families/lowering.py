"""Expand a ``dispatch.region {kind = "library"}`` (one ``library.*`` call) into the kernel
family's kernels and launches.

The family names its IR plan function in ``Family.metadata["ir_plan"]``
(``"module:function"``), called as ``plan_fn(plan, backend, call)``:

- ``plan``: a :class:`LibraryPlan` with :class:`accy.families.Plan`'s ``temp(dtype, n)`` and
  ``launch(kernel, groups, slots, scalars)``;
- ``backend``: the target (``capabilities().features``; what ``tile_geometry`` reads);
- ``call``: :class:`LibraryCall` — attributes, operand/result types and their slots.

The plan is built twice with the same inputs: at the memory stage to size the call's scratch
slots (``scratch_bytes``; they are taken from the free temporaries and released right after
the call), and at the kernel stage with the real slots (``expand``). It must therefore be a
pure function of types, attributes and the target.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from accy.errors import CapabilityError, InternalError, UnsupportedError
from accy.families.runner import Slot, check_launch
from accy.ir import Operation
from accy.ir.ops.library import FAMILY_OF, index_operand
from accy.ir.ops.registry import get_op_def
from accy.ir.types import TensorType

__all__ = ["LibraryCall", "LibraryPlan", "TargetBackend", "decode_launches", "expand",
           "index_checks", "scratch_bytes"]

_ITEMSIZE = {"f32": 4, "f64": 8, "i32": 4, "i64": 8, "u32": 4, "bool": 1}


class TargetBackend:
    """What a family's plan may ask of the backend at compile time: its features, its
    ``max_loop_iterations`` (:func:`accy.families.loop_budget`) and the tuning cache's
    family choices (:meth:`family_variant`, :meth:`family_candidate`)."""

    def __init__(self, profile: Any = None, name: str | None = None,
                 choices: Any = None, explicit: dict[str, str] | None = None) -> None:
        self.profile = profile
        self.name = name or (profile.backend if profile is not None else "any")
        self.choices = choices
        self.explicit = dict(explicit or {})  # "family.variant" → candidate label

    def explicit_choice(self, family: str) -> tuple[Any, Any] | None:
        """The ``(variant, candidate)`` an explicit ``launch={"family.variant": label}``
        names for ``family``, or None.

        Raises:
            InputError: the variant or the label is not one of the family's.
        """
        from accy.errors import InputError
        from accy.families.registry import get_family

        key = next((k for k in self.explicit if k.split(".", 1)[0] == family), None)
        if key is None:
            return None
        fam = get_family(family)
        var = fam.variant(key.split(".", 1)[1])
        label = str(self.explicit[key])
        cand = next((c for c in var.candidates if c.label() == label), None)
        if cand is None:
            raise InputError(f"launch choice {key!r}: {label!r} is not one of its candidates "
                             f"({', '.join(c.label() for c in var.candidates)})")
        return var, cand

    def family_candidate(self, family: str, variant: str, dtypes: str,
                         shape_class: str) -> Any:
        """The cached :class:`accy.families.Candidate` of ``family.variant`` for this
        target's device and the tuning key (``dtypes``, ``shape_class``), or None (no
        tuning, no entry). ``choices`` is the :class:`accy.tuning.families.FamilyChoices`
        snapshot the compile took, so both plan builds see the same choice. An explicit
        ``launch={"family.variant": label}`` of the compile wins (for that variant)."""
        chosen = self.explicit_choice(family)
        if chosen is not None and chosen[0].name == variant:
            return chosen[1]
        if not self.choices:
            return None
        from accy.families.registry import get_family

        fam = get_family(family)
        return self.choices.candidate(fam, fam.variant(variant), dtypes, shape_class)

    def family_variant(self, family: str, dtypes: str, shape_class: str) -> Any:
        """The cached :class:`accy.families.Variant` of ``family`` for this target's device
        and the tuning key, or None (no tuning, no entry, or the target cannot run it); the
        variant of an explicit ``launch={"family.variant": label}`` wins."""
        chosen = self.explicit_choice(family)
        if chosen is not None:
            return chosen[0]
        if not self.choices:
            return None
        from accy.families.registry import get_family, variant_runs_on

        var = self.choices.variant(get_family(family), dtypes, shape_class)
        return var if var is not None and variant_runs_on(var, self)[0] else None

    def capabilities(self) -> Any:
        feats = self.profile.features if self.profile is not None else frozenset()
        loops = getattr(self.profile, "max_loop_iterations", None)
        lanes = getattr(self.profile, "subgroup_size", 0)
        return SimpleNamespace(features=frozenset(feats), backend=self.name,
                               max_loop_iterations=loops, subgroup_size=lanes)


@dataclass(frozen=True)
class LibraryCall:
    """One ``library.*`` op as its family's plan sees it."""

    op: str
    attrs: dict
    in_types: tuple[TensorType, ...]
    out_type: TensorType
    inputs: tuple[Slot, ...]
    output: Slot


class LibraryPlan:
    """``temp``/``launch`` over a function's slots (see the module docstring)."""

    def __init__(self, name: str, scratch: tuple[int, ...] | None = None) -> None:
        self.name = name
        self.scratch = scratch
        self.temps: list[tuple[str, int]] = []
        self.launches: list[tuple[Any, int, tuple[int, ...], tuple]] = []

    def temp(self, dtype: str, size_elems: int) -> Slot:
        k = len(self.temps)
        size = max(1, int(size_elems))
        self.temps.append((dtype, size))
        if self.scratch is None:
            return Slot(-1 - k, dtype, size)
        if k >= len(self.scratch):
            raise InternalError(f"{self.name}: the family asked for more scratch than the "
                                "memory stage planned; its plan must be deterministic")
        return Slot(self.scratch[k], dtype, size)

    def launch(self, kernel: Any, groups: int, slots: list[Slot], scalars=()) -> None:
        check_launch(self.name, kernel, groups, scalars)
        self.launches.append((kernel, int(groups), tuple(s.index for s in slots),
                              tuple((d, v) for d, v in scalars)))

    def param(self, *a: Any, **k: Any) -> Slot:
        raise InternalError(f"{self.name}: an IR plan binds the call's slots; no params")

    output = param


def _call_op(region: Operation) -> Operation:
    return region.regions[0].block.ops[0]


def _contract_plan(region: Operation, target: Any,
                   scratch: tuple[int, ...] | None) -> LibraryPlan:
    """A ``contract`` region: the ``matmul`` family's ``contract_plan(plan, backend, call,
    inputs, output)`` with the :class:`accy.passes.contraction.ContractCall`."""
    from accy.families.family import resolve
    from accy.families.registry import get_family
    from accy.passes.contraction import contract_call

    family = get_family("matmul")
    block = region.regions[0].block
    in_slots = region.attrs.get("in_slots", ())
    out_slots = region.attrs.get("out_slots", ())
    inputs = tuple(Slot(in_slots[k] if k < len(in_slots) else -1, a.type.dtype.value,
                        a.type.num_elements) for k, a in enumerate(block.args))
    out_t = region.results[0].type
    output = Slot(out_slots[0] if out_slots else -1, out_t.dtype.value, out_t.num_elements)
    plan = LibraryPlan("matmul.contract", scratch)
    ctarget = target if target is not None else TargetBackend()
    resolve(family.metadata["contract_plan"])(plan, ctarget, contract_call(region), inputs,
                                              output)
    return plan


def _check_sizes(region: Operation) -> None:
    """Refuse a library region with an operand or result the families' 32-bit index
    arithmetic cannot index (more than 2**31 - 1 elements), from the types alone: the
    family plans may not notice (a tiled matmul launches few work-items per element)."""
    from accy.passes.kernel_exprs import check_size

    for i, v in enumerate(region.regions[0].block.args):
        check_size(v.type.num_elements, f"'{region.name}' operand #{i} {v.type}")
    for v in region.results:
        check_size(v.type.num_elements, f"'{region.name}' result {v.type}")


def _plan(region: Operation, target: Any, scratch: tuple[int, ...] | None) -> LibraryPlan:
    from accy.families.family import resolve
    from accy.families.registry import get_family

    _check_sizes(region)
    if region.attrs.get("kind") == "contract":
        return _contract_plan(region, target, scratch)
    call = _call_op(region)
    short = call.name.split(".", 1)[1]
    family = get_family(FAMILY_OF[short])
    ref = family.metadata.get("ir_plan")
    if ref is None:
        raise UnsupportedError(f"'{call.name}' op: kernel family {family.name!r} "
                               f"({family.provider or '?'}) has no IR lowering "
                               "(metadata 'ir_plan')", feature=call.name)
    block = region.regions[0].block
    arg_index = {a: k for k, a in enumerate(block.args)}
    in_slots = region.attrs.get("in_slots", ())
    out_slots = region.attrs.get("out_slots", ())

    def slot(k: int | None, t: TensorType, fallback: int) -> Slot:
        s = in_slots[k] if k is not None and k < len(in_slots) else fallback
        return Slot(s, t.dtype.value, t.num_elements)

    in_types = tuple(v.type for v in call.operands)
    out_type = call.results[0].type
    ctarget = target if target is not None else TargetBackend()
    profile = getattr(ctarget, "profile", None)
    if (family.name in ("scatter_add", "segment_sum") and out_type.dtype.is_float
            and profile is not None and "float_atomics" not in profile.features):
        raise CapabilityError(f"'{call.name}' op: {out_type.dtype} accumulation needs float "
                              f"atomics, which backend {profile.backend!r} lacks; use integer "
                              "values or another backend", feature="float_atomics",
                              backend=profile.backend)
    lc = LibraryCall(call.name, get_op_def(call.name).full_attrs(dict(call.attrs)), in_types,
                     out_type,
                     tuple(slot(arg_index.get(v), v.type, -1) for v in call.operands),
                     Slot(out_slots[0] if out_slots else -1, out_type.dtype.value,
                          out_type.num_elements))
    plan = LibraryPlan(f"{call.name}", scratch)
    resolve(ref)(plan, ctarget, lc)
    return plan


def scratch_bytes(region: Operation, target: Any = None) -> list[int]:
    """Bytes of each scratch slot the call needs (memory stage)."""
    plan = _plan(region, target, None)
    return [_ITEMSIZE[d] * n for d, n in plan.temps]


def expand(region: Operation, target: Any = None) -> tuple[dict[str, Any], str]:
    """Kernels (name → kernel IR) and the ``launches`` attribute text of the call."""
    plan = _plan(region, target, tuple(region.attrs.get("scratch_slots", ())))
    kernels: dict[str, Any] = {}
    rows = []
    for kernel, groups, slots, scalars in plan.launches:
        other = kernels.get(kernel.name)
        if other is not None and other.fingerprint() != kernel.fingerprint():
            raise InternalError(f"two different kernels are named {kernel.name!r}")
        kernels[kernel.name] = kernel
        rows.append([kernel.name, groups, kernel.workgroup_size, list(slots),
                     [[d, _plain(v)] for d, v in scalars]])
    return kernels, json.dumps(rows, separators=(",", ":"))


def _plain(v: Any) -> Any:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    return float(v)


def decode_launches(text: str) -> list[tuple[str, int, int, tuple[int, ...], tuple]]:
    """The launches recorded by :func:`expand`."""
    return [(name, int(g), int(ws), tuple(slots), tuple((d, v) for d, v in scalars))
            for name, g, ws, slots, scalars in json.loads(text or "[]")]


def index_checks(region: Operation) -> list[tuple[int, int, int, str]]:
    """``(region operand, low, high, what)`` for every index array the region reads from
    memory that must be in ``[low, high)`` before launch (``mode="raise"`` gathers and
    scatters, scatter_add, segment ids)."""
    block = region.regions[0].block
    arg_index = {a: k for k, a in enumerate(block.args)}
    out = []
    for op in block.ops:
        pos = index_operand(op.name) if op.name.split(".")[0] in ("tensor", "library") else None
        if pos is None:
            continue
        idx = op.operands[pos]
        if idx not in arg_index:
            continue
        attrs = get_op_def(op.name).full_attrs(dict(op.attrs))
        short = op.name.split(".", 1)[1]
        if short == "segment_sum":
            out.append((arg_index[idx], 0, int(attrs["num_segments"]), "segment_sum segment id"))
            continue
        if attrs.get("mode", "raise") != "raise":
            continue
        n = op.operands[0].type.shape[attrs["axis"] % op.operands[0].type.rank]
        out.append((arg_index[idx], -n, n, f"{short} index"))
    return out
