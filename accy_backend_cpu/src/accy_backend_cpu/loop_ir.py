"""LLVM IR of the CPU backend's native loop driver: a small interpreter and its helpers.

``i64 accy_loop_run(ptr code, ptr table, ptr team)`` runs a loop program (the encoding of
:mod:`accy_backend_cpu.loop_driver`: 64-bit words) over ``table`` (one 64-bit entry per
slot: a buffer address, or a counter) and returns 0, or ``-(pc + 1)`` for a bad opcode at
word ``pc``. Each launch word block names the kernel entry (address), its packed scalars,
its work-groups, the parts it is split into and its slots; the driver builds the pointer
array from the table and calls ``entry(ptrs, scalars, begin, end, groups)``.

A launch of more than one part is a *job* for the team: ``team`` (64-bit words) holds the
ticket at word 0 (``parts << 20 | next part``), the count of finished parts at word 8, the
quit flag at word 16 and the job (entry, pointers, scalars, groups) at words 24-27 (the
claim loop of :mod:`accy_backend_cpu.claim_ir`, shared with the native pool). The driver
posts the job, claims parts like the helpers do (atomic fetch-add on the ticket, so a
helper that never shows up only costs its share, never a deadlock) and spins until every
part is done. ``void accy_loop_help(ptr team)`` is a helper thread's loop: claim parts
while a job has some left, spin otherwise (``pause``, then ``sched_yield`` after a while),
return once the quit flag is set. Parts split ``[0, groups)`` as
:func:`accy_backend_cpu.threadpool.split_range` does.
"""

from __future__ import annotations

import ctypes

from accy_backend_cpu.claim_ir import claim_ir, pause

__all__ = ["DRIVER_ENTRIES", "HELP_FN", "RUN_FN", "driver_ir"]

