"""CUDA streams on a fake driver: every launch on a stream is ordered after the transfers
before it, and a read after every launch before it, through events alone.

The driver below keeps, per stream, the set of operations that happen before the stream's
next operation (in-order streams; ``cuEventRecord`` snapshots a stream's set,
``cuStreamWaitEvent`` adds a snapshot to a stream); a test then checks what each operation
is ordered after. Host synchronization is not counted, so ordering must come from events.
"""

from __future__ import annotations

import numpy as np
from accy.backend import Geometry
from accy_backend_cuda.backend import CudaBackend
from test_driver import FakeDriver, axpy


class _Stream:
    pass


class _Event(list):
    pass


class _OrderDriver(FakeDriver):
    """A FakeDriver whose streams and events track happens-before sets."""

    def __init__(self) -> None:
        super().__init__()
        self.before: dict[int, frozenset[int]] = {}  # stream id → ops ordered before its next
        self.ops: list[tuple[str, object]] = []  # (kind, stream) per op id
        self.deps: list[frozenset[int]] = []  # op id → ops it is ordered after
        self.snap: dict[int, frozenset[int]] = {}  # event id → recorded set

    def _op(self, kind: str, stream: object) -> int:
        k = id(stream)
        ordered = self.before.get(k, frozenset())
        self.ops.append((kind, stream))
        self.deps.append(ordered)
        self.before[k] = ordered | {len(self.ops) - 1}
        return len(self.ops) - 1

    def create_stream(self) -> object:
        return _Stream()

    def create_event(self) -> object:
        return _Event()

    def is_event(self, obj: object) -> bool:
        return isinstance(obj, _Event)

    def record_event(self, event, stream) -> None:
        self.snap[id(event)] = self.before.get(id(stream), frozenset())

    def wait_event(self, stream, event) -> None:
        k = id(stream)
        self.before[k] = self.before.get(k, frozenset()) | self.snap.get(id(event), frozenset())

    def copy_to_device(self, pointer, host, stream) -> None:
        self._op("write", stream)

    def copy_to_host(self, host, pointer, stream) -> None:
        self._op("read", stream)

    def fill_bytes(self, pointer, value, nbytes, stream) -> None:
        self._op("fill", stream)

    def copy_device(self, dst, src, nbytes, stream) -> None:
        self._op("copy", stream)

    def stream_synchronize(self, stream) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def destroy_stream(self, stream) -> None:
        pass

    def destroy_event(self, event) -> None:
        pass

    def unload_module(self, module) -> None:
        pass

    def free(self, pointer) -> None:
        pass

    def launch(self, function, grid, block, args, stream, shared_bytes=0) -> None:
        self._op("launch", stream)


def test_launches_on_streams_are_ordered_after_transfers_and_before_reads():
    drv = _OrderDriver()
    be = CudaBackend(drv)
    assert "streams" in be.capabilities().features
    k = be.load(be.compile(axpy()))
    y, x, z = be.allocate(256), be.allocate(256), be.allocate(256)
    s1, s2, ev = be.create_stream(), be.create_stream(), be.create_event()
    geom, scal = Geometry(1, 64), [("i32", 64), ("f32", 2.0)]
    be.write(x, np.ones(64, np.float32))  # op 0
    be.launch(k, geom, [y, x], scal, stream=s1, signal_event=ev)  # 1
    be.fill(z, 0)  # 2
    be.launch(k, geom, [z, y], scal, stream=s2, wait_events=[ev])  # 3
    be.launch(k, geom, [x, z], scal, stream=s1)  # 4
    be.read(y, np.empty(64, np.float32))  # 5
    kinds = [kind for kind, _ in drv.ops]
    assert kinds == ["write", "launch", "fill", "launch", "launch", "read"]
    dep = drv.deps
    assert 0 in dep[1] and {0, 1, 2} <= dep[3]  # after the write, the fill and the event
    assert 2 in dep[4]  # the fill on the copy stream is waited for by stream 1 too
    assert 1 in dep[2]  # the fill joined stream 1 (WAR on any buffer it touched)
    assert {0, 1, 2, 3, 4} <= dep[5]  # the read sees every launch on every stream
    assert drv.ops[1][1] is s1 and drv.ops[3][1] is s2  # launches went to their streams
    for obj in (s1, s2, ev, k):
        be.destroy(obj)
    for b in (x, y, z):
        be.free(b)
    assert be.live_objects() == {"kernels": 0, "buffers": 0, "streams": 0, "events": 0}


