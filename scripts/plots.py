#!/usr/bin/env python3
"""Pictures from whd-bench JSON, whd-rx --dump JSON and captures.

    plots.py ber BER.json -o ber.png
        BER against Eb/N0 per backend and link packing, with uncoded Gray theory.
    plots.py llr BER.json -o llr.png
        Calibration of the soft output (LLRs) from `whd-bench ber`: per Eb/N0 point,
        the empirical ln P(0|L)/P(1|L) against L, with the identity and +-10 %.
    plots.py throughput RESULT.json [RESULT.json ...] -o throughput.png
        ns/symbol and raw Gbps bars per backend and link packing (rows of
        `whd-bench pipeline`, `compare` and `cpu`), with the real-time line.
    plots.py fft FFT.json -o fft.png
        ns/FFT against batch, ours and cuFFT, per input type (`whd-bench fft`).
    plots.py dump DUMP.json -o PREFIX [--frame I]
        From `whd-rx --dump`: PREFIX-constellation.png, PREFIX-channel.png,
        PREFIX-snr.png.
    plots.py spectrum CAPTURE -o spectrum.png [--samples N]
        Welch power spectral density of a capture (SigMF cf32_le/ci16_le/ci8, or a
        raw .cf32/.ci16/.ci8 file), with the profile's used band marked.

Needs python3-numpy and python3-matplotlib (scripts/setup.sh installs them).
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

SYMBOL_NS = 226.95       # profile §1: one OFDM symbol, the symbol deadline
N_FFT = 512
K_MAX_USED = 177
FS_NOMINAL = 2.538e9
DPI = 130


def subtitle(j):
    """Where and when a result was measured, for a figure's title."""
    dev = j.get("device")
    if isinstance(dev, dict):
        dev = dev.get("name")
    host = j.get("cpu", "")
    parts = []
    if dev and dev != "none":
        parts.append(str(dev))
    if host:
        parts.append(f"{host}, {j.get('host_threads', '?')} threads")
    if j.get("date"):
        parts.append(j["date"][:10])
    if j.get("commit"):
        parts.append(f"commit {j['commit']}")
    return "; ".join(parts)


def save(fig, path):
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    print("wrote", path)


# ------------------------------------------------------------------ BER

def q_function(x):
    return 0.5 * np.vectorize(math.erfc)(np.asarray(x) / math.sqrt(2.0))


def theory_ber(mod, ebn0_db):
    e = 10.0 ** (np.asarray(ebn0_db, dtype=float) / 10.0)
    if mod == "qpsk":
        return q_function(np.sqrt(2.0 * e))
    a = np.sqrt(0.8 * e)
    return (3.0 * q_function(a) + 2.0 * q_function(3.0 * a) - q_function(5.0 * a)) / 4.0


STYLE = {
    "cpu": dict(color="tab:blue", marker="o"),
    "gpu f32": dict(color="tab:orange", marker="s"),
    "gpu half": dict(color="tab:green", marker="^"),
    "gpu int8": dict(color="tab:red", marker="v"),
}


def plot_ber(args):
    j = json.load(open(args.json))
    mods = [m for m in ("qpsk", "qam16") if any(c["mod"] == m for c in j["curves"])]
    fig, axes = plt.subplots(1, len(mods), figsize=(6.2 * len(mods), 5.0), squeeze=False)
    for ax, mod in zip(axes[0], mods):
        curves = [c for c in j["curves"] if c["mod"] == mod]
        xs = [p["ebn0_db"] for c in curves for p in c["points"]]
        grid = np.linspace(min(xs) - 0.5, max(xs) + 0.5, 200)
        ax.semilogy(grid, theory_ber(mod, grid), "k-", lw=1.2, label="theory (uncoded Gray)")
        for i, c in enumerate(curves):
            pts = [p for p in c["points"] if p["errors"] > 0]
            st = STYLE.get(c["label"], dict(marker="x"))
            # Small horizontal offsets keep overlapping markers of identical BERs apart.
            dx = (i - (len(curves) - 1) / 2) * 0.04
            label = c["label"]
            dist = [f"{x['distance_db']:+.2f} dB at {x['target_ber']:.0e}" for x in c["crossings"]
                    if x.get("distance_db") is not None]
            if dist:
                label += " (" + ", ".join(dist) + ")"
            ax.semilogy([p["ebn0_db"] + dx for p in pts], [p["ber"] for p in pts], ls="--", lw=0.8,
                        ms=5, mfc="none", label=label, **st)
        for t in (1e-3, 1e-4):
            ax.axhline(t, color="0.6", lw=0.6, ls=":")
        ax.set_title({"qpsk": "QPSK", "qam16": "16-QAM"}[mod] + ", AWGN")
        ax.set_xlabel("Eb/N0 per data tone [dB]")
        ax.set_ylabel("bit error rate")
        ax.set_ylim(bottom=0.3 * min((p["ber"] for c in curves for p in c["points"] if p["errors"] > 0), default=1e-6))
        ax.grid(True, which="both", lw=0.3, alpha=0.6)
        ax.legend(fontsize=8, loc="lower left")
    cfg = j.get("config", {})
    fig.suptitle("whd-rx bit error rate, whole receiver (generator -> receiver -> truth)\n"
                 f"{subtitle(j)}; each point to {cfg.get('target_errors', '?')} errors or "
                 f"{cfg.get('max_bits', 0):.0e} bits", fontsize=9)
    fig.tight_layout()
    save(fig, args.output)


