#!/usr/bin/env python3
"""Which of whd-rx's threads were busy when: a timeline from perf's cpu-clock samples.

whd-rx names its threads by role (whd-search, whd-locate, whd-decode, whd-look-ahead,
whd-read, whd-reader, whd-writer, whd-hand-over, whd-copy, whd-report,
whd-cuda-start; the main thread keeps the program's name). Each sample of
`perf record -e cpu-clock -F HZ` is a thread on a core for 1/HZ s, so the samples of
a role in a time bin, over HZ times the bin, are the cores that role kept busy. The
output is a line per bin (cores busy per role and a bar of the total), then each
role's share over the run. Gaps in the bar are cores left idle.

Usage: perf script -i perf.data -F comm,tid,time | perf_timeline.py [--hz 1000] [--bin-ms 2] [--from-ms A] [--to-ms B]
"""
import argparse
import collections
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hz", type=float, default=1000.0, help="the sampling rate given to perf record -F")
    ap.add_argument("--bin-ms", type=float, default=2.0, help="width of a time bin")
    ap.add_argument("--from-ms", type=float, default=0.0, help="first bin shown, from the first sample")
    ap.add_argument("--to-ms", type=float, default=float("inf"), help="end of the bins shown")
    args = ap.parse_args()

    samples = []  # (role, time)
    for line in sys.stdin:
        # "COMM TID TIME:"; a comm may hold spaces, so take the last two fields apart.
        fields = line.split()
        if len(fields) < 3 or not fields[-1].endswith(":"):
            continue
        try:
            t = float(fields[-1].rstrip(":"))
        except ValueError:
            continue
        samples.append((" ".join(fields[:-2]), t))
    if not samples:
        sys.exit("no samples read (expected perf script -F comm,tid,time)")

    t0 = min(t for _, t in samples)
    t1 = max(t for _, t in samples)
    width = args.bin_ms / 1000.0
    per_bin = args.hz * width  # samples of one busy core in one bin
    bins = collections.defaultdict(collections.Counter)
    totals = collections.Counter()
    for role, t in samples:
        bins[int((t - t0) / width)][role] += 1
        totals[role] += 1
    roles = [r for r, _ in totals.most_common()]

    print(f"{len(samples)} samples over {t1 - t0:.3f} s: {len(samples) / args.hz / (t1 - t0):.2f} cores busy on average")
    print("time [ms]  " + " ".join(f"{r[:12]:>12}" for r in roles) + "  total")
    for k in range(int((t1 - t0) / width) + 1):
        at = k * args.bin_ms
        if at < args.from_ms or at >= args.to_ms:
            continue
        c = bins[k]
        busy = sum(c.values()) / per_bin
        print(f"{at:9.1f}  " + " ".join(f"{c[r] / per_bin:12.1f}" for r in roles) + f"  {busy:5.1f} |" + "#" * int(round(busy)))
    print("\nshare of the samples:")
    for r in roles:
        print(f"  {r}: {100.0 * totals[r] / len(samples):.1f} % ({totals[r] / args.hz:.2f} thread-seconds)")


if __name__ == "__main__":
    main()
