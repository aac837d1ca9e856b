"""Coded frames (profile 2) through whdrx: the coded conformance captures, transmit(mcs=...)
round trips, and the RS failures whdrx.batch's summary counts."""
import json

import numpy as np
import pytest

import whdrx
from whdrx import batch

CODED = ["coded_mcs0_cf32", "coded_mcs1_ci16", "coded_mcs2_ci8", "coded_mcs7_cf32", "coded_lowsnr_mcs1_cf32",
         "coded_truncated_mcs2_ci16"]


@pytest.mark.parametrize("name", CODED)
def test_coded_conformance(vectors, name):
    """The information bytes of every whole coded frame equal the truth; a truncated one writes none."""
    r = whdrx.decode(vectors / f"{name}.sigmf-meta", backend="cpu", threads=2)
    listed = json.loads((vectors / f"{name}.frames.json").read_text())
    truth = np.fromfile(vectors / f"{name}.truth", dtype=np.uint8)
    assert len(r.frames) == len(listed)
    expected, pos = [], 0
    for f, e in zip(r.frames, listed):
        assert (f["mcs"], f["nd"], f["mod"]) == (e["mcs"], e["nd"], e["mod"]), f
        assert f["rs_failed"] == 0, f
        written = 0 if f["truncated"] else e["payload_bytes"]
        assert f["payload_bytes"] == written, f
        expected.append(truth[pos:pos + written])
        pos += e["payload_bytes"]
    assert pos == truth.size
    assert np.array_equal(r.payload, np.concatenate(expected))
    assert r.rs_failed == 0
    assert r.info_gbps is not None and r.info_gbps > 0


def test_transmit_mixes_coded_and_uncoded_frames_and_decode_undoes_them():
    t = whdrx.transmit(mcs=[0, 1, 2, 7, None], mod="qam16", frames=5, nd=[3, 9], snr_db=30, seed=4)
    assert [f.get("mcs") for f in t.frames] == [0, 1, 2, 7, None]
    assert [f["mod"] for f in t.frames] == ["qpsk", "qpsk", "qam16", "qam16", "qam16"]
    r = whdrx.decode(t.samples, backend="cpu", threads=2)
    assert [f.get("mcs") for f in r.frames] == [0, 1, 2, 7, None]
    assert [f["payload_bytes"] for f in r.frames] == [f.get("payload_bytes", f["nd"] * 168) for f in t.frames]
    assert np.array_equal(r.payload, t.truth)


@pytest.mark.parametrize("bad", [3, "5", -1, 2.0, True])
def test_transmit_rejects_an_undefined_mcs(bad):
    with pytest.raises(ValueError, match="mcs"):
        whdrx.transmit(mcs=bad)


def test_batch_summary_counts_rs_failures(tmp_path):
    """At an SNR where MCS 7's Viterbi leaves more than RS corrects, the row counts the
    codewords RS gave up on, as the report's frames do."""
    base = tmp_path / "weak"
    whdrx.transmit(base, mcs=7, frames=6, nd=40, snr_db=9.0, seed=2)
    row = batch.decode_one(str(base) + ".sigmf-meta", str(tmp_path), "weak", backend="cpu", threads=2)
    assert row["status"] == "ok", row
    report = json.loads((tmp_path / row["report"]).read_text())
    failed = sum(f.get("rs_failed", 0) for f in report["frames"])
    assert row["rs_failed"] == failed
    assert failed > 0, "the SNR was meant to leave codewords RS cannot correct"
    assert "RS failures" in batch.table([row])
