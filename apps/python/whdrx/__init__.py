"""whdrx: the WirelessHD HRP receiver whd-rx (and its transmitter whd-tx) in Python.

    import whdrx
    r = whdrx.decode("capture.sigmf-meta")           # or a numpy array of samples
    r.frames, r.payload, r.header_failures, r.report

    t = whdrx.transmit(datatype="ci8", frames=3, nd=20, snr_db=28)
    whdrx.decode(t.samples).payload == t.truth

The receive chain is the C++ library's (``baseband/``): the backend, link and FFT
variant are chosen as whd-rx chooses them and the report is whd-rx's JSON report.
Archives of captures decode on Dask with ``python3 -m whdrx.batch`` (whdrx/batch.py).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

_WRONG_PYTHON = ("run the interpreter the module was built for (BUILD/python/whdrx.env names it; by default "
                 f"Debian's /usr/bin/python3), not {sys.executable}")
try:
    import numpy as np
except ImportError as e:
    raise ImportError(f"whdrx needs numpy (Debian package python3-numpy): {e}; or {_WRONG_PYTHON}") from e
try:
    from . import _whdrx
except ImportError as e:
    raise ImportError(f"whdrx's extension _whdrx does not load here: {e}; {_WRONG_PYTHON}") from e

__all__ = ["CaptureError", "DecodeResult", "Transmission", "decode", "release", "transmit", "SAMPLE_RATE_SPS"]

#: An unusable capture: missing, malformed, empty, shorter than one symbol, unreadable.
#: The message is whd-rx's (it names the file and says what to do).
CaptureError = _whdrx.CaptureError

#: The profile's sample rate [samples/s], the default for samples without metadata.
SAMPLE_RATE_SPS: float = _whdrx.SAMPLE_RATE_SPS

PathLike = Union[str, "os.PathLike[str]"]

# numpy dtype of each datatype's on-disk component (little-endian).
_COMPONENT = {"cf32_le": np.dtype("<c8"), "ci16_le": np.dtype("<i2"), "ci8": np.dtype("i1")}


@dataclass
class DecodeResult:
    """What decode() found: the fields of whd-rx's report, and the payload bytes."""

    #: The JSON report of profile §9, as whd-rx writes it (a dict).
    report: dict
    #: The payload bytes of every accepted frame in capture order (numpy uint8 that
    #: owns the decoder's buffer: no copy); None when decode(output=...) wrote a file.
    payload: Optional[np.ndarray]
    #: With decode(llr=...): one soft value per payload bit, in payload order (numpy
    #: int8 = round(LLR x scale), float16 or float32; report["llr"] says which and the
    #: scale). LLR = ln P(b=0)/P(b=1), as whd-rx --llr writes. None otherwise.
    llr: Optional[np.ndarray] = None
    #: What the receiver factory took: backend, why, GPUs, link, FFT exchange.
    choice: dict = field(default_factory=dict)
    #: The warnings whd-rx would log (also issued with warnings.warn).
    warnings: list = field(default_factory=list)

    @property
    def frames(self) -> list:
        """Accepted frames: dicts with the report's fields (start, mod, nd, seq, symbols,
        truncated, cfo_hz, snr_db, payload_offset, payload_bytes, bad_samples, bad_symbols;
        coded frames also mcs, rs_corrected and rs_failed, their payload_bytes the L
        information bytes)."""
        return self.report["frames"]

    @property
    def rs_failed(self) -> int:
        """Reed-Solomon codewords that could not be corrected, over every coded frame
        (written as received)."""
        return sum(f.get("rs_failed", 0) for f in self.report["frames"])

    @property
    def info_gbps(self) -> Optional[float]:
        """Information bits written per second of the frames' air time (report timing.info_gbps)."""
        return self.report["timing"].get("info_gbps")

    @property
    def header_failures(self) -> list:
        """Rejected headers: dicts with start, reason, bad_samples."""
        return self.report["header_failures"]

    @property
    def data_symbols(self) -> int:
        return self.report["timing"]["data_symbols"]

    @property
    def backend(self) -> str:
        return self.choice.get("backend", "")

    @property
    def truth(self) -> Optional[dict]:
        """With decode(truth=...): expected_bytes, decoded_bytes, compared_bits, bit_errors,
        missing_bits, ber (the report's "truth"); None otherwise."""
        return self.report.get("truth")

    @property
    def bit_errors(self) -> Optional[int]:
        return None if self.truth is None else self.truth["bit_errors"]

    @property
    def ber(self) -> Optional[float]:
        return None if self.truth is None else self.truth["ber"]

    @property
    def compared_bits(self) -> Optional[int]:
        return None if self.truth is None else self.truth["compared_bits"]

    @property
    def missing_bits(self) -> Optional[int]:
        return None if self.truth is None else self.truth["missing_bits"]

    def __repr__(self) -> str:
        t = "" if self.truth is None else f", bit_errors={self.bit_errors}"
        return (f"DecodeResult({len(self.frames)} frame(s), {len(self.header_failures)} header failure(s), "
                f"{self.report['payload_bytes']} payload bytes, backend {self.backend!r}{t})")


