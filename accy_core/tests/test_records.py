"""accy.records: a record behaves as the equivalent frozen/slotted dataclass would."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import field

import pytest
from accy.records import record


@record(slots=True)
class Node:
    op: str
    a: object
    b: object = None
    dtype: str = "i32"


@record(frozen=False)
class Graph:
    name: str
    items: list = field(default_factory=list)
    note: str = field(default="", compare=False)


@record
class Checked:
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in ("in", "out"):
            raise ValueError(self.kind)


@record
class Wide:  # more fields than the largest method template
    f0: int
    f1: int
    f2: int
    f3: int
    f4: int
    f5: int
    f6: int
    f7: int
    f8: int
    f9: int
    f10: int
    f11: int
    f12: int = 12
    f13: int = 13


def test_frozen_slotted_record_is_a_dataclass_in_every_way_used():
    n = Node("add", 1, b=2)
    assert n == Node("add", 1, 2, "i32") and n != Node("add", 1, 3) and n != ("add", 1, 2)
    assert hash(n) == hash(Node("add", 1, 2)) and repr(n) == "Node(op='add', a=1, b=2, dtype='i32')"
    assert Node.__slots__ == ("op", "a", "b", "dtype") and not hasattr(n, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        n.op = "mul"
    with pytest.raises(TypeError):
        Node()
    match n:
        case Node(op, a, b, dt):
            assert (op, a, b, dt) == ("add", 1, 2, "i32")
    assert dataclasses.is_dataclass(n) and [f.name for f in dataclasses.fields(n)] == list(
        Node.__match_args__)
    assert dataclasses.replace(n, op="mul") == Node("mul", 1, 2)
    assert dataclasses.asdict(n) == {"op": "add", "a": 1, "b": 2, "dtype": "i32"}
    assert pickle.loads(pickle.dumps(n)) == n and copy.deepcopy(n) == n


def test_mutable_record_factories_compare_flags_and_post_init():
    g, h = Graph("g"), Graph("g", note="other")
    assert g == h and g.items == [] and g.items is not h.items and Graph.__hash__ is None
    g.items.append(1)
    g.name = "renamed"
    assert pickle.loads(pickle.dumps(g)) == g and g != h
    with pytest.raises(ValueError):
        Checked("sideways")
    assert Checked("in").kind == "in" and pickle.loads(pickle.dumps(Checked("out"))).kind == "out"
    w = Wide(*range(12))
    assert w.f13 == 13 and w == Wide(*range(12), f12=12) and hash(w) == hash(Wide(*range(14)))
    with pytest.raises(TypeError):
        Wide(*range(15))


def test_unsupported_shapes_are_refused_when_defined():
    with pytest.raises(TypeError):
        @record
        class Late:
            a: int = 0
            b: int

    with pytest.raises(TypeError):
        @record
        class Child(Node):
            c: int = 0


@dataclasses.dataclass(frozen=True)
class Sub(Checked):
    extra: int = 3


def test_a_frozen_record_is_the_base_of_a_frozen_dataclass():
    """As BackendDescriptor (a record) is for a plugin's @dataclass(frozen=True) subclass."""
    s = Sub("in", 5)
    assert (s.kind, s.extra) == ("in", 5) and s == Sub("in", extra=5) and s != Sub("in")
    assert hash(s) == hash(Sub("in", 5)) and isinstance(s, Checked)
    assert [f.name for f in dataclasses.fields(s)] == ["kind", "extra"]
    assert dataclasses.replace(s, extra=7).extra == 7 and pickle.loads(pickle.dumps(s)) == s
    assert pickle.loads(pickle.dumps(Checked("out"))) == Checked("out")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.extra = 1
    with pytest.raises(TypeError):  # as of any frozen dataclass base
        @dataclasses.dataclass
        class Thawed(Checked):
            q: int = 1
