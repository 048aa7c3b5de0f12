"""LLVM IR shared by the native work-group pool and the native loop driver: claim loops.

Both :mod:`accy_backend_cpu.native_pool_ir` and :mod:`accy_backend_cpu.loop_ir` split a
launch into ranges that threads claim from a control block of 64-bit words: the *ticket*
at word 0 (``ranges << 20 | next range``, claimed with an atomic fetch-add), the count of
finished ranges at word ``done`` and the job (kernel entry, pointer array, scalar block,
work-groups) at words ``job`` to ``job + 3``. :func:`claim_ir` writes the functions that
work on such a block, for one layout:

- ``void @run_part(i64 fn, ptr ptrs, ptr sc, i64 groups, i64 ranges, i64 p)``: range ``p``
  of ``ranges`` (the ``p``-th of :func:`accy_backend_cpu.threadpool.split_range`), called as
  ``fn(ptrs, sc, begin, end, groups)``;
- ``i64 @claim_all(ptr ctl)``: claim and run ranges until the ticket has none left; returns
  how many this thread ran;
- ``i1 @available(ptr ctl)``: whether the ticket has a range left;
- ``void @post(ptr ctl, i64 fn, ptr ptrs, ptr sc, i64 groups, i64 ranges)``: write the job,
  zero the finished count, then store the ticket (sequentially consistent: the pool's
  sleepers check the ticket after announcing themselves);
- ``i1 @tick(ptr n)``: one poll of a spin loop: ``pause`` (x86), count the polls at ``n``,
  true on every 64th (when a poller looks at the clock).

Memory order: the job words are written before the ticket, read by a thread only after its
fetch-add claimed a range of that ticket; the finished count is a release add, read with
acquire by whoever waits for it.
"""

from __future__ import annotations

__all__ = ["claim_ir", "pause"]

_RANGE = "1048575"  # the ticket's next-range field (20 bits)

#: the finished count's and the job words' addresses, at the top of a function of ``%ctl``
_WORDS = """  %donep = getelementptr i64, ptr %ctl, i64 {done}
  %fnp = getelementptr i64, ptr %ctl, i64 {job}
  %ptrsp = getelementptr i64, ptr %ctl, i64 {job1}
  %scp = getelementptr i64, ptr %ctl, i64 {job2}
  %gp = getelementptr i64, ptr %ctl, i64 {job3}
"""

_IR = """
define internal void @run_part(i64 %fn, ptr %ptrs, ptr %sc, i64 %groups, i64 %ranges,
                               i64 %p) nounwind {{
entry:
  %base = udiv i64 %groups, %ranges
  %extra = urem i64 %groups, %ranges
  %lt = icmp ult i64 %p, %extra
  %mn = select i1 %lt, i64 %p, i64 %extra
  %b0 = mul i64 %p, %base
  %begin = add i64 %b0, %mn
  %one = zext i1 %lt to i64
  %len = add i64 %base, %one
  %end = add i64 %begin, %len
  %f = inttoptr i64 %fn to ptr
  %b32 = trunc i64 %begin to i32
  %e32 = trunc i64 %end to i32
  %g32 = trunc i64 %groups to i32
  call void %f(ptr %ptrs, ptr %sc, i32 %b32, i32 %e32, i32 %g32)
  ret void
}}

define internal i64 @claim_all(ptr %ctl) nounwind {{
entry:
{words}  br label %loop
loop:
  %ran = phi i64 [ 0, %entry ], [ %ran1, %run ]
  %t = atomicrmw add ptr %ctl, i64 1 acq_rel, align 8
  %next = and i64 %t, {range}
  %ranges = lshr i64 %t, 20
  %ok = icmp ult i64 %next, %ranges
  br i1 %ok, label %run, label %out
run:
  %fn = load i64, ptr %fnp, align 8
  %pi = load i64, ptr %ptrsp, align 8
  %si = load i64, ptr %scp, align 8
  %g = load i64, ptr %gp, align 8
  %ptrs = inttoptr i64 %pi to ptr
  %sc = inttoptr i64 %si to ptr
  call void @run_part(i64 %fn, ptr %ptrs, ptr %sc, i64 %g, i64 %ranges, i64 %next)
  %d = atomicrmw add ptr %donep, i64 1 release, align 8
  %ran1 = add i64 %ran, 1
  br label %loop
out:
  ret i64 %ran
}}

define internal i1 @available(ptr %ctl) nounwind {{
entry:
  %t = load atomic i64, ptr %ctl seq_cst, align 8
  %next = and i64 %t, {range}
  %ranges = lshr i64 %t, 20
  %ok = icmp ult i64 %next, %ranges
  ret i1 %ok
}}

define internal void @post(ptr %ctl, i64 %fn, ptr %ptrs, ptr %sc, i64 %groups,
                           i64 %ranges) nounwind {{
entry:
{words}  store i64 %fn, ptr %fnp, align 8
  %pi = ptrtoint ptr %ptrs to i64
  store i64 %pi, ptr %ptrsp, align 8
  %si = ptrtoint ptr %sc to i64
  store i64 %si, ptr %scp, align 8
  store i64 %groups, ptr %gp, align 8
  store atomic i64 0, ptr %donep monotonic, align 8
  %tk = shl i64 %ranges, 20
  store atomic i64 %tk, ptr %ctl seq_cst, align 8
  ret void
}}

define internal i1 @tick(ptr %nv) nounwind {{
entry:
{pause}  %n = load i64, ptr %nv, align 8
  %n1 = add i64 %n, 1
  store i64 %n1, ptr %nv, align 8
  %low = and i64 %n1, 63
  %tick = icmp eq i64 %low, 0
  ret i1 %tick
}}
"""


def pause(triple: str) -> tuple[str, str]:
    """``(declaration, call)`` of the spin-wait hint on ``triple`` (x86's ``pause``; empty
    strings elsewhere): the call is one indented instruction line with its newline."""
    if triple.startswith(("x86_64", "i686", "i386")):
        return ("declare void @llvm.x86.sse2.pause()",
                "  call void @llvm.x86.sse2.pause()\n")
    return "", ""


def claim_ir(triple: str, job: int, done: int) -> str:
    """The claim-loop functions of the module docstring for a control block whose job
    starts at word ``job`` and whose finished count is word ``done``, on ``triple`` (the
    caller declares ``@llvm.x86.sse2.pause`` there: :func:`pause`)."""
    words = _WORDS.format(done=done, job=job, job1=job + 1, job2=job + 2, job3=job + 3)
    return _IR.format(words=words, range=_RANGE, pause=pause(triple)[1])