def plot_llr(args):
    j = json.load(open(args.json))
    curves = [c for c in j["curves"] if any("llr_calibration" in p for p in c["points"])]
    labels = sorted({c["label"] for c in curves})
    mods = [m for m in ("qpsk", "qam16") if any(c["mod"] == m for c in curves)]
    fig, axes = plt.subplots(len(labels), len(mods), figsize=(5.6 * len(mods), 4.8 * len(labels)), squeeze=False)
    for r, label in enumerate(labels):
        for col, mod in enumerate(mods):
            ax = axes[r][col]
            lim = 12.0
            xs = np.linspace(-lim, lim, 3)
            ax.plot(xs, xs, "k-", lw=1.0, label="identity")
            ax.fill_between(xs, 0.9 * xs, 1.1 * xs, color="0.85", label="+-10 %")
            for c in curves:
                if c["mod"] != mod or c["label"] != label:
                    continue
                pts = [p for p in c["points"] if p.get("llr_calibration", {}).get("bins")]
                cmap = plt.get_cmap("viridis")
                for i, p in enumerate(pts):
                    cal = p["llr_calibration"]
                    x = [b["mean_llr"] for b in cal["bins"]]
                    y = [b["empirical"] for b in cal["bins"]]
                    ax.plot(x, y, marker="o", ms=3, lw=0.8, color=cmap(i / max(1, len(pts) - 1)),
                            label=f"Eb/N0 {p['ebn0_db']:.0f} dB: slope {cal['slope']:.3f}")
            ax.set_xlim(-lim, lim)
            ax.set_ylim(-lim, lim)
            ax.set_title(f"{ {'qpsk': 'QPSK', 'qam16': '16-QAM'}[mod]}, {label}")
            ax.set_xlabel("LLR L (mean of the bin)")
            ax.set_ylabel("empirical ln P(b=0 | L) / P(b=1 | L)")
            ax.grid(True, lw=0.3, alpha=0.6)
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("whd-rx soft output: calibration on AWGN (f32 LLRs against the truth, bins of 0.5)\n" + subtitle(j),
                 fontsize=9)
    fig.tight_layout()
    save(fig, args.output)


# ------------------------------------------------------------------ throughput

def symbols_tag(n):
    """'2^20 sym' or '131072 sym'."""
    e = int(round(math.log2(n))) if n > 0 else 0
    return f"2^{e} sym" if n == 1 << e else f"{n} sym"


def throughput_rows(j, path):
    """(label, ns median, ns min, ns max, bits per symbol) of every row of a whd-bench result."""
    rows = []
    kind = j.get("benchmark") or ("pipeline" if "ceilings_gbps" in j else os.path.basename(path))
    if kind == "compare":
        bits = j["capture"]["bits_per_symbol"]
        tag = f"compare {symbols_tag(j['capture']['data_symbols'])}"
        for r in j["rows"]:
            lab = r["name"] + (f" ({r['threads']} thr)" if r["name"].startswith(("cpu", "plain")) else "")
            rows.append((f"{tag}: {lab}, {r['region']}", r["ns_per_symbol"], r["ns_per_symbol_min"],
                         r["ns_per_symbol_max"], bits))
    elif kind == "cpu":
        bits = j["capture"]["bits_per_symbol"]
        for r in j["rows"]:
            rows.append((f"cpu {symbols_tag(j['capture']['data_symbols'])}: {r['chain']} ({r['threads']} thr)", r["ns_per_symbol"], r["ns_per_symbol_min"],
                         r["ns_per_symbol_max"], bits))
    elif kind == "pipeline":
        for r in j["rows"]:
            n = r["symbols"]
            region = r["region"].split(" (")[0]
            link = "" if r["link"] == "-" else " " + r["link"]
            rows.append((f"pipeline {symbols_tag(n)}: {r['engine']}{link}, {region}", r["ns_per_symbol"], r["min_s"] * 1e9 / n,
                         r["max_s"] * 1e9 / n, 1344))
    else:
        sys.exit(f"{path}: not a whd-bench pipeline, compare or cpu result")
    return rows