def _diamond():
    """A: s1 = x; B: s2 = x (independent of A); C: s3 = s1 + s2; D: s1 = s3."""
    from accy.ir import TensorType
    from accy.kernel import KernelBuilder
    from accy.runtime import GraphLaunch, LaunchGraph

    def kernel(name, inputs):
        kb = KernelBuilder(name, 64)
        y = kb.buffer("y", "f32", "write")
        xs = [kb.buffer(f"x{k}", "f32", "read") for k in range(inputs)]
        i = kb.global_id()
        with kb.if_(i < kb.scalar("n", "i32")):
            v = xs[0][i]
            for x in xs[1:]:
                v = v + x[i]
            kb.store(y, i, v)
        return kb.build()

    t = TensorType("f32", (64,))
    g = LaunchGraph(slot_bytes=[256] * 4, param_slots=[0], param_types=[t],
                    result_slots=[1, 3], result_types=[t, t], name="diamond")
    g.kernels = {"copy": kernel("copy", 1), "add2": kernel("add2", 2)}
    n = (("i32", 64),)
    g.launches = [GraphLaunch("copy", 1, 64, (1, 0), n), GraphLaunch("copy", 1, 64, (2, 0), n),
                  GraphLaunch("add2", 1, 64, (3, 1, 2), n), GraphLaunch("copy", 1, 64, (1, 3), n)]
    return g


def test_an_executable_spreads_independent_launches_over_cuda_streams():
    from accy.runtime import Executable, load_all

    drv = _OrderDriver()
    be = CudaBackend(drv)
    g = _diamond()
    arts = {name: be.compile(k) for name, k in g.kernels.items()}
    exe = Executable(be, g, load_all(be, arts), owns_kernels=True)
    assert exe._stream_plan().count == 2
    with exe.prepare(np.ones(64, np.float32)) as inv:
        inv.submit()
        inv.read()
    ops = drv.ops
    launches = [i for i, (kind, _) in enumerate(ops) if kind == "launch"]
    write = next(i for i, (kind, _) in enumerate(ops) if kind == "write")
    reads = [i for i, (kind, _) in enumerate(ops) if kind == "read"]
    assert len(launches) == 4 and len({id(ops[i][1]) for i in launches}) == 2  # A, B apart
    a, b, c, d = launches
    assert all(write in drv.deps[i] for i in launches)  # the input upload first
    assert {a, b} <= drv.deps[c] and c in drv.deps[d]  # C after A and B (an event), D after C
    assert reads and all(set(launches) <= drv.deps[r] for r in reads)  # reads after all
    exe.close()
    assert be.live_objects() == {"kernels": 0, "buffers": 0, "streams": 0, "events": 0}


def test_a_launch_from_another_thread_waits_for_a_transfer_joining_the_streams():
    # a transfer joins every stream with pending launches; another thread's launch added a
    # stream to that table meanwhile (RuntimeError: dictionary changed size during
    # iteration) and was ordered before nothing
    import threading

    started: list[threading.Thread] = []

    class _Interleaving(_OrderDriver):
        other: threading.Thread | None = None

        def record_event(self, event, stream) -> None:
            super().record_event(event, stream)
            if self.other is not None:  # mid-join: the other thread launches now
                t, self.other = self.other, None
                t.start()
                t.join(0.3)  # done now, unless the transfer holds the backend
                started.append(t)

    drv = _Interleaving()
    be = CudaBackend(drv)
    k = be.load(be.compile(axpy()))
    y, x = be.allocate(256), be.allocate(256)
    s1, s2 = be.create_stream(), be.create_stream()
    geom, scal = Geometry(1, 64), [("i32", 64), ("f32", 2.0)]
    be.launch(k, geom, [y, x], scal, stream=s1)  # op 0: s1 has a pending launch
    drv.other = threading.Thread(target=be.launch, args=(k, geom, [y, x], scal),
                                 kwargs={"stream": s2})
    be.write(x, np.ones(64, np.float32))  # op 1: joins s1, meanwhile the other thread
    started[0].join()
    assert [kind for kind, _ in drv.ops] == ["launch", "write", "launch"]
    assert 1 in drv.deps[2]  # the other thread's launch is ordered after the transfer


def test_a_destroyed_kernel_is_a_launch_error():
    import pytest
    from accy.errors import LaunchError

    be = CudaBackend(_OrderDriver())
    loaded = be.load(be.compile(axpy()))
    y, x = be.allocate(256), be.allocate(256)
    be.destroy(loaded)
    with pytest.raises(LaunchError, match="destroyed"):
        be.launch(loaded, Geometry(1, 64), [y, x], [("i32", 64), ("f32", 2.0)])
    be.destroy(loaded)  # twice: nothing to unload
    assert be.live_objects()["kernels"] == 0


def test_a_freed_buffer_is_a_launch_error_not_a_dangling_pointer():
    import pytest
    from accy.errors import LaunchError

    be = CudaBackend(_OrderDriver())
    k = be.load(be.compile(axpy()))
    y, x = be.allocate(256), be.allocate(256)
    be.free(x)
    with pytest.raises(LaunchError, match="freed"):
        be.launch(k, Geometry(1, 64), [y, x], [("i32", 64), ("f32", 2.0)])
    with pytest.raises(LaunchError, match="freed"):
        be.write(x, np.ones(64, np.float32))
    be.free(x)  # twice: nothing to free
    be.free(y)
    assert be.live_objects()["buffers"] == 0
