"""The GPU path of whdrx and whdrx.batch, against the conformance captures' truth and
against the CPU reference in the same process. Run where a CUDA device is present (the
GPU machine's round, scripts/device/python_device_round.sh); skipped, with the reason, where
there is none (CI)."""

import json

import numpy as np
import pytest

import whdrx
from test_batch import check_summary, run_batch
from test_decode import CAPTURES, check_against_truth, load_samples

pytestmark = pytest.mark.skipif(whdrx._whdrx.device_count() == 0,
                                reason="no CUDA device here: the GPU path of whdrx is run on the GPU machine")


def without_snr(frame):
    """A frame's fields but its SNR estimate, a float sum whose order differs between the
    backends (the C++ agreement tests compare the same fields)."""
    return {k: v for k, v in frame.items() if k != "snr_db"}


@pytest.mark.parametrize("name", CAPTURES)
def test_gpu_decodes_the_conformance_captures_as_the_cpu(vectors, name):
    """From the path: the table's frames and payload, and the CPU's frames, bytes and int8
    soft values (the C++ tests show the two backends' int8 values equal on these)."""
    path = vectors / f"{name}.sigmf-meta"
    g = whdrx.decode(path, backend="gpu", llr=True)
    c = whdrx.decode(path, backend="cpu", llr=True, threads=2)
    assert g.report["timing"]["backend"] == "gpu" and c.report["timing"]["backend"] == "cpu"
    check_against_truth(vectors, name, g, g.report["input"]["samples"])
    assert [without_snr(f) for f in g.frames] == [without_snr(f) for f in c.frames]
    assert all(abs(a["snr_db"] - b["snr_db"]) < 1e-4 for a, b in zip(g.frames, c.frames))
    assert g.header_failures == c.header_failures
    assert np.array_equal(g.payload, c.payload)
    assert g.llr.dtype == np.int8 and np.array_equal(g.llr, c.llr)


@pytest.mark.parametrize("name", CAPTURES)
def test_gpu_decodes_numpy_arrays(vectors, name):
    data, meta = load_samples(vectors, name)
    r = whdrx.decode(data, backend="gpu", sample_rate=meta["core:sample_rate"])
    check_against_truth(vectors, name, r, r.report["input"]["samples"])


def test_gpu_round_trip_of_packets():
    """Many short frames of both modulations through a channel: every frame found, the
    CPU's payload, and few bit errors against what was sent (4 random taps fade some
    tones deeply even at 30 dB)."""
    t = whdrx.transmit(datatype="ci8", frames=300, nd=[4, 52], mod="qpsk,qam16", taps=4, cfo_hz=3e5, random_phase=True,
                       snr_db=30, seed=11)
    r = whdrx.decode(t.samples, backend="gpu", truth=t.truth)
    c = whdrx.decode(t.samples, backend="cpu", threads=2)
    assert len(r.frames) == 300 and not r.header_failures
    assert np.array_equal(r.payload, c.payload)
    assert r.truth["missing_bits"] == 0 and r.truth["ber"] < 1e-3, r.truth


def test_gpu_receiver_kept_between_captures():
    """The receiver decode keeps serves capture after capture of one type, larger and
    smaller than the one its buffers were made for: each exactly as a receiver made for
    it alone (release() between), and with the CPU's payload."""
    sizes = [40, 400, 7, 400, 120]
    ts = [whdrx.transmit(datatype="ci8", frames=n, nd=[4, 52], mod="qpsk,qam16", taps=4, snr_db=25, seed=20 + n)
          for n in sizes]
    kept = [whdrx.decode(t.samples, backend="gpu", llr=True) for t in ts]
    for t, k in zip(ts, kept):
        whdrx.release()
        fresh = whdrx.decode(t.samples, backend="gpu", llr=True)
        assert k.frames == fresh.frames and k.header_failures == fresh.header_failures
        assert np.array_equal(k.payload, fresh.payload) and np.array_equal(k.llr, fresh.llr)
        c = whdrx.decode(t.samples, backend="cpu", threads=2)
        assert [f["start"] for f in k.frames] == [f["start"] for f in c.frames]
        assert np.array_equal(k.payload, c.payload)
    whdrx.release()


def test_batch_on_the_gpu(tmp_path):
    """whdrx.batch with its default local cluster (a worker per GPU, pinned by
    CUDA_VISIBLE_DEVICES): every capture decoded on the GPU, the broken one failed."""
    d = tmp_path / "archive"
    d.mkdir()
    made = {}
    for k in range(6):
        t = whdrx.transmit(d / f"c{k}", datatype=["ci8", "ci16_le", "cf32_le"][k % 3], frames=3 + k, nd=[4, 30],
                           mod="qpsk,qam16", snr_db=30, seed=100 + k)
        made[t.paths["meta_path"]] = (f"c{k}", t)
    (d / "z_broken.sigmf-meta").write_text("{ this is not json")
    (d / "z_broken.sigmf-data").write_bytes(b"\0" * 4096)
    out = tmp_path / "out"
    p = run_batch(d, "--out", out, "--backend", "gpu")
    assert p.returncode == 1, "one capture failed"
    rows = check_summary(out, made, str(d / "z_broken.sigmf-meta"))
    for capture in made:
        report = json.loads((out / rows[capture]["report"]).read_text())
        assert report["timing"]["backend"] == "gpu", capture