def plot_throughput(args):
    rows, subs = [], []
    for path in args.json:
        j = json.load(open(path))
        rows += throughput_rows(j, path)
        subs.append(subtitle(j))
    rows.sort(key=lambda r: r[1])
    labels = [r[0] for r in rows]
    ns = np.array([r[1] for r in rows])
    lo = ns - np.array([r[2] for r in rows])
    hi = np.array([r[3] for r in rows]) - ns
    gbps = np.array([r[4] / r[1] for r in rows])
    y = np.arange(len(rows))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 0.32 * len(rows) + 2.2), sharey=True)
    colors = ["tab:green" if v < SYMBOL_NS else "tab:gray" for v in ns]
    a1.barh(y, ns, xerr=[lo, hi], color=colors, ecolor="k", capsize=2)
    a1.axvline(SYMBOL_NS, color="tab:red", ls="--", lw=1.2, label=f"real time: {SYMBOL_NS} ns per symbol")
    a1.set_xscale("log")
    a1.set_xlabel("ns per data symbol (median; bar: min..max of repeats), log scale")
    a1.set_yticks(y)
    a1.set_yticklabels(labels, fontsize=8)
    a1.invert_yaxis()
    a1.legend(fontsize=8, loc="lower right")
    a1.grid(True, axis="x", which="both", lw=0.3, alpha=0.6)
    for yi, v in zip(y, ns):
        a1.text(v * 1.08, yi, f"{v:.3g}", va="center", fontsize=7)
    a2.barh(y, gbps, color=colors)
    rt = 1344 / SYMBOL_NS
    a2.axvline(rt, color="tab:red", ls="--", lw=1.2, label=f"real time, 16-QAM: {rt:.2f} Gbps")
    a2.set_xscale("log")
    a2.set_xlabel("raw Gbps (bits per data symbol / ns per symbol), log scale")
    a2.legend(fontsize=8, loc="lower right")
    a2.grid(True, axis="x", which="both", lw=0.3, alpha=0.6)
    for yi, v in zip(y, gbps):
        a2.text(v * 1.08, yi, f"{v:.3g}", va="center", fontsize=7)
    fig.suptitle("whd-rx throughput per backend and link packing (green: faster than real time)\n"
                 + "\n".join(sorted(set(subs))), fontsize=9)
    fig.tight_layout()
    save(fig, args.output)


# ------------------------------------------------------------------ FFT

def plot_fft(args):
    j = json.load(open(args.json))
    inputs = [t for t in ("cf32", "cf16", "ci8") if any(r["input"] == t for r in j["rows"])]
    fig, axes = plt.subplots(1, len(inputs), figsize=(5.0 * len(inputs), 4.4), sharey=True, squeeze=False)
    ceiling = j.get("ceiling", {}).get("ceiling_gbps")
    for ax, t in zip(axes[0], inputs):
        impls = sorted({r["impl"] for r in j["rows"] if r["input"] == t}, key=lambda s: (not s.startswith("whd"), s))
        for impl in impls:
            rs = sorted((r for r in j["rows"] if r["input"] == t and r["impl"] == impl), key=lambda r: r["batch"])
            b = [r["batch"] for r in rs]
            m = np.array([r["ns_per_fft_median"] for r in rs])
            err = [m - [r["ns_per_fft_min"] for r in rs], [r["ns_per_fft_max"] for r in rs] - m]
            style = dict(marker="o", ms=4) if impl.startswith("whd") else dict(marker="s", ms=4, ls="--")
            ax.errorbar(b, m, yerr=err, capsize=2, label=impl, **style)
        ours = [r for r in j["rows"] if r["input"] == t and r["impl"].startswith("whd")]
        if ceiling and ours:
            floor = ours[0]["bytes_per_fft"] / ceiling  # ns: bytes / (GB/s)
            ax.axhline(floor, color="0.4", ls=":", lw=1, label=f"ours' copy-ceiling floor {floor:.2f} ns")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_yticks([1.5, 2, 3, 5, 7, 10, 20, 30])
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("batch (transforms per launch)")
        ax.set_title(f"input {t}")
        ax.grid(True, which="both", lw=0.3, alpha=0.6)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("ns per 512-point FFT (median; bar: min..max), log scale")
    dev = j.get("device", {})
    fig.suptitle(f"512-point FFT: ours against cuFFT on {dev.get('name', '?')} "
                 f"({j.get('date', '')[:10]}, commit {j.get('commit', '?')})", fontsize=9)
    fig.tight_layout()
    save(fig, args.output)


