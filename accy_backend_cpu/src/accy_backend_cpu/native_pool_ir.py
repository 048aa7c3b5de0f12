"""LLVM IR of the native work-group pool (:mod:`accy_backend_cpu.native_pool`).

The pool's control block is 64-bit words, each hot word on its own 64-byte line:

========  ==============================================================================
word 0    the ticket: ``ranges << 20 | next range`` (claimed with atomic fetch-add)
word 8    ranges finished of the current job
word 16   workers that returned to Python to sleep (announced before they go); word 19
          workers asleep in the kernel (``futex``, Linux: word 43 holds the ``futex``
          system call's number, 0 elsewhere), waiting on the 32-bit sequence at word 56
word 24   quit flag (workers return 0 once it is set and no range is left to them)
word 32   the job: kernel entry, pointer array, scalar block, work-groups (words 32-35)
word 40   spin budget in ns since a worker's last range before it sleeps; word 41 the
          clock id of ``clock_gettime``; word 42 ns of spinning after which a waiting
          thread also calls ``sched_yield`` between polls
word 48   the busy word: 1 while a launch (or ``accy_pool_hold``) holds the block
========  ==============================================================================

``i64 accy_pool_work(ptr ctl, i64 woke)``: a worker's loop. Claims ranges while the ticket
has some, spins (``pause`` on x86) otherwise, checking the clock every 64 polls; once idle
longer than the budget since the last range it ran (a job whose ranges the others took does
not count: on many cores a small job keeps only the workers it needs awake) it sleeps: with
``futex`` it reads the sequence, announces itself in word 19, checks the ticket and the
quit flag once more (a job posted meanwhile is not missed: the poster stores the ticket,
then reads word 19) and waits in ``FUTEX_WAIT`` until the sequence moves (a post that sees
a sleeper bumps it and wakes as many as it has ranges less one, the caller's;
``accy_pool_wake``, for a shutdown, always does: the quit flag is stored from Python, so
the count may not be seen yet, but a sleeper that read the sequence before the bump returns
at once); without, it returns 1 to Python (announced in word 16, the ticket checked once
more). It returns 0 once the quit flag is set. ``woke = 1`` takes back the announcement of
a sleep in Python.

``void accy_pool_launch(ptr ctl, ptr fn, ptr ptrs, ptr scalars, i64 groups, i64 ranges)``:
takes the busy word (compare-and-swap; when another launch holds it, runs the whole launch
on the calling thread instead and returns), posts a job, claims ranges like the workers,
waits until every range is finished and frees the busy word. Reentrant: any thread, any
number at once, never waiting for another launch. ``void accy_pool_hold(ptr ctl)`` takes
the busy word, waiting for the running launch (freed with a release store of 0).
``i64 accy_pool_post(...)`` (the launch's arguments) takes the busy word and posts the job
without running any of it (0, nothing posted, when the word is held);
``void accy_pool_finish(ptr ctl, i64 ranges)`` then claims what is left, waits for every
range and frees the word: the caller does its own work in between (the native loop
driver's helpers: a job of one range per helper, whose ``fn`` is the helper loop). Range
``p`` of ``ranges`` is the ``p``-th of :func:`accy_backend_cpu.threadpool.split_range`; a
kernel is called as ``fn(ptrs, scalars, begin, end, groups)``.

Memory order: the job words are written before the ticket (a sequentially consistent
store), read by a thread only after its fetch-add claimed a range of that ticket, and no
job is posted before every claimed range of the previous one is finished, so a worker that
comes late finds an exhausted ticket and reads nothing of a job whose caller has returned.
"""

from __future__ import annotations

from accy_backend_cpu.claim_ir import claim_ir, pause

__all__ = ["POOL_ENTRIES", "pool_ir"]

#: the module's entry points
POOL_ENTRIES = ("accy_pool_work", "accy_pool_launch", "accy_pool_hold", "accy_pool_post",
                "accy_pool_finish", "accy_pool_wake")