def _gpus_text(gpus: Union[int, str]) -> str:
    if isinstance(gpus, str):
        if gpus != "all":
            raise ValueError(f"gpus must be a positive number or 'all', not {gpus!r}")
        return gpus
    if isinstance(gpus, bool) or not isinstance(gpus, (int, np.integer)) or gpus < 1:
        raise ValueError(f"gpus must be a positive number or 'all', not {gpus!r}")
    return str(int(gpus))


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a whole number >= 0, not {value!r}")
    return int(value)


def _samples_layout(samples: np.ndarray) -> tuple[np.ndarray, str, int]:
    """The array as the bytes of a raw capture: (C-contiguous little-endian array, datatype, samples)."""
    kind = samples.dtype
    if kind.kind == "c":
        if kind.itemsize != 8:
            raise ValueError(f"samples of dtype {kind} are not supported: pass complex64 "
                             f"(samples.astype(np.complex64)), or int8/int16 interleaved I/Q")
        if samples.ndim != 1:
            raise ValueError(f"complex64 samples must be a 1-D array, not of shape {samples.shape}")
        return np.ascontiguousarray(samples, dtype="<c8"), "cf32_le", samples.shape[0]
    if kind.kind == "i" and kind.itemsize in (1, 2):
        datatype = "ci8" if kind.itemsize == 1 else "ci16_le"
        if samples.ndim == 2 and samples.shape[1] == 2:
            n = samples.shape[0]
        elif samples.ndim == 1 and samples.shape[0] % 2 == 0:
            n = samples.shape[0] // 2
        else:
            raise ValueError(f"{kind} samples must be interleaved I/Q of shape (2n,) or (n, 2), not {samples.shape}")
        return np.ascontiguousarray(samples, dtype=_COMPONENT[datatype]), datatype, n
    raise ValueError(f"samples of dtype {kind} are not supported: pass complex64, or int8/int16 interleaved I/Q "
                     f"of shape (2n,) or (n, 2)")


def decode(capture: Union[PathLike, np.ndarray], backend: str = "auto", link: str = "auto",
           gpus: Union[int, str] = 1, truth: Union[PathLike, bytes, np.ndarray, None] = None,
           llr: Union[bool, str] = False, sample_rate: Optional[float] = None, threads: int = 0, *, device: int = 0,
           batch: int = 0, format: Optional[str] = None, output: Optional[PathLike] = None,
           llr_scale: float = 4.0) -> DecodeResult:
    """Decode a capture as whd-rx does.

    capture: a path (a SigMF recording NAME, NAME.sigmf-meta or NAME.sigmf-data, or a
        raw .cf32/.ci16/.ci8 file; ``format`` names a raw file's datatype otherwise), or
        a numpy array of samples: complex64 of shape (n,), or int8/int16 interleaved I/Q
        of shape (2n,) or (n, 2) (then ``sample_rate`` states CFO in Hz; default the
        profile's 2.538e9).
    backend: "auto" (the GPU when one is present), "cpu" or "gpu".
    link: how a cf32 capture crosses to the GPU, "auto" (= "f32", as stored),
        "half" or "int8" (packed; bits may differ from the CPU's near a decision's
        edge). Integer captures cross as stored whatever it says.
    gpus: GPUs to use (from ``device`` on), or "all": the first takes each batch while it
        keeps up, the next the batches it cannot. More than present is an error.
    truth: the expected payload (a file, or bytes): the report adds bit errors and BER.
    llr: soft output beside the payload, as whd-rx --llr: True or "int8" (round(LLR x
        llr_scale), saturated to +-127), "f16" or "f32"; DecodeResult.llr holds one value
        per payload bit (LLR = ln P(b=0)/P(b=1), positive for 0).
    threads: host threads (0: all cores).
    output: write the payload to this file instead of returning it (bounded memory for
        large captures; ``payload`` is then None).

    The GIL is released while decoding; Ctrl-C stops the receiver after the frame
    being decoded (as SIGINT stops whd-rx) and raises KeyboardInterrupt.

    The receiver is kept for the next call with the same settings, so that decoding
    capture after capture (whdrx.batch's workers) makes the GPU backend's buffers
    once; it holds some GPU and page-locked memory until ``release()``.

    Raises CaptureError for an unusable capture, ValueError for bad arguments,
    OSError when the truth or output file cannot be used, RuntimeError when the GPU
    backend was asked for and cannot run (the messages are whd-rx's).
    """
    if llr is True:
        llr_format = "int8"
    elif llr is False or llr is None:
        llr_format = None
    elif isinstance(llr, str):
        llr_format = llr
    else:
        raise ValueError(f"llr must be False, True, 'int8', 'f16' or 'f32', not {llr!r}")
    for name, value in (("backend", backend), ("link", link)):
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, not {value!r}")
    if sample_rate is not None:
        sample_rate = float(sample_rate)
        if not sample_rate > 0.0 or not np.isfinite(sample_rate):
            raise ValueError(f"sample_rate must be a positive number of samples per second, not {sample_rate!r}")
    args = dict(backend=backend, link=link, gpus=_gpus_text(gpus), device=_count(device, "device"),
                batch=_count(batch, "batch"), threads=_count(threads, "threads"), sample_rate=sample_rate,
                llr=llr_format, llr_scale=float(llr_scale))
    output_path = None if output is None else os.fspath(output)

    truth_file = None
    try:
        truth_path = None
        if isinstance(truth, (bytes, bytearray, memoryview, np.ndarray)):
            truth_file = tempfile.NamedTemporaryFile(prefix="whdrx-truth-", delete=False)
            truth_file.write(np.asarray(truth, dtype=np.uint8).tobytes() if isinstance(truth, np.ndarray) else truth)
            truth_file.close()
            truth_path = truth_file.name
        elif truth is not None:
            truth_path = os.fspath(truth)

        if isinstance(capture, np.ndarray):
            if format is not None:
                raise ValueError("format names the datatype of a raw file; an array's dtype gives it")
            data, datatype, n = _samples_layout(capture)
            display = f"<numpy {capture.dtype} array, {n} samples>"
            out = _whdrx.decode_buffer(data, datatype, display, truth=truth_path, output=output_path, **args)
        elif isinstance(capture, (str, os.PathLike)):
            out = _whdrx.decode_path(os.fspath(capture), format=format, truth=truth_path, output=output_path, **args)
        else:
            raise TypeError(f"capture must be a path or a numpy array of samples, not {type(capture).__name__}")
    finally:
        if truth_file is not None:
            os.unlink(truth_file.name)

    report = json.loads(out["report"])
    if truth_file is not None and "truth" in report:
        report["truth"]["path"] = "<bytes>"
    for line in out["warnings"]:
        warnings.warn(line, RuntimeWarning, stacklevel=2)
    return DecodeResult(report=report, payload=out["payload"], llr=out["llr"], choice=dict(out["choice"]),
                        warnings=list(out["warnings"]))


