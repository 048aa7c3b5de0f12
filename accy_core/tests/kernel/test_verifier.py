"""Verifier messages name the kernel and the statement and say what is wrong."""

from __future__ import annotations

import pytest
from accy.errors import VerifyError
from accy.kernel import (
    Barrier,
    BufferParam,
    For,
    If,
    Kernel,
    Let,
    Load,
    ScalarParam,
    Store,
    ThreadId,
    Var,
    binary,
    const,
    verify_kernel,
)

GID = ThreadId("global")
LID = ThreadId("local")


BUFFERS = (BufferParam("y", "f32", "write"), BufferParam("x", "f32", "read"))
SCALARS = (ScalarParam("n", "i32"),)


def make(body):
    return Kernel("k", BUFFERS, SCALARS, tuple(body), 64)


def test_valid_kernel_passes():
    verify_kernel(
        make([If(binary("lt", GID, Var("n", "i32")), (Store("y", GID, Load("x", GID, "f32")),))])
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([Store("y", GID, Var("t", "f32"))], "undefined variable 't'"),
        ([Store("z", GID, const(1.0, "f32"))], "undefined buffer 'z'"),
        ([Store("x", GID, const(1.0, "f32"))], "store to read-only buffer 'x'"),
        ([Store("y", GID, const(1, "i32"))], "store of i32 to f32 buffer 'y'"),
        ([Let("a", const(1, "i32")), Let("a", const(2, "i32"))], "already defined"),
        ([If(const(1, "i32"), ())], "if condition must be bool"),
        ([If(binary("lt", LID, const(3, "i32")), (Barrier(),))], "barrier in control flow"),
        (
            [For("i", const(0, "i32"), GID, const(1, "i32"), (Barrier(),))],
            "barrier in control flow",
        ),
        (
            [
                Let("m", LID),
                For("i", const(0, "i32"), Var("m", "i32"), const(1, "i32"), (Barrier(),)),
            ],
            "barrier in control flow",
        ),
    ],
)
def test_errors(body, message):
    with pytest.raises(VerifyError) as info:
        verify_kernel(make(body))
    assert message in str(info.value)
    assert str(info.value).startswith("kernel 'k': stmt ")


def test_barrier_in_uniform_loop_is_accepted():
    n = Var("n", "i32")
    verify_kernel(
        make(
            [
                For("i", const(0, "i32"), n, const(1, "i32"), (Barrier(),)),
                If(binary("lt", ThreadId("group"), n), (Barrier(),)),
            ]
        )
    )


def test_binary_constructor_rejects_mixed_dtypes():
    with pytest.raises(VerifyError, match="operand dtypes must match"):
        binary("add", const(1, "i32"), const(1.0, "f32"))


def test_fingerprint_is_stable_and_text_readable():
    k = make([Store("y", GID, Load("x", GID, "f32"))])
    assert k.fingerprint() == make([Store("y", GID, Load("x", GID, "f32"))]).fingerprint()
    assert "y[global_id] = x[global_id]:f32" in k.to_text()
    assert len(k.fingerprint()) == 64


@pytest.mark.parametrize("wg", [32.5, "64", None])
def test_workgroup_size_that_is_not_an_int_is_refused(wg):
    """KernelBuilder("k", 32.5) built a kernel that failed only at launch."""
    with pytest.raises(VerifyError, match="workgroup_size must be an int"):
        verify_kernel(Kernel("k", BUFFERS, SCALARS, (), wg))