# ------------------------------------------------------------------ whd-rx --dump

def ideal_points(mod):
    if mod == "qpsk":
        a = 1 / math.sqrt(2)
        return np.array([complex(i, q) for i in (-a, a) for q in (-a, a)])
    c = 1 / math.sqrt(10)
    lv = [-3 * c, -c, c, 3 * c]
    return np.array([complex(i, q) for i in lv for q in lv])


def plot_dump(args):
    j = json.load(open(args.json))
    if not j["frames"]:
        sys.exit(f"{args.json}: no frame was dumped")
    f = next((x for x in j["frames"] if x["index"] == args.frame), None)
    if f is None:
        sys.exit(f"{args.json}: frame {args.frame} is not in the dump (frames {[x['index'] for x in j['frames']]})")
    what = (f"frame {f['index']} at sample {f['start']}: {f['mod']}, {f['nd']} symbols, "
            f"CFO {f['cfo_hz'] / 1e3:.1f} kHz, SNR {f['snr_db']:.1f} dB")
    # Constellation.
    pts = np.array([complex(p[0], p[1]) for sym in f["points"] for p in sym])
    fig, ax = plt.subplots(figsize=(5.6, 5.6))
    ax.plot(pts.real, pts.imag, ".", ms=1.5, alpha=0.35, color="tab:blue",
            label=f"{f['dumped_symbols']} symbols x 336 data tones")
    ip = ideal_points(f["mod"])
    ax.plot(ip.real, ip.imag, "r+", ms=12, mew=1.5, label="ideal points")
    lim = 1.6 if f["mod"] == "qpsk" else 1.5
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("in-phase (equalised, unit mean energy)")
    ax.set_ylabel("quadrature")
    ax.grid(True, lw=0.3)
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title("equalised constellation after the pilot phase\n" + what, fontsize=9)
    save(fig, f"{args.output}-constellation.png")
    # Channel.
    tones = f["tones"]
    k = np.array([t["k"] for t in tones])
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for key, lab, st in (("h_ls", "plain LS (two preamble symbols)", dict(ls="", marker=".", ms=3, color="0.6")),
                         ("h", "smoothed (used to equalise)", dict(lw=1.3, color="tab:blue"))):
        mag = np.array([t[key + "_mag"] for t in tones])
        ph = np.array([t[key + "_phase_rad"] for t in tones])
        for side in (k < 0, k > 0):  # the DC gap splits the band: unwrap each half
            a1.plot(k[side], 20 * np.log10(mag[side]), label=lab if side[0] else None, **st)
            a2.plot(k[side], np.unwrap(ph[side]), **st)
    a1.set_ylabel("|H| [dB, FFT units]")
    a1.legend(fontsize=8)
    a1.grid(True, lw=0.3)
    a2.set_ylabel("arg H, unwrapped per half-band [rad]")
    a2.set_xlabel("subcarrier k")
    a2.grid(True, lw=0.3)
    a1.set_title("channel estimate per used tone\n" + what, fontsize=9)
    fig.tight_layout()
    save(fig, f"{args.output}-channel.png")
    # Per-tone SNR.
    fig, ax = plt.subplots(figsize=(8, 4.2))
    raw = np.array([t["snr_raw_db"] for t in tones])
    ax.plot(k, raw, ".", ms=3, color="0.6", label="|H_LS|^2 / that tone's |Y0-Y1|^2/2 (one noise draw)")
    ax.plot(k, [t["snr_db"] for t in tones], "-", color="tab:blue", lw=1.3,
            label="|H|^2 / noise averaged over the band")
    dk = [d["k"] for d in f["data_tones"]]
    ax.plot(dk, [d["decision_snr_db"] for d in f["data_tones"]], "-", color="tab:orange", lw=0.8,
            label=f"decision-directed, {f['dumped_symbols']} data symbols")
    ax.set_xlabel("subcarrier k")
    ax.set_ylabel("SNR per tone, Es/N0 [dB]")
    ax.grid(True, lw=0.3)
    ax.legend(fontsize=8)
    ax.set_title("per-tone SNR from the preamble's two symbols\n" + what, fontsize=9)
    fig.tight_layout()
    save(fig, f"{args.output}-snr.png")


# ------------------------------------------------------------------ spectrum

