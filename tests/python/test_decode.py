"""whdrx.decode against the conformance captures (../shared/vectors/README.md's table,
as tests/baseband/conformance_test.cpp checks them), from paths and from numpy arrays;
its errors; transmit -> decode round trips; SigMF interop with the sigmf package."""

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

import whdrx

CAPTURES = ["basic_qpsk_cf32", "basic_qam16_ci16", "impaired_mixed_ci8", "header_crc_fail_cf32", "truncated_ci16",
            "noise_only_ci8"]
SYMBOL_LEN = whdrx._whdrx.SYMBOL_LEN
START_TOLERANCE = 4  # a multipath channel delays the energy by a few samples
BYTES_PER_SYMBOL = {"qpsk": 84, "qam16": 168}
COMPONENT = {"cf32_le": np.dtype("<c8"), "ci16_le": np.dtype("<i2"), "ci8": np.dtype("i1")}


def check_against_truth(vectors, name, result, nof_samples):
    """What the table demands: the frames of NAME.frames.json (start within a few samples,
    mod, nd, seq, whole symbols present, truncation), the header failures, and a payload
    equal, bit for bit, to NAME.truth's bytes of the symbols present."""
    listed = json.loads((vectors / f"{name}.frames.json").read_text())
    truth = np.fromfile(vectors / f"{name}.truth", dtype=np.uint8)
    expected = []
    pos = 0
    accepted = failed = 0
    for e in listed:
        if not e["header_ok"]:
            h = result.header_failures[failed]
            assert abs(h["start"] - e["start"]) <= START_TOLERANCE, (name, h)
            assert h["reason"] == "crc", (name, h)
            failed += 1
            continue
        f = result.frames[accepted]
        bps = BYTES_PER_SYMBOL[e["mod"]]
        whole = (nof_samples - e["start"]) // SYMBOL_LEN
        present = min(e["nd"], whole - 3 if whole > 3 else 0)
        assert abs(f["start"] - e["start"]) <= START_TOLERANCE, (name, accepted, f)
        assert (f["mod"], f["nd"], f["seq"]) == (e["mod"], e["nd"], e["seq"]), (name, accepted, f)
        assert f["symbols"] == present and f["truncated"] == (present < e["nd"]), (name, accepted, f)
        assert f["payload_offset"] == sum(len(x) for x in expected), (name, accepted)
        assert f["payload_bytes"] == present * bps, (name, accepted)
        expected.append(truth[pos:pos + present * bps])
        pos += e["nd"] * bps
        accepted += 1
    assert pos == truth.size, f"{name}: truth holds more than its frames"
    assert len(result.frames) == accepted, f"{name}: extra frames"
    assert len(result.header_failures) == failed, f"{name}: extra header failures"
    expected = np.concatenate(expected) if expected else np.zeros(0, np.uint8)
    assert result.payload.dtype == np.uint8
    assert result.payload.shape == expected.shape, name
    errors = np.unpackbits(result.payload ^ expected).sum()
    assert errors == 0, f"{name}: {errors} bit errors"
    if name == "impaired_mixed_ci8":
        for f in result.frames:
            assert abs(f["cfo_hz"] - 700e3) < 5e3, f


def load_samples(vectors, name):
    """The capture's samples as numpy reads them (the layout decode takes), and its meta."""
    meta = json.loads((vectors / f"{name}.sigmf-meta").read_text())["global"]
    data = np.fromfile(vectors / f"{name}.sigmf-data", dtype=COMPONENT[meta["core:datatype"]])
    if meta["core:datatype"] != "cf32_le":
        data = data.reshape(-1, 2)
    return data, meta


@pytest.mark.parametrize("name", CAPTURES)
def test_conformance_from_path(vectors, name):
    r = whdrx.decode(vectors / f"{name}.sigmf-meta", backend="cpu", threads=2)
    assert r.report["input"]["path"] == str(vectors / f"{name}.sigmf-meta")
    check_against_truth(vectors, name, r, r.report["input"]["samples"])
    assert r.report["payload_bytes"] == r.payload.size
    assert r.report["interrupted"] is False
    assert r.choice["backend"] == "cpu"


