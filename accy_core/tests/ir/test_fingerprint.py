"""Structural fingerprints and module cloning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import accy
import numpy as np
from accy.ir import Operation

TEXT = """module {
  func @f(%arg0: f32[4,3], %arg1: f32[3]) -> (f32[4], f32[4,3]) {
    %0 = tensor.broadcast_to %arg1 {shape = [4, 3]} : (f32[3]) -> f32[4,3]
    %1 = arith.mul %arg0, %0 : (f32[4,3], f32[4,3]) -> f32[4,3]
    %2 = reduce.sum %1 {axes = [1], keepdims = false} : (f32[4,3]) -> f32[4]
    %3 = tensor.constant {value = dense<[0.5, -0.0, nan]>} : () -> f32[3]
    func.return %2, %1 : (f32[4], f32[4,3]) -> ()
  }
}
"""


def fp(text: str) -> str:
    return accy.parse_module(text).fingerprint()


def test_fingerprint_is_sha256_hex() -> None:
    f = fp(TEXT)
    assert len(f) == 64 and int(f, 16) >= 0


def test_stable_across_processes() -> None:
    code = "import sys, accy; print(accy.parse_module(sys.stdin.read()).fingerprint())"
    for seed in ("0", "1"):  # a different hash seed must not matter
        out = subprocess.run(
            [sys.executable, "-c", code], input=TEXT, capture_output=True, text=True, check=True,
            env={"PYTHONHASHSEED": seed, "PATH": "", **_pythonpath()},
        ).stdout.strip()
        assert out == fp(TEXT)


def _pythonpath() -> dict[str, str]:
    import os

    src = str(Path(accy.__file__).parent.parent)
    return {"PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def test_independent_of_value_names() -> None:
    renamed = (
        TEXT.replace("%arg0", "%x").replace("%arg1", "%bias").replace("%0", "%b")
        .replace("%1", "%prod").replace("%2", "%total").replace("%3", "%unused")
    )
    assert renamed != TEXT
    assert fp(renamed) == fp(TEXT)
    assert accy.parse_module(renamed).to_text() == TEXT


def test_independent_of_whitespace_comments_and_attr_order() -> None:
    messy = TEXT.replace("{axes = [1], keepdims = false}", "{ keepdims=false ,axes=[ 1 ] }")
    messy = "// a comment\n" + messy.replace("  ", "    ")
    assert fp(messy) == fp(TEXT)


def test_changes_when_an_op_changes() -> None:
    assert fp(TEXT.replace("arith.mul", "arith.add")) != fp(TEXT)


def test_changes_when_a_type_changes() -> None:
    assert fp(TEXT.replace("f32", "f64")) != fp(TEXT)
    assert fp(TEXT.replace("f32[4", "f32[5").replace("[4, 3]", "[5, 3]")) != fp(TEXT)


def test_changes_when_an_attribute_changes() -> None:
    base = fp(TEXT)
    assert fp(TEXT.replace("keepdims = false}", "keepdims = true}").replace(
        "-> f32[4]\n", "-> f32[4,1]\n").replace("(f32[4], f32[4,3])", "(f32[4,1], f32[4,3])")) != base
    assert fp(TEXT.replace("-0.0", "0.0")) != base
    assert fp(TEXT.replace("0.5", "0.25")) != base
    sm = (
        "func @s(%arg0: f32[2,2]) -> (f32[2,2]) {\n"
        "  %0 = nn.softmax %arg0 {axis = 0} : (f32[2,2]) -> f32[2,2]\n"
        "  func.return %0 : (f32[2,2]) -> ()\n}\n"
    )
    assert fp(sm) != fp(sm.replace("axis = 0", "axis = 1"))
    assert fp(sm) != fp(sm.replace("axis = 0", "axis = -2"))


def test_changes_when_function_name_or_order_changes() -> None:
    assert fp(TEXT.replace("@f", "@g")) != fp(TEXT)


def test_changes_with_large_constant_payload() -> None:
    b = accy.Builder()
    fb = b.begin_function("c", params=[])
    data = np.arange(100, dtype=np.float32)
    fb.return_(fb.constant(b.tensor("f32", (100,)), data))
    fb.finish()
    m1 = b.finish()
    m2 = m1.clone()
    m2.functions[0].body.ops[0].attrs["value"] = data + np.float32(1e-6) * (data == 7)
    assert m1.fingerprint() != m2.fingerprint()


def test_clone_has_equal_fingerprint_and_text() -> None:
    m = accy.parse_module(TEXT)
    c = m.clone()
    assert c.fingerprint() == m.fingerprint()
    assert c.to_text() == m.to_text()
    c.verify()


def test_clone_is_independent() -> None:
    m = accy.parse_module(TEXT)
    before = m.to_text()
    c = m.clone()
    f = c.functions[0]
    # rename, retarget, mutate attrs and the constant's data, append an op
    f.name = "g"
    ops = f.body.ops
    ops[2].attrs["keepdims"] = True
    ops[3].attrs["value"][0] = 99.0
    ops[1].set_operand(1, ops[0].operands[0].owner.args[0])  # type: ignore[union-attr]
    extra = Operation("math.exp", [f.params[0]], [f.params[0].type])
    f.body.insert_before(ops[-1], extra)
    f.result_types.append(f.params[0].type)
    f.attrs["tag"] = 1
    c.attrs["kernels"] = {}
    assert m.to_text() == before
    assert m.functions[0].params[0].uses == [(m.functions[0].body.ops[1], 0)]
    assert "kernels" not in m.attrs and m.functions[0].attrs == {}
    assert c.fingerprint() != m.fingerprint()


def test_clone_of_dispatch_regions() -> None:
    text = (Path(__file__).parent / "golden" / "dispatch.accy").read_text()
    m = accy.parse_module(text)
    c = m.clone()
    c.verify()
    assert c.fingerprint() == m.fingerprint()
    region_arg = c.functions[0].body.ops[0].regions[0].block.args[0]
    assert region_arg is not m.functions[0].body.ops[0].regions[0].block.args[0]