RAW_TYPES = {".cf32": "cf32_le", ".cfile": "cf32_le", ".ci16": "ci16_le", ".sc16": "ci16_le", ".ci8": "ci8", ".sc8": "ci8"}


def read_capture(path, max_samples):
    """Samples (complex64) and the sample rate of a SigMF or raw capture."""
    base, ext = os.path.splitext(path)
    rate = FS_NOMINAL
    if ext in (".sigmf-meta", ".sigmf-data") or os.path.exists(path + ".sigmf-meta"):
        if ext not in (".sigmf-meta", ".sigmf-data"):
            base = path
        meta = json.load(open(base + ".sigmf-meta"))["global"]
        dtype = meta["core:datatype"]
        rate = float(meta.get("core:sample_rate", rate))
        data = base + ".sigmf-data"
    elif ext in RAW_TYPES:
        dtype, data = RAW_TYPES[ext], path
    else:
        sys.exit(f"{path}: not a SigMF recording or a raw .cf32/.ci16/.ci8 file")
    np_type = {"cf32_le": "<f4", "ci16_le": "<i2", "ci8": "i1"}.get(dtype)
    if np_type is None:
        sys.exit(f"{path}: datatype {dtype} is not cf32_le, ci16_le or ci8")
    x = np.fromfile(data, dtype=np_type, count=2 * max_samples).astype(np.float32)
    return x[0::2] + 1j * x[1::2], rate, dtype


def welch(x, nfft):
    """Welch PSD, Hann window, 50% overlap: power per bin, centred (fftshift)."""
    w = np.hanning(nfft).astype(np.float32)
    step = nfft // 2
    nseg = max(1, (len(x) - nfft) // step + 1)
    acc = np.zeros(nfft)
    for s in range(nseg):
        seg = x[s * step: s * step + nfft]
        if len(seg) < nfft:
            break
        acc += np.abs(np.fft.fft(seg * w)) ** 2
    return np.fft.fftshift(acc / (nseg * np.sum(w ** 2)))


def plot_spectrum(args):
    x, rate, dtype = read_capture(args.capture, args.samples)
    if len(x) < args.nfft:
        sys.exit(f"{args.capture}: {len(x)} samples, fewer than one FFT of {args.nfft}")
    psd = welch(x, args.nfft)
    f = (np.arange(args.nfft) - args.nfft // 2) * rate / args.nfft
    fig, ax = plt.subplots(figsize=(8.5, 4.4))
    ax.plot(f / 1e6, 10 * np.log10(psd / psd.max() + 1e-30), lw=0.8, color="tab:blue")
    edge = (K_MAX_USED + 0.5) * rate / N_FFT / 1e6
    ax.axvspan(-edge, edge, color="tab:green", alpha=0.08, label=f"used tones |k| <= {K_MAX_USED} (+-{edge:.0f} MHz)")
    dc = 1.5 * rate / N_FFT / 1e6
    ax.axvspan(-dc, dc, color="tab:red", alpha=0.12, label="DC tones k = -1, 0, 1")
    ax.set_xlabel(f"frequency [MHz] (sample rate {rate / 1e9:.4g} GS/s)")
    ax.set_ylabel("PSD relative to its peak [dB]")
    rel = 10 * np.log10(psd / psd.max() + 1e-30)
    ax.set_ylim(max(-80.0, float(np.percentile(rel, 1)) - 10.0), 3)
    ax.grid(True, lw=0.3)
    ax.legend(fontsize=8, loc="lower center")
    ax.set_title(f"Welch PSD of {os.path.basename(args.capture)} ({dtype}, {len(x)} samples, "
                 f"Hann {args.nfft}, 50% overlap)", fontsize=9)
    fig.tight_layout()
    save(fig, args.output)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, fn, many in (("ber", plot_ber, False), ("llr", plot_llr, False), ("throughput", plot_throughput, True),
                           ("fft", plot_fft, False)):
        p = sub.add_parser(name)
        p.add_argument("json", nargs="+" if many else None)
        p.add_argument("-o", "--output", required=True)
        p.set_defaults(fn=fn)
    p = sub.add_parser("dump")
    p.add_argument("json")
    p.add_argument("-o", "--output", required=True, help="prefix of the three PNGs")
    p.add_argument("--frame", type=int, default=0, help="which dumped frame (its index)")
    p.set_defaults(fn=plot_dump)
    p = sub.add_parser("spectrum")
    p.add_argument("capture")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--samples", type=int, default=1 << 22, help="samples read from the start")
    p.add_argument("--nfft", type=int, default=2048, help="Welch segment length")
    p.set_defaults(fn=plot_spectrum)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
