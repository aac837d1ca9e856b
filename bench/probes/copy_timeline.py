#!/usr/bin/env python3
"""Where the link's time goes in whd-bench pipeline's host-to-host passes.

Reads a trace written by bench/probes/cupti_trace.cpp while whd-bench pipeline ran,
finds the passes of the fused int8 kernel in region (b) (32 batches each at the
default 1M symbols and 32768 symbols a batch), and prints for each pass: how busy
the host-to-device direction was, how many copies in ran at once, how long each
batch's big copy took (and at what rate), the small copies and the gaps between
copies.

Usage: bench/probes/copy_timeline.py TRACE.csv [BATCHES_PER_PASS]
"""
import csv
import statistics
import sys


def main():
    path = sys.argv[1]
    per_pass = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        r["s"], r["e"], r["b"] = int(r["start_ns"]), int(r["end_ns"]), int(r["bytes"])
    # The fused kernel over the int8 link, one launch a batch (the device-resident
    # region's one launch over every symbol runs far longer).
    kernels = sorted((r for r in rows if r["kind"] == "K" and "decode_kernel" in r["name"] and "int8" in r["name"]),
                     key=lambda r: r["s"])
    batch_kernels = [k for k in kernels if k["e"] - k["s"] < 10 * statistics.median(x["e"] - x["s"] for x in kernels[:per_pass * 2])]
    passes = [batch_kernels[i:i + per_pass] for i in range(0, len(batch_kernels) - per_pass + 1, per_pass)]
    for n, ks in enumerate(passes):
        t0, t1 = ks[0]["s"], ks[-1]["e"]
        # The pass's copies in: from the first batch's (before its kernel) to the last kernel.
        h2d = sorted((r for r in rows if r["kind"] == "H2D" and r["e"] <= t1 and r["s"] >= t0 - 2 * (ks[1]["s"] - ks[0]["s"])),
                     key=lambda r: r["s"])
        big = max(r["b"] for r in h2d)
        bigs = [r for r in h2d if r["b"] == big]
        first, last = h2d[0]["s"], h2d[-1]["e"]
        busy, cur = 0, None
        for r in h2d:
            if cur is None or r["s"] > cur[1]:
                busy += (cur[1] - cur[0]) if cur else 0
                cur = [r["s"], r["e"]]
            else:
                cur[1] = max(cur[1], r["e"])
        busy += cur[1] - cur[0]
        events = sorted([(r["s"], 1) for r in h2d] + [(r["e"], -1) for r in h2d])
        level = most = 0
        for _, d in events:
            level += d
            most = max(most, level)
        gaps = [b["s"] - a["e"] for a, b in zip(h2d, h2d[1:]) if b["s"] > a["e"]]
        dur = statistics.median(r["e"] - r["s"] for r in bigs)
        small = sorted({r["b"] for r in h2d if r["b"] != big})
        small_txt = ", ".join(
            f"{b} B {statistics.median(r['e'] - r['s'] for r in h2d if r['b'] == b) / 1e3:.1f} us" for b in small)
        print(f"pass {n}: copies in over {(last - first) / 1e6:.3f} ms, busy {100 * busy / (last - first):.1f} %, "
              f"at most {most} at once; big copy ({big} B) median {dur / 1e3:.1f} us = {big / dur:.1f} GB/s; "
              f"small: {small_txt or 'none'}; gaps: {len(gaps)}, median {statistics.median(gaps) / 1e3 if gaps else 0:.1f} us; "
              f"kernel median {statistics.median(k['e'] - k['s'] for k in ks) / 1e3:.1f} us")


if __name__ == "__main__":
    main()