_IR = """
declare i32 @sched_yield()
declare i32 @clock_gettime(i32, ptr)
declare i64 @syscall(i64, ...)
{pause_decl}

define internal i64 @now(ptr %ctl) nounwind {{
entry:
  %ts = alloca [2 x i64], align 8
  %clkp = getelementptr i64, ptr %ctl, i64 41
  %clk64 = load i64, ptr %clkp, align 8
  %clk = trunc i64 %clk64 to i32
  %r = call i32 @clock_gettime(i32 %clk, ptr %ts)
  %s = load i64, ptr %ts, align 8
  %np = getelementptr i64, ptr %ts, i64 1
  %n = load i64, ptr %np, align 8
  %sn = mul i64 %s, 1000000000
  %t = add i64 %sn, %n
  ret i64 %t
}}

define i64 @accy_pool_work(ptr %ctl, i64 %woke) nounwind {{
entry:
  %sleepp = getelementptr i64, ptr %ctl, i64 16
  %quitp = getelementptr i64, ptr %ctl, i64 24
  %budgetp = getelementptr i64, ptr %ctl, i64 40
  %yieldp = getelementptr i64, ptr %ctl, i64 42
  %budget = load i64, ptr %budgetp, align 8
  %yieldns = load i64, ptr %yieldp, align 8
  %lastv = alloca i64, align 8
  %nv = alloca i64, align 8
  %w = icmp ne i64 %woke, 0
  br i1 %w, label %ack, label %start
ack:
  %a = atomicrmw sub ptr %sleepp, i64 1 seq_cst, align 8
  br label %start
start:
  %t0 = call i64 @now(ptr %ctl)
  store i64 %t0, ptr %lastv, align 8
  store i64 0, ptr %nv, align 8
  br label %poll
poll:
  %avail = call i1 @available(ptr %ctl)
  br i1 %avail, label %claim, label %quitcheck
claim:
  %got = call i64 @claim_all(ptr %ctl)
  %worked = icmp ne i64 %got, 0
  br i1 %worked, label %restart, label %poll
restart:
  %tc = call i64 @now(ptr %ctl)
  store i64 %tc, ptr %lastv, align 8
  store i64 0, ptr %nv, align 8
  br label %poll
quitcheck:
  %q = load atomic i64, ptr %quitp acquire, align 8
  %stop = icmp ne i64 %q, 0
  br i1 %stop, label %quit, label %idle
quit:
  ret i64 0
idle:
  %tick = call i1 @tick(ptr %nv)
  br i1 %tick, label %clock, label %poll
clock:
  %tn = call i64 @now(ptr %ctl)
  %last = load i64, ptr %lastv, align 8
  %el = sub i64 %tn, %last
  %over = icmp sgt i64 %el, %budget
  br i1 %over, label %sleep, label %maybeyield
maybeyield:
  %long = icmp sgt i64 %el, %yieldns
  br i1 %long, label %yield, label %poll
yield:
  %y = call i32 @sched_yield()
  br label %poll
sleep:
  %sysp = getelementptr i64, ptr %ctl, i64 43
  %sys = load i64, ptr %sysp, align 8
  %fx = icmp ne i64 %sys, 0
  br i1 %fx, label %fsleep, label %psleep
psleep:
  %s = atomicrmw add ptr %sleepp, i64 1 seq_cst, align 8
  %late = call i1 @available(ptr %ctl)
  br i1 %late, label %unsleep, label %out
unsleep:
  %u = atomicrmw sub ptr %sleepp, i64 1 seq_cst, align 8
  br label %claim
out:
  ret i64 1
fsleep:
  %fslp = getelementptr i64, ptr %ctl, i64 19
  %seqp = getelementptr i64, ptr %ctl, i64 56
  %sq = load atomic i32, ptr %seqp seq_cst, align 8
  %fa = atomicrmw add ptr %fslp, i64 1 seq_cst, align 8
  %flate = call i1 @available(ptr %ctl)
  br i1 %flate, label %funclaim, label %fquit
funclaim:
  %fb = atomicrmw sub ptr %fslp, i64 1 seq_cst, align 8
  br label %claim
fquit:
  %fq = load atomic i64, ptr %quitp seq_cst, align 8
  %fstop = icmp ne i64 %fq, 0
  br i1 %fstop, label %funquit, label %fwait
funquit:
  %fc = atomicrmw sub ptr %fslp, i64 1 seq_cst, align 8
  ret i64 0
fwait:
  %sq64 = zext i32 %sq to i64
  %fr = call i64 (i64, ...) @syscall(i64 %sys, ptr %seqp, i64 128, i64 %sq64, ptr null)
  %fd = atomicrmw sub ptr %fslp, i64 1 seq_cst, align 8
  br label %start
}}

define internal void @wake(ptr %ctl, i64 %count) nounwind {{
entry:
  %sysp = getelementptr i64, ptr %ctl, i64 43
  %sys = load i64, ptr %sysp, align 8
  %fx = icmp ne i64 %sys, 0
  %some = icmp ne i64 %count, 0
  %go = and i1 %fx, %some
  br i1 %go, label %wake, label %out
wake:
  %seqp = getelementptr i64, ptr %ctl, i64 56
  %o = atomicrmw add ptr %seqp, i32 1 seq_cst, align 8
  %r = call i64 (i64, ...) @syscall(i64 %sys, ptr %seqp, i64 129, i64 %count)
  br label %out
out:
  ret void
}}

define void @accy_pool_wake(ptr %ctl) nounwind {{
entry:
  call void @wake(ptr %ctl, i64 2147483647)
  ret void
}}

define void @accy_pool_hold(ptr %ctl) nounwind {{
entry:
  %busyp = getelementptr i64, ptr %ctl, i64 48
  br label %try
try:
  %r = cmpxchg ptr %busyp, i64 0, i64 1 acquire monotonic, align 8
  %got = extractvalue {{ i64, i1 }} %r, 1
  br i1 %got, label %out, label %wait
wait:
{pause}  %y = call i32 @sched_yield()
  br label %try
out:
  ret void
}}

define internal void @post_job(ptr %ctl, ptr %fn, ptr %ptrs, ptr %sc, i64 %groups,
                               i64 %ranges) nounwind {{
entry:
  %fi = ptrtoint ptr %fn to i64
  call void @post(ptr %ctl, i64 %fi, ptr %ptrs, ptr %sc, i64 %groups, i64 %ranges)
  %fslp = getelementptr i64, ptr %ctl, i64 19
  %asleep = load atomic i64, ptr %fslp seq_cst, align 8
  %any = icmp ne i64 %asleep, 0
  %others = sub i64 %ranges, 1
  %few = icmp ult i64 %others, 1
  %count = select i1 %few, i64 1, i64 %others
  %wanted = select i1 %any, i64 %count, i64 0
  call void @wake(ptr %ctl, i64 %wanted)
  ret void
}}

define internal void @finish_job(ptr %ctl, i64 %ranges) nounwind {{
entry:
  %busyp = getelementptr i64, ptr %ctl, i64 48
  %donep = getelementptr i64, ptr %ctl, i64 8
  %yieldp = getelementptr i64, ptr %ctl, i64 42
  %nv = alloca i64, align 8
  %t0v = alloca i64, align 8
  store i64 0, ptr %nv, align 8
  store i64 0, ptr %t0v, align 8
  %mine = call i64 @claim_all(ptr %ctl)
  br label %wait
wait:
  %d = load atomic i64, ptr %donep acquire, align 8
  %all = icmp eq i64 %d, %ranges
  br i1 %all, label %out, label %spin
spin:
  %tick = call i1 @tick(ptr %nv)
  br i1 %tick, label %clock, label %wait
clock:
  %tn = call i64 @now(ptr %ctl)
  %t0 = load i64, ptr %t0v, align 8
  %first = icmp eq i64 %t0, 0
  br i1 %first, label %mark, label %check
mark:
  store i64 %tn, ptr %t0v, align 8
  br label %wait
check:
  %el = sub i64 %tn, %t0
  %yieldns = load i64, ptr %yieldp, align 8
  %long = icmp sgt i64 %el, %yieldns
  br i1 %long, label %yield, label %wait
yield:
  %y = call i32 @sched_yield()
  br label %wait
out:
  store atomic i64 0, ptr %busyp release, align 8
  ret void
}}

define internal i1 @take(ptr %ctl) nounwind {{
entry:
  %busyp = getelementptr i64, ptr %ctl, i64 48
  %r = cmpxchg ptr %busyp, i64 0, i64 1 acquire monotonic, align 8
  %got = extractvalue {{ i64, i1 }} %r, 1
  ret i1 %got
}}

define void @accy_pool_launch(ptr %ctl, ptr %fn, ptr %ptrs, ptr %sc, i64 %groups,
                              i64 %ranges) nounwind {{
entry:
  %got = call i1 @take(ptr %ctl)
  br i1 %got, label %post, label %inline
inline:
  %ig = trunc i64 %groups to i32
  call void %fn(ptr %ptrs, ptr %sc, i32 0, i32 %ig, i32 %ig)
  ret void
post:
  call void @post_job(ptr %ctl, ptr %fn, ptr %ptrs, ptr %sc, i64 %groups, i64 %ranges)
  call void @finish_job(ptr %ctl, i64 %ranges)
  ret void
}}

define i64 @accy_pool_post(ptr %ctl, ptr %fn, ptr %ptrs, ptr %sc, i64 %groups,
                           i64 %ranges) nounwind {{
entry:
  %got = call i1 @take(ptr %ctl)
  br i1 %got, label %post, label %busy
busy:
  ret i64 0
post:
  call void @post_job(ptr %ctl, ptr %fn, ptr %ptrs, ptr %sc, i64 %groups, i64 %ranges)
  ret i64 1
}}

define void @accy_pool_finish(ptr %ctl, i64 %ranges) nounwind {{
entry:
  call void @finish_job(ptr %ctl, i64 %ranges)
  ret void
}}
"""


def pool_ir(triple: str) -> str:
    """The pool module's LLVM IR text for target ``triple`` (``pause`` on x86 only)."""
    decl, call = pause(triple)
    return _IR.format(pause_decl=decl, pause=call) + claim_ir(triple, job=32, done=8)
