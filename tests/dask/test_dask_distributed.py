"""accy.dask on a local distributed cluster of two worker processes (loopback only): the
acceptance programs, one compilation per worker and signature, and a killed worker."""

import os
import signal
import time
from pathlib import Path

import accy.dask
import accy.numpy as anp
import dask.array as da
import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
ak = pytest.importorskip("accy_kernels")
ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(7)
X = RNG.standard_normal((4000, 64)).astype(np.float32)
# one worker runs the whole module: the cluster (two worker processes) starts once, not once
# per pytest-xdist worker
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("dask_cluster")]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=40)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def _dx():
    return da.from_array(X, chunks=(500, 64))


def test_elementwise_chain_softmax_and_reductions(client):
    f = accy.dask.jit(lambda x: (anp.exp(x) * 0.5 + anp.tanh(x), anp.softmax(x, axis=1),
                                 anp.sum(x), anp.mean(x)))
    chain, soft, total, mean = client.compute(f(_dx()), sync=True)
    np.testing.assert_allclose(chain, np.exp(X) * 0.5 + np.tanh(X), rtol=1e-5, atol=1e-6)
    e = np.exp(X - X.max(1, keepdims=True))
    np.testing.assert_allclose(soft, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose([total, mean], [X.sum(), X.mean()], rtol=1e-3, atol=1e-3)


def test_mlp_forward_over_row_chunks(client):
    w1 = RNG.standard_normal((64, 128)).astype(np.float32)
    b1 = RNG.standard_normal(128).astype(np.float32)
    w2 = RNG.standard_normal((128, 10)).astype(np.float32)
    f = accy.dask.jit(lambda x, w1, b1, w2: anp.maximum(x @ w1 + b1, 0.0) @ w2)
    got = client.compute(f(_dx(), w1, b1, w2), sync=True)
    np.testing.assert_allclose(got, np.maximum(X @ w1 + b1, 0) @ w2, rtol=1e-4, atol=1e-3)


def test_spmv_over_a_row_partitioned_matrix(client):
    found = sorted(p for p in ROOT.rglob("pushpull.mtx") if ".venv" not in p.parts)
    if not found:
        pytest.skip("pushpull.mtx is not in the repository's test data")
    A = ak.read_matrix(found[0]).tocsr()
    x = RNG.standard_normal(A.shape[1])
    got = client.compute(accy.dask.spmv(accy.dask.from_scipy(A, 500), x), sync=True)
    np.testing.assert_allclose(got, A @ x, rtol=1e-10, atol=1e-10)


def test_random_uniform_in_four_chunks_equals_the_single_stream(client):
    got = client.compute(accy.dask.uniform((1_000_003,), 1234, chunks=250_001), sync=True)
    np.testing.assert_array_equal(got.view(np.uint32),
                                  ak.random.uniform((1_000_003,), 1234).view(np.uint32))


def test_sort_of_ten_million_keys_in_eight_chunks(client):
    keys = accy.dask.uniform((10_000_000,), 99, chunks=1_250_000)  # drawn on the workers
    got = client.compute(accy.dask.sort(keys), sync=True)
    np.testing.assert_array_equal(got, np.sort(ak.random.uniform((10_000_000,), 99)))


def test_compilation_happens_once_per_worker_and_signature(client):
    client.run(accy.dask.worker.reset_stats)
    f = accy.dask.jit(lambda x: anp.sqrt(anp.abs(x)) + 2.0)
    x = da.from_array(X, chunks=(250, 64))  # 16 blocks of one signature
    client.compute(f(x), sync=True)
    first = client.run(accy.dask.worker.stats)
    assert sum(s["runs"] for s in first.values()) == 16
    assert all(s["compiles"] <= 1 for s in first.values()), first
    client.compute(f(x) * 1.0, sync=True)  # a later graph, same signature
    again = client.run(accy.dask.worker.stats)
    assert {w: s["compiles"] for w, s in again.items()} == \
        {w: s["compiles"] for w, s in first.items()}


def _slow(block):
    time.sleep(0.05)
    return block


def test_a_killed_worker_is_retried_elsewhere_and_the_result_is_right(client):
    x = da.from_array(X, chunks=(100, 64)).map_blocks(_slow, dtype=X.dtype)
    fut = client.compute(accy.dask.jit(lambda x: x * 3.0 - 1.0)(x))
    time.sleep(0.3)
    pids = client.run(os.getpid)
    os.kill(pids[sorted(pids)[0]], signal.SIGKILL)  # the nanny starts a new worker
    np.testing.assert_allclose(fut.result(timeout=120), X * 3.0 - 1.0, rtol=1e-6)