def test_conformance_raw_file(vectors):
    r = whdrx.decode(str(vectors / "basic_qpsk_cf32.cf32"), backend="cpu")
    assert r.report["input"]["datatype"] == "cf32_le" and "sample_rate" not in r.report["input"]
    check_against_truth(vectors, "basic_qpsk_cf32", r, r.report["input"]["samples"])


@pytest.mark.parametrize("name, layout", [(n, "as_read") for n in CAPTURES] +
                         [(n, "flat") for n in CAPTURES if not n.endswith("cf32")])
def test_conformance_from_numpy(vectors, name, layout):
    """An array gives what the file gives: the same frames (every field), the same bytes.
    Integer samples as (n, 2) and as (2n,)."""
    data, meta = load_samples(vectors, name)
    if layout == "flat":
        data = data.reshape(-1)
    r = whdrx.decode(data, backend="cpu", sample_rate=meta["core:sample_rate"])
    nof_samples = r.report["input"]["samples"]
    assert nof_samples == (data.size if data.dtype.kind == "c" else data.size // 2)
    check_against_truth(vectors, name, r, nof_samples)
    from_path = whdrx.decode(vectors / f"{name}.sigmf-meta", backend="cpu")
    assert r.frames == from_path.frames
    assert r.header_failures == from_path.header_failures
    assert np.array_equal(r.payload, from_path.payload)


def test_kept_receiver_gives_what_a_new_one_gives(vectors):
    """decode keeps its receiver for the next call with the same settings: capture after
    capture, each result is what a receiver made for it alone gives (release() between)."""
    names = [n for n in CAPTURES if n.endswith("ci8")] * 2
    kept = [whdrx.decode(vectors / f"{n}.sigmf-meta", backend="cpu", llr=True, threads=2) for n in names]
    plain = whdrx.decode(vectors / f"{names[0]}.sigmf-meta", backend="cpu", threads=2)  # other settings: another receiver
    assert plain.llr is None and np.array_equal(plain.payload, kept[0].payload)
    for n, r in zip(names, kept):
        whdrx.release()
        fresh = whdrx.decode(vectors / f"{n}.sigmf-meta", backend="cpu", llr=True, threads=2)
        assert r.frames == fresh.frames and r.header_failures == fresh.header_failures, n
        assert np.array_equal(r.payload, fresh.payload) and np.array_equal(r.llr, fresh.llr), n
    whdrx.release()
    whdrx.release()  # nothing kept: nothing to do


def test_truth_counts(vectors):
    r = whdrx.decode(vectors / "impaired_mixed_ci8.sigmf-meta", truth=vectors / "impaired_mixed_ci8.truth")
    assert (r.bit_errors, r.missing_bits, r.ber) == (0, 0, 0.0)
    assert r.compared_bits == 8 * (vectors / "impaired_mixed_ci8.truth").stat().st_size
    assert r.truth["path"] == str(vectors / "impaired_mixed_ci8.truth")
    # The truncated capture: 4 of frame 1's 10 symbols are missing from the payload.
    r = whdrx.decode(vectors / "truncated_ci16.sigmf-meta", truth=vectors / "truncated_ci16.truth")
    assert r.bit_errors == 0 and r.missing_bits == 4 * 168 * 8
    # Truth as bytes, with one bit flipped: one bit error.
    truth = bytearray((vectors / "basic_qpsk_cf32.truth").read_bytes())
    truth[100] ^= 0x10
    r = whdrx.decode(vectors / "basic_qpsk_cf32.sigmf-meta", truth=bytes(truth))
    assert r.bit_errors == 1 and r.truth["path"] == "<bytes>"
    assert whdrx.decode(vectors / "basic_qpsk_cf32.sigmf-meta").truth is None


def test_payload_owns_its_bytes_and_output_file(vectors, tmp_path):
    r = whdrx.decode(vectors / "basic_qam16_ci16.sigmf-meta")
    assert r.payload.flags.owndata is False and r.payload.base is not None  # the decoder's buffer, no copy
    payload = r.payload
    del r
    assert np.array_equal(payload, np.fromfile(vectors / "basic_qam16_ci16.truth", dtype=np.uint8))
    out = tmp_path / "p.bin"
    r = whdrx.decode(vectors / "basic_qam16_ci16.sigmf-meta", output=out)
    assert r.payload is None
    assert out.read_bytes() == (vectors / "basic_qam16_ci16.truth").read_bytes()


def test_same_report_as_whd_rx(vectors, tmp_path):
    """The module's report is whd-rx's (timing and memory aside)."""
    import shutil
    import subprocess
    exe = os.environ.get("WHD_RX") or shutil.which("whd-rx")
    if not exe:
        pytest.skip("whd-rx not found (scripts/pytest.sh sets WHD_RX)")
    capture = str(vectors / "header_crc_fail_cf32.sigmf-meta")
    cli = json.loads(subprocess.run([exe, capture, "--backend", "cpu", "-q"], check=True, capture_output=True,
                                    text=True).stdout)
    mod = whdrx.decode(capture, backend="cpu").report
    for r in (cli, mod):
        r.pop("timing")
        r.pop("resources")
    assert mod == cli


# ------------------------------------------------------------------ errors


def test_capture_errors(vectors, tmp_path):
    with pytest.raises(whdrx.CaptureError, match="does not exist"):
        whdrx.decode(tmp_path / "missing.ci8")
    (tmp_path / "bad.sigmf-meta").write_text("{ not json")
    (tmp_path / "bad.sigmf-data").write_bytes(b"")
    with pytest.raises(whdrx.CaptureError, match="not valid JSON"):
        whdrx.decode(tmp_path / "bad.sigmf-meta")
    (tmp_path / "empty.ci8").write_bytes(b"")
    with pytest.raises(whdrx.CaptureError, match="is empty"):
        whdrx.decode(tmp_path / "empty.ci8")
    (tmp_path / "odd.ci16").write_bytes(b"\0" * 6)
    with pytest.raises(whdrx.CaptureError, match="not a whole number"):
        whdrx.decode(tmp_path / "odd.ci16")
    (tmp_path / "short.cf32").write_bytes(b"\0" * 8 * 100)
    with pytest.raises(whdrx.CaptureError, match="fewer than one OFDM symbol"):
        whdrx.decode(tmp_path / "short.cf32")
    with pytest.raises(whdrx.CaptureError, match="fewer than one OFDM symbol"):
        whdrx.decode(np.zeros(100, np.complex64))
    with pytest.raises(whdrx.CaptureError, match="does not name a sample format"):
        whdrx.decode(vectors / "README.md")
    assert issubclass(whdrx.CaptureError, RuntimeError)


@pytest.mark.parametrize("kwargs, match", [
    (dict(backend="fpga"), "backend must be"),
    (dict(link="int4"), "link must be"),
    (dict(gpus=0), "gpus must be"),
    (dict(gpus="some"), "gpus must be"),
    (dict(threads=-1), "threads must be"),
    (dict(sample_rate=-1.0), "sample_rate must be"),
    (dict(format="ci12"), "format must be"),
])
def test_bad_arguments(vectors, kwargs, match):
    with pytest.raises(ValueError, match=match):
        whdrx.decode(vectors / "basic_qpsk_cf32.cf32", **kwargs)


@pytest.mark.parametrize("array, match", [
    (np.zeros(1001, np.int8), "shape"),
    (np.zeros((10, 3), np.int16), "shape"),
    (np.zeros(1000, np.complex128), "complex64"),
    (np.zeros(1000, np.float32), "not supported"),
    (np.zeros((10, 10), np.complex64), "1-D"),
])
def test_bad_arrays(array, match):
    with pytest.raises(ValueError, match=match):
        whdrx.decode(array)


def test_other_errors(vectors, tmp_path):
    with pytest.raises(ValueError, match="llr must be"):
        whdrx.decode(vectors / "basic_qpsk_cf32.cf32", llr="f64")
    with pytest.raises(ValueError, match="llr_scale"):
        whdrx.decode(vectors / "basic_qpsk_cf32.cf32", llr=True, llr_scale=0.0)
    with pytest.raises(OSError, match="truth"):
        whdrx.decode(vectors / "basic_qpsk_cf32.cf32", truth=tmp_path / "none.truth")
    with pytest.raises(TypeError):
        whdrx.decode(42)
    if whdrx._whdrx.device_count() == 0:
        with pytest.raises(RuntimeError, match="--backend gpu: .*use --backend cpu"):
            whdrx.decode(vectors / "basic_qpsk_cf32.cf32", backend="gpu")


def test_warnings_of_whd_rx(vectors):
    with pytest.warns(RuntimeWarning, match="cut short"):
        r = whdrx.decode(vectors / "truncated_ci16.sigmf-meta")
    assert any("cut short" in w for w in r.warnings)


def test_ctrl_c_stops_the_decode():
    """SIGINT during a decode stops the receiver after its frame and raises KeyboardInterrupt,
    well before the decode would have ended. Python's own SIGINT handler raises it; a process
    started in the background by a non-interactive shell inherits SIGINT ignored and Python
    then installs none, so the test installs it for its duration (as an interactive Python has)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _interrupt_a_decode()
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupt_a_decode():
    t = whdrx.transmit(datatype="ci8", frames=24, nd=1500, mod="qam16", snr_db=30, seed=3)
    t0 = time.monotonic()
    whdrx.decode(t.samples, backend="cpu", threads=1)
    whole = time.monotonic() - t0
    timer = threading.Timer(whole / 10, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        whdrx.decode(t.samples, backend="cpu", threads=1)
    stopped = time.monotonic() - t0
    timer.join()
    print(f"whole decode {whole:.3f} s, interrupted after {stopped:.3f} s")
    assert stopped < whole * 0.6


# ------------------------------------------------------------------ transmit


@pytest.mark.parametrize("datatype", ["cf32_le", "ci16_le", "ci8"])
def test_transmit_decode_round_trip(datatype):
    t = whdrx.transmit(datatype=datatype, mod="qpsk,qam16", frames=3, nd=[5, 9], snr_db=28, cfo_hz=3e5, taps=4,
                       random_phase=True, seed=11, corrupt_header=[1])
    assert t.samples.dtype == COMPONENT[datatype]
    assert t.samples.ndim == (1 if datatype == "cf32_le" else 2)
    assert [f["header_ok"] for f in t.frames] == [True, False, True]
    assert [(f["mod"], f["nd"], f["seq"]) for f in t.frames] == [("qpsk", 5, 0), ("qam16", 9, 1), ("qpsk", 5, 2)]
    assert t.truth.size == 5 * 84 * 2
    r = whdrx.decode(t.samples, truth=t.truth.tobytes())
    assert len(r.frames) == 2 and len(r.header_failures) == 1
    assert np.array_equal(r.payload, t.truth) and r.bit_errors == 0
    for f, e in zip(r.frames, [t.frames[0], t.frames[2]]):
        assert abs(f["start"] - e["start"]) <= START_TOLERANCE and abs(f["cfo_hz"] - 3e5) < 5e3


def test_transmit_files_match_memory(tmp_path):
    """transmit(out=...) writes whd-tx's files, and the in-memory samples are their bytes."""
    kw = dict(datatype="ci16_le", frames=2, nd=6, mod="qam16", snr_db=30, seed=5)
    mem = whdrx.transmit(**kw)
    files = whdrx.transmit(tmp_path / "cap", **kw)
    assert files.samples is None and set(files.paths) == {"data_path", "meta_path", "truth_path", "frames_path"}
    assert np.array_equal(np.fromfile(files.paths["data_path"], dtype="<i2").reshape(-1, 2), mem.samples)
    assert np.array_equal(np.fromfile(files.paths["truth_path"], dtype=np.uint8), mem.truth)
    assert files.frames == mem.frames == json.loads((tmp_path / "cap.frames.json").read_text())
    raw = whdrx.transmit(tmp_path / "rawcap", raw=True, **kw)
    assert raw.paths["data_path"].endswith(".ci16") and raw.paths["meta_path"] is None
    r = whdrx.decode(raw.paths["data_path"], truth=raw.paths["truth_path"])
    assert r.bit_errors == 0 and len(r.frames) == 2


def test_transmit_bad_settings(tmp_path):
    for kwargs, match in [(dict(nd=0), "nd takes"), (dict(mod="bpsk"), "mod takes"), (dict(datatype="ci4"), "datatype"),
                          (dict(taps=99), "taps"), (dict(frames=2, corrupt_header=[5]), "corrupt"),
                          (dict(gain=0.0), "gain"), (dict(first_seq=256), "first_seq"),
                          (dict(phase_rad=1.0, random_phase=True), "either")]:
        with pytest.raises(ValueError, match=match):
            whdrx.transmit(**kwargs)
    with pytest.raises(OSError):
        whdrx.transmit(tmp_path / "no" / "such" / "folder" / "cap")


# ------------------------------------------------------------------ SigMF interop


@pytest.mark.parametrize("datatype, scale", [("cf32_le", 1.0), ("ci16_le", 2.0**15), ("ci8", 2.0**7)])
def test_our_captures_open_in_sigmf(tmp_path, datatype, scale):
    sigmffile = pytest.importorskip("sigmf.sigmffile", reason="the PyPI package sigmf (scripts/setup.sh installs it)")
    t = whdrx.transmit(tmp_path / "cap", datatype=datatype, frames=2, nd=4, snr_db=30, sample_rate=2.5e9)
    f = sigmffile.fromfile(str(tmp_path / "cap.sigmf-meta"))
    f.validate()
    assert f.get_global_field("core:datatype") == datatype
    assert f.get_global_field("core:sample_rate") == 2.5e9
    x = f.read_samples()  # sigmf scales integers to [-1, 1)
    ours = np.fromfile(t.paths["data_path"], dtype=COMPONENT[datatype])
    ours = ours if datatype == "cf32_le" else ours.astype(np.float32).view(np.complex64)
    assert np.array_equal(x * np.float32(scale), ours)
    assert [a["core:sample_start"] for a in f.get_annotations()] == [fr["start"] for fr in t.frames]


def test_sigmf_written_capture_decodes(tmp_path):
    sigmf = pytest.importorskip("sigmf", reason="the PyPI package sigmf (scripts/setup.sh installs it)")
    from sigmf import SigMFFile
    t = whdrx.transmit(datatype="cf32_le", frames=3, nd=7, mod="qam16", snr_db=30, seed=9)
    data = tmp_path / "theirs.sigmf-data"
    t.samples.tofile(data)
    meta = SigMFFile(data_file=str(data), global_info={
        "core:datatype": "cf32_le", "core:sample_rate": whdrx.SAMPLE_RATE_SPS,
        "core:description": "written by the sigmf package", "core:version": sigmf.__specification__})
    meta.add_capture(0, metadata={"core:frequency": 60.48e9})
    meta.tofile(str(tmp_path / "theirs.sigmf-meta"))
    r = whdrx.decode(tmp_path / "theirs")
    assert r.report["input"]["sample_rate"] == whdrx.SAMPLE_RATE_SPS
    assert len(r.frames) == 3 and np.array_equal(r.payload, t.truth)


@pytest.mark.parametrize("name", CAPTURES)
def test_soft_output_matches_the_payload_and_whd_rx(vectors, tmp_path, whd_rx, name):
    """decode(llr=...) gives one value per payload bit whose sign is the payload bit's
    (0 aside), in every form, and the same values whd-rx --llr writes to a file."""
    cap = vectors / f"{name}.sigmf-meta"
    r32 = whdrx.decode(cap, backend="cpu", llr="f32")
    bits = np.unpackbits(r32.payload)
    assert r32.llr.dtype == np.float32 and r32.llr.shape == bits.shape
    nz = r32.llr != 0
    assert np.array_equal(r32.llr[nz] < 0, bits[nz] == 1)
    assert r32.report["llr"]["format"] == "f32" and r32.report["llr"]["values"] == bits.size
    r8 = whdrx.decode(cap, backend="cpu", llr=True)
    assert r8.llr.dtype == np.int8 and r8.report["llr"]["scale"] == 4.0
    assert np.array_equal(r8.llr, np.clip(np.rint(r32.llr * np.float32(4.0)), -127, 127).astype(np.int8))
    r16 = whdrx.decode(np.fromfile(vectors / f"{name}.sigmf-data", dtype=COMPONENT[json.loads(
        (vectors / f"{name}.sigmf-meta").read_text())["global"]["core:datatype"]]), backend="cpu", llr="f16")
    assert r16.llr.dtype == np.float16
    assert np.array_equal(r16.llr, np.clip(r32.llr, -65504, 65504).astype(np.float16))
    out = tmp_path / "soft.i8"
    import subprocess
    subprocess.run([whd_rx, str(cap), "--backend", "cpu", "-q", "--llr", str(out), "--report", str(tmp_path / "r.json")],
                   check=True)
    assert np.array_equal(np.fromfile(out, dtype=np.int8), r8.llr)
