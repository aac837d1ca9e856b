#!/usr/bin/env python3
"""Trace the GPU's decoded differences from the CPU's to their soft values.

Usage: soft_trace.py CPU_REPORT GPU_REPORT CPU_PAYLOAD GPU_PAYLOAD CPU_LLR GPU_LLR (each whd-rx report of the same capture, with
-o and --llr int8 at the FEC's scale 4, so that the values are those its decoder takes).

For every frame (the two reports must list the same frames), compares the information bytes
and the frame's int8 soft values. Prints one JSON object: frames, frames whose soft values
differ (and by how many values, and the largest step), frames whose bytes differ, and
among those any whose soft values are equal: a decoder difference, which must be 0.
Standard library only (runs on the GPU machine's Python)."""
import json
import sys

BITS = {"qpsk": 672, "qam16": 1344}


def main():
    cpu_r, gpu_r = (json.load(open(p)) for p in sys.argv[1:3])
    cpu_p, gpu_p = (open(p, "rb").read() for p in sys.argv[3:5])
    cpu_l, gpu_l = (open(p, "rb").read() for p in sys.argv[5:7])
    fc, fg = cpu_r["frames"], gpu_r["frames"]
    out = {"frames_cpu": len(fc), "frames_gpu": len(fg), "frames_equal": True, "info_bits": 0,
           "soft_differs": 0, "soft_values_differing": 0, "largest_step": 0, "bytes_differ": 0,
           "bytes_differ_soft_equal": 0, "bit_differences": 0, "examples": []}
    if len(fc) != len(fg):
        out["frames_equal"] = False
        print(json.dumps(out))
        return 1
    llr_at = 0
    for i, (a, b) in enumerate(zip(fc, fg)):
        for k in ("start", "nd", "mod", "seq", "symbols", "mcs", "payload_bytes", "payload_offset"):
            if a.get(k) != b.get(k):
                out["frames_equal"] = False
        n = a["symbols"] * BITS[a["mod"]]
        sa, sb = cpu_l[llr_at:llr_at + n], gpu_l[llr_at:llr_at + n]
        llr_at += n
        pa = cpu_p[a["payload_offset"]:a["payload_offset"] + a["payload_bytes"]]
        pb = gpu_p[b["payload_offset"]:b["payload_offset"] + b["payload_bytes"]]
        out["info_bits"] += 8 * a["payload_bytes"] if a.get("mcs") is not None else 0
        soft_diff = sa != sb
        if soft_diff:
            out["soft_differs"] += 1
            d = [abs(((x + 128) % 256) - ((y + 128) % 256)) for x, y in zip(sa, sb) if x != y]
            out["soft_values_differing"] += len(d)
            out["largest_step"] = max(out["largest_step"], max(d))
        if pa != pb:
            out["bytes_differ"] += 1
            bits = sum(bin(x ^ y).count("1") for x, y in zip(pa, pb))
            out["bit_differences"] += bits
            if not soft_diff:
                out["bytes_differ_soft_equal"] += 1
            if len(out["examples"]) < 8:
                out["examples"].append({"frame": i, "start": a["start"], "bit_differences": bits,
                                        "soft_values_differing": len(d) if soft_diff else 0,
                                        "rs_failed_cpu": a.get("rs_failed"), "rs_failed_gpu": b.get("rs_failed")})
    print(json.dumps(out))
    return 0 if out["frames_equal"] and out["bytes_differ_soft_equal"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