@dataclass
class Transmission:
    """What transmit() made: the samples and the sidecars of ../shared/vectors/."""

    #: complex64 of shape (n,) for cf32_le; int8/int16 of shape (n, 2) (I, Q) for
    #: ci8/ci16_le, exactly the bytes the SigMF data file holds. None with ``out``.
    samples: Optional[np.ndarray]
    #: Payload bytes of the listed frames with intact headers (NAME.truth). None with ``out``.
    truth: Optional[np.ndarray]
    #: One dict per listed frame: start, nd, mod, seq, header_ok (NAME.frames.json).
    frames: list
    datatype: str
    sample_rate: float
    #: Files written (data_path, meta_path, truth_path, frames_path) with ``out``; else empty.
    paths: dict
    #: Integer scale, peak, clipped samples, signal and noise power, frames cut off.
    summary: dict


def release() -> None:
    """Free the receiver that decode() keeps between calls (its GPU and page-locked
    memory); the next decode makes a new one."""
    _whdrx.release()


def _list(value: Union[str, int, Sequence], name: str) -> list:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",")]
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return [int(value)]
    try:
        return list(value)
    except TypeError:
        raise ValueError(f"{name} must be a value or a list of them, not {value!r}") from None


def transmit(out: Optional[PathLike] = None, *, datatype: str = "cf32_le", raw: bool = False,
             mod: Union[str, Sequence[str]] = "qpsk", mcs: Union[None, int, str, Sequence] = None, frames: int = 2,
             nd: Union[int, Sequence[int]] = 8,
             payload: Optional[PathLike] = None, seed: int = 1, snr_db: Optional[float] = None,
             cfo_hz: float = 0.0, taps: int = 1, tap_decay_db: float = 3.0, gain: float = 1.0,
             phase_rad: Optional[float] = None, random_phase: bool = False, lead: int = 1000, gap: int = 777,
             tail: Optional[int] = None, corrupt_header: Sequence[int] = (), cut: int = 0, first_seq: int = 0,
             sample_rate: float = SAMPLE_RATE_SPS, description: Optional[str] = None) -> Transmission:
    """Make a capture as whd-tx does (its options, by the same names; see whd-tx --help).

    With ``out`` (BASE, without extension) it writes BASE.sigmf-data + BASE.sigmf-meta
    (or BASE.cf32/.ci16/.ci8 with raw=True), BASE.truth and BASE.frames.json, and
    returns their paths. Without it the samples and truth come back as numpy arrays.
    mod: "qpsk", "qam16" or a list of them cycled over the frames; nd likewise.
    mcs: coded frames (profile 2): 0, 1, 2 or 7, None (uncoded, its modulation from mod),
    or a list of them cycled over the frames; a coded frame carries L(mcs, nd) bytes.
    Raises ValueError for bad settings, OSError when a file cannot be written.
    """
    if datatype not in _COMPONENT and datatype not in ("cf32", "ci16", "ci8_le"):
        raise ValueError(f"datatype must be cf32_le, ci16_le or ci8, not {datatype!r}")
    datatype = {"cf32": "cf32_le", "ci16": "ci16_le", "ci8_le": "ci8"}.get(datatype, datatype)
    mods = [str(m) for m in _list(mod, "mod")]
    mcs_list = []
    for x in (_list(mcs, "mcs") if mcs is not None else []):
        if x is None or (isinstance(x, str) and x == "none"):
            mcs_list.append(-1)
        elif isinstance(x, (int, np.integer, str)) and not isinstance(x, bool) and str(x) in ("0", "1", "2", "7"):
            mcs_list.append(int(x))
        else:
            raise ValueError(f"mcs takes 0, 1, 2, 7 or None (uncoded), or a list of them, not {mcs!r}")
    nds = _list(nd, "nd")
    for n in nds:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n < 2**20:
            raise ValueError(f"nd takes numbers of data symbols 1..1048575 (or a list of them), not {nd!r}")
    counts = {k: _count(v, k) for k, v in dict(frames=frames, seed=seed, taps=taps, lead=lead, gap=gap, cut=cut,
                                                first_seq=first_seq).items()}
    if tail is not None:
        tail = _count(tail, "tail")
    corrupt = [_count(c, "corrupt_header") for c in _list(corrupt_header, "corrupt_header")] if corrupt_header else []
    for name, x in (("snr_db", snr_db), ("cfo_hz", cfo_hz), ("tap_decay_db", tap_decay_db), ("gain", gain),
                    ("phase_rad", phase_rad), ("sample_rate", sample_rate)):
        if x is not None and not np.isfinite(float(x)):
            raise ValueError(f"{name} must be a finite number, not {x!r}")
    if description is None:
        description = (f"whdrx.transmit: {counts['frames']} frames, mod {','.join(mods)}, "
                       f"nd {','.join(str(int(n)) for n in nds)}, seed {counts['seed']}"
                       + (f", SNR {snr_db} dB" if snr_db is not None else ""))
    kwargs = dict(datatype=datatype, mods=mods, mcs=mcs_list, nds=[int(n) for n in nds], frames=counts["frames"],
                  payload="" if payload is None else os.fspath(payload), seed=counts["seed"],
                  snr_db=None if snr_db is None else float(snr_db), cfo_hz=float(cfo_hz), taps=counts["taps"],
                  tap_decay_db=float(tap_decay_db), gain=float(gain),
                  phase_rad=None if phase_rad is None else float(phase_rad), random_phase=bool(random_phase),
                  lead=counts["lead"], gap=counts["gap"], tail=tail, corrupt_header=corrupt, cut=counts["cut"],
                  first_seq=counts["first_seq"], sample_rate=float(sample_rate), description=description)

    def run(base: str, raw_out: bool) -> dict:
        return _whdrx.write_capture(base=base, raw=raw_out, **kwargs)

    if out is not None:
        s = run(os.fspath(out), bool(raw))
        with open(s["frames_path"]) as f:
            listed = json.load(f)
        paths = {k: s.pop(k) for k in ("data_path", "meta_path", "truth_path", "frames_path")}
        return Transmission(samples=None, truth=None, frames=listed, datatype=datatype, sample_rate=float(sample_rate),
                            paths=paths, summary=s)
    # In memory: the very files whd-tx writes, made in a temporary folder and read
    # back, so that the samples are bit for bit those of transmit(out=...).
    with tempfile.TemporaryDirectory(prefix="whdrx-tx-") as tmp:
        s = run(os.path.join(tmp, "capture"), False)
        comp = _COMPONENT[datatype]
        samples = np.fromfile(s["data_path"], dtype=comp)
        if datatype != "cf32_le":
            samples = samples.reshape(-1, 2)
        truth = np.fromfile(s["truth_path"], dtype=np.uint8)
        with open(s["frames_path"]) as f:
            listed = json.load(f)
    for k in ("data_path", "meta_path", "truth_path", "frames_path"):
        s.pop(k)
    return Transmission(samples=samples, truth=truth, frames=listed, datatype=datatype, sample_rate=float(sample_rate),
                        paths={}, summary=s)