#: the driver's entry points (``compile_program(options={"loop_driver": True})`` adds them)
DRIVER_ENTRIES = ("accy_loop_run", "accy_loop_help")
RUN_FN = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
HELP_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_IR = """
declare i32 @sched_yield()
{pause_decl}

define internal void @relax(i64 %n) nounwind {{
entry:
{pause}  %long = icmp ugt i64 %n, 2048
  br i1 %long, label %yield, label %done
yield:
  %y = call i32 @sched_yield()
  br label %done
done:
  ret void
}}

define void @accy_loop_help(ptr %team) nounwind {{
entry:
  %quitp = getelementptr i64, ptr %team, i64 16
  br label %wait
wait:
  %n = phi i64 [0, %entry], [%n1, %idle], [0, %claim]
  %q = load atomic i64, ptr %quitp acquire, align 8
  %stop = icmp ne i64 %q, 0
  br i1 %stop, label %exit, label %peek
peek:
  %avail = call i1 @available(ptr %team)
  br i1 %avail, label %claim, label %idle
claim:
  %ran = call i64 @claim_all(ptr %team)
  br label %wait
idle:
  call void @relax(i64 %n)
  %n1 = add i64 %n, 1
  br label %wait
exit:
  ret void
}}

define internal void @parallel(ptr %team, i64 %fn, ptr %ptrs, ptr %sc, i64 %groups,
                               i64 %parts) nounwind {{
entry:
  %donep = getelementptr i64, ptr %team, i64 8
  call void @post(ptr %team, i64 %fn, ptr %ptrs, ptr %sc, i64 %groups, i64 %parts)
  %ran = call i64 @claim_all(ptr %team)
  br label %wait
wait:
  %n = phi i64 [0, %entry], [%n1, %spin]
  %d = load atomic i64, ptr %donep acquire, align 8
  %all = icmp eq i64 %d, %parts
  br i1 %all, label %out, label %spin
spin:
  call void @relax(i64 %n)
  %n1 = add i64 %n, 1
  br label %wait
out:
  ret void
}}

define i64 @accy_loop_run(ptr %code, ptr %table, ptr %team) nounwind {{
entry:
  %ptrs = alloca [256 x i64], align 16
  br label %dispatch
dispatch:
  %pc = phi i64 [0, %entry], [%lpc, %launched], [%mpc, %move], [%tpc, %toggle],
               [%cpc, %setc], [%dt, %dtaken], [%dpc, %dnext], [%jt, %jmp], [%bpc, %brz]
  %w0p = getelementptr i64, ptr %code, i64 %pc
  %op = load i64, ptr %w0p, align 8
  %w1p = getelementptr i64, ptr %w0p, i64 1
  %w2p = getelementptr i64, ptr %w0p, i64 2
  %w3p = getelementptr i64, ptr %w0p, i64 3
  switch i64 %op, label %bad [ i64 0, label %end
                               i64 1, label %launch
                               i64 2, label %move
                               i64 3, label %toggle
                               i64 4, label %setc
                               i64 5, label %decjz
                               i64 6, label %jmp
                               i64 7, label %brz ]
launch:
  %fn = load i64, ptr %w1p, align 8
  %sci = load i64, ptr %w2p, align 8
  %groups = load i64, ptr %w3p, align 8
  %w4p = getelementptr i64, ptr %w0p, i64 4
  %parts = load i64, ptr %w4p, align 8
  %w5p = getelementptr i64, ptr %w0p, i64 5
  %nbuf = load i64, ptr %w5p, align 8
  br label %fill
fill:
  %k = phi i64 [0, %launch], [%k1, %fillbody]
  %more = icmp ult i64 %k, %nbuf
  br i1 %more, label %fillbody, label %call
fillbody:
  %kw = add i64 %k, 6
  %sp = getelementptr i64, ptr %w0p, i64 %kw
  %s = load i64, ptr %sp, align 8
  %ap = getelementptr i64, ptr %table, i64 %s
  %a = load i64, ptr %ap, align 8
  %dp = getelementptr i64, ptr %ptrs, i64 %k
  store i64 %a, ptr %dp, align 8
  %k1 = add i64 %k, 1
  br label %fill
call:
  %sc = inttoptr i64 %sci to ptr
  %split = icmp ugt i64 %parts, 1
  br i1 %split, label %par, label %ser
ser:
  %f = inttoptr i64 %fn to ptr
  %g32 = trunc i64 %groups to i32
  call void %f(ptr %ptrs, ptr %sc, i32 0, i32 %g32, i32 %g32)
  br label %launched
par:
  call void @parallel(ptr %team, i64 %fn, ptr %ptrs, ptr %sc, i64 %groups, i64 %parts)
  br label %launched
launched:
  %lpc0 = add i64 %pc, 6
  %lpc = add i64 %lpc0, %nbuf
  br label %dispatch
move:
  %md = load i64, ptr %w1p, align 8
  %ms = load i64, ptr %w2p, align 8
  %msp = getelementptr i64, ptr %table, i64 %ms
  %mv = load i64, ptr %msp, align 8
  %mdp = getelementptr i64, ptr %table, i64 %md
  store i64 %mv, ptr %mdp, align 8
  %mpc = add i64 %pc, 3
  br label %dispatch
toggle:
  %tr = load i64, ptr %w1p, align 8
  %to = load i64, ptr %w2p, align 8
  %ts = load i64, ptr %w3p, align 8
  %trp = getelementptr i64, ptr %table, i64 %tr
  %top = getelementptr i64, ptr %table, i64 %to
  %tsp = getelementptr i64, ptr %table, i64 %ts
  %cur = load i64, ptr %trp, align 8
  %own = load i64, ptr %top, align 8
  %spare = load i64, ptr %tsp, align 8
  %isown = icmp eq i64 %cur, %own
  %nv = select i1 %isown, i64 %spare, i64 %own
  store i64 %nv, ptr %trp, align 8
  %tpc = add i64 %pc, 4
  br label %dispatch
setc:
  %cc = load i64, ptr %w1p, align 8
  %cv = load i64, ptr %w2p, align 8
  %ccp = getelementptr i64, ptr %table, i64 %cc
  store i64 %cv, ptr %ccp, align 8
  %cpc = add i64 %pc, 3
  br label %dispatch
decjz:
  %dc = load i64, ptr %w1p, align 8
  %dt = load i64, ptr %w2p, align 8
  %dcp = getelementptr i64, ptr %table, i64 %dc
  %dv = load i64, ptr %dcp, align 8
  %zero = icmp eq i64 %dv, 0
  br i1 %zero, label %dtaken, label %dnext
dtaken:
  br label %dispatch
dnext:
  %dv1 = sub i64 %dv, 1
  store i64 %dv1, ptr %dcp, align 8
  %dpc = add i64 %pc, 3
  br label %dispatch
jmp:
  %jt = load i64, ptr %w1p, align 8
  br label %dispatch
brz:
  %bs = load i64, ptr %w1p, align 8
  %bt = load i64, ptr %w2p, align 8
  %bsp = getelementptr i64, ptr %table, i64 %bs
  %ba = load i64, ptr %bsp, align 8
  %bp = inttoptr i64 %ba to ptr
  %flag = load volatile i8, ptr %bp, align 1
  %false = icmp eq i8 %flag, 0
  %bnext = add i64 %pc, 3
  %bpc = select i1 %false, i64 %bt, i64 %bnext
  br label %dispatch
end:
  ret i64 0
bad:
  %neg = sub i64 -1, %pc
  ret i64 %neg
}}
"""


def driver_ir(triple: str) -> str:
    """The driver module's LLVM IR text for target ``triple`` (``pause`` on x86 only)."""
    decl, call = pause(triple)
    return _IR.format(pause_decl=decl, pause=call) + claim_ir(triple, job=24, done=8)
