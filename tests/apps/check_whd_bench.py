#!/usr/bin/env python3
"""Smoke tests of whd-bench cpu, ber, compare and traffic, small enough for CI (seconds).

Runs one subcommand in a tiny form, loads its --json output and judges it:
every report field the subcommand promises is there, the figures are finite and
consistent with each other (x real time = 226.95 / ns, raw Gbps = bits / ns), the
decoded bits agree (with the truth, and between backends), and the BER lies near
uncoded Gray theory where the error count makes that meaningful. GPU rows are
checked when a GPU was used, and their absence must come with a stated reason.

usage: check_whd_bench.py {cpu,ber,compare,traffic} --bench WHD_BENCH [--tx WHD_TX] [--rx WHD_RX] --workdir DIR
"""
import argparse
import json
import math
import os
import subprocess
import sys

SYMBOL_NS = 226.95
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(cmd):
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    print(r.stdout)
    if r.returncode != 0:
        sys.exit(f"FAIL: {cmd[0]} {cmd[1]} exited {r.returncode}")


def finite_positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def check_env(j):
    for key in ("device", "driver", "gpu", "cpu", "host_threads", "commit", "date", "command", "liquid_dsp"):
        check(key in j, f"report has '{key}'")
    if not j.get("gpu"):
        check(bool(j.get("gpu_skipped_reason")), "no GPU used: the report states why")


def check_throughput(row, bits_per_symbol, what):
    ns = row.get("ns_per_symbol")
    check(finite_positive(ns), f"{what}: ns_per_symbol positive ({ns})")
    if not finite_positive(ns):
        return
    check(row["ns_per_symbol_min"] <= ns <= row["ns_per_symbol_max"], f"{what}: median within min..max")
    check(abs(row["x_realtime"] - SYMBOL_NS / ns) <= 1e-9 * SYMBOL_NS / ns + 1e-12, f"{what}: x_realtime = 226.95 / ns")
    check(abs(row["raw_gbps"] - bits_per_symbol / ns) <= 1e-6 * bits_per_symbol / ns, f"{what}: raw_gbps = bits / ns")
    check(row.get("repeats", 0) >= 1, f"{what}: repeats recorded")


def q(x):
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def theory(mod, ebn0_db):
    e = 10 ** (ebn0_db / 10)
    if mod == "qpsk":
        return q(math.sqrt(2 * e))
    a = math.sqrt(0.8 * e)
    return (3 * q(a) + 2 * q(3 * a) - q(5 * a)) / 4


def cpu(a):
    out = os.path.join(a.workdir, "cpu.json")
    run([a.bench, "cpu", "--symbols", "256", "--nd", "128", "--threads", "2", "--warmup", "0", "--repeats", "2",
         "--json", out])
    j = json.load(open(out))
    check_env(j)
    check(j.get("benchmark") == "cpu", "benchmark is 'cpu'")
    cap = j["capture"]
    check(cap["data_symbols"] == 256 and cap["frames"] == 2, f"256 symbols in 2 frames located ({cap})")
    chains = sorted((r["chain"], r["threads"]) for r in j["rows"])
    check(chains == sorted([("whd cpu", 2), ("whd cpu", 1), ("plain liquid-dsp", 2), ("plain liquid-dsp", 1)]),
          f"rows: ours and plain, 2 threads and 1 ({chains})")
    for r in j["rows"]:
        check_throughput(r, cap["bits_per_symbol"], f"{r['chain']} x{r['threads']}")
    s = {x["threads"]: x["ours_over_plain"] for x in j["speedup_vs_plain"]}
    check(set(s) == {1, 2} and all(finite_positive(v) for v in s.values()), f"speed-up per thread count ({s})")
    check(j["truth"]["bits"] == 256 * 1344 and j["truth"]["bit_errors"] == 0, f"ours decodes the 30 dB capture without error ({j['truth']})")


def ber(a):
    out = os.path.join(a.workdir, "ber.json")
    run([a.bench, "ber", "--ebn0-qpsk", "4,12", "--ebn0-qam16", "8,17", "--errors", "100", "--max-bits", "400000",
         "--nd", "16", "--frames", "4", "--threads", "2", "--json", out])
    j = json.load(open(out))
    check_env(j)
    check(j.get("benchmark") == "ber", "benchmark is 'ber'")
    labels = {(c["mod"], c["label"]) for c in j["curves"]}
    want = {("qpsk", "cpu"), ("qam16", "cpu")}
    if j["gpu"]:
        want |= {(m, "gpu " + l) for m in ("qpsk", "qam16") for l in ("f32", "half", "int8")}
    check(labels == want, f"curves {sorted(labels)}")
    for c in j["curves"]:
        mod, pts = c["mod"], c["points"]
        check(len(pts) == 2, f"{c['label']} {mod}: two points")
        low, high = pts[0], pts[-1]
        for p in pts:
            check(p["frames_missed"] == 0, f"{c['label']} {mod} at {p['ebn0_db']} dB: no frame missed")
            check(abs(p["theory_ber"] - theory(mod, p["ebn0_db"])) <= 1e-9 + 1e-6 * p["theory_ber"],
                  f"{c['label']} {mod}: theory at {p['ebn0_db']} dB")
            bits_per_tone = 2 if mod == "qpsk" else 4
            snr = p["ebn0_db"] + 10 * math.log10(bits_per_tone) - 10 * math.log10(512 / 352)
            check(abs(p["snr_db"] - snr) < 1e-9, f"{c['label']} {mod}: SNR mapping at {p['ebn0_db']} dB")
        # The low point has >= 100 errors: within ~1 dB of theory (BER between 0.7x and 4x theory).
        t = theory(mod, low["ebn0_db"])
        check(low["errors"] >= 100 and 0.7 * t <= low["ber"] <= 4 * t,
              f"{c['label']} {mod} at {low['ebn0_db']} dB: BER {low['ber']:.3g} near theory {t:.3g}")
        # The high point (theory < 1e-8): essentially error-free.
        check(high["bits"] >= 400000 and high["ber"] <= 1e-5, f"{c['label']} {mod} at {high['ebn0_db']} dB: BER {high['ber']:.3g} <= 1e-5")
        check([x["target_ber"] for x in c["crossings"]] == [1e-3, 1e-4], f"{c['label']} {mod}: crossings at 1e-3 and 1e-4")
    check("link_deltas_vs_f32" in j, "report has link_deltas_vs_f32")


def compare(a):
    base = os.path.join(a.workdir, "cmp")
    # Flat channel at 30 dB: error-free for both modulations whatever the seed (a random
    # multipath channel can notch tones deep enough for a few errors).
    run([a.tx, "-o", base, "-d", "ci8", "--mod", "qpsk,qam16", "--frames", "2", "--nd", "48", "--snr-db", "30",
         "--cfo-hz", "3e5", "--random-phase", "--seed", "5", "-q"])
    out = os.path.join(a.workdir, "compare.json")
    run([a.bench, "compare", base + ".sigmf-meta", "--threads", "2", "--warmup", "0", "--repeats", "2", "--json", out])
    j = json.load(open(out))
    check_env(j)
    check(j.get("benchmark") == "compare", "benchmark is 'compare'")
    cap = j["capture"]
    check(cap["frames"] == 2 and cap["data_symbols"] == 96, f"2 frames, 96 symbols ({cap})")
    check(cap["truth"] is not None and cap["truth"].endswith("cmp.truth"), "the truth beside the capture was found")
    names = [r["name"] for r in j["rows"]]
    want = ["cpu"] + (["gpu f32", "gpu half", "gpu int8"] if j["gpu"] else []) + ["plain liquid-dsp", "plain liquid-dsp"]
    check(names == want, f"rows {names}")
    for r in j["rows"]:
        check_throughput(r, cap["bits_per_symbol"], r["name"])
        check(finite_positive(r["speedup_vs_plain"]), f"{r['name']}: speed-up vs plain")
        if r["region"] == "end-to-end":
            check(r.get("truth_bit_errors") == 0, f"{r['name']}: no bit error against the truth")
    n = len(want) - 2
    check(len(j["pairs"]) == n * (n - 1) // 2, "every pair of backends compared")
    check(all(p["bit_differences"] == 0 for p in j["pairs"]) and j["all_bits_agree"], "every pair's bits agree")


def traffic(a):
    # The tiny shape at 1/100 (1000 frames of 4 16-QAM symbols), made in the work folder;
    # whd-rx found the default way (the build tree's apps/whd-rx/ beside apps/whd-bench/).
    out = os.path.join(a.workdir, "traffic.json")
    md = os.path.join(a.workdir, "traffic.md")
    run([a.bench, "traffic", "--shapes", "tiny", "--types", "ci8", "--backends", "cpu,liquid", "--repeats", "2",
         "--scale", "0.01", "--dir", os.path.join(a.workdir, "shapes"), "--payload-dir", a.workdir,
         "--json", out, "--markdown", md])
    j = json.load(open(out))
    check_env(j)
    check(j.get("benchmark") == "traffic", "benchmark is 'traffic'")
    check(os.path.realpath(j["rx"]) == os.path.realpath(a.rx), f"the default whd-rx is the build's ({j['rx']})")
    check(j["problems"] == 0 and j["gpu_vs_cpu"] == [], "no problem; no GPU comparison without a GPU row")
    check(j["links"] == ["f32"], f"the GPU's cf32 link is f32 unless --links says more ({j['links']})")
    caps = j["captures"]
    check(len(caps) == 1 and caps[0]["frames_sent"] == 1000 and caps[0]["data_symbols_sent"] == 4000,
          f"one capture, 1000 x 4 symbols ({caps})")
    cap = caps[0]
    check(cap["path"].endswith("tiny-s0.01-ci8.sigmf-meta") and os.path.exists(cap["path"]), "the capture is kept under its scaled name")
    check(abs(cap["air_s"] - cap["samples"] / 2.538e9) <= 1e-12 * cap["air_s"], "air time = samples / 2.538 GS/s")
    rows = {r["backend"]: r for r in j["rows"]}
    check([r["backend"] for r in j["rows"]] == ["cpu", "liquid"], f"rows cpu, liquid ({list(rows)})")
    for b, r in rows.items():
        check("error" not in r, f"{b}: ran ({r.get('error')})")
        if "error" in r:
            continue
        t = r["time_s"]
        check(finite_positive(t["median"]) and t["min"] <= t["median"] <= t["max"] and t["repeats"] == 2,
              f"{b}: positive time, median within min..max, 2 repeats ({t})")
        check(r["frames"] == 1000 and r["data_symbols"] == 4000, f"{b}: 1000 frames, 4000 data symbols ({r['frames']}, {r['data_symbols']})")
        check(r["payload_bytes"] == 4000 * 168, f"{b}: 168 payload bytes a 16-QAM symbol")
        check(abs(r["x_realtime_air"] - cap["air_s"] / t["median"]) <= 1e-9 * r["x_realtime_air"], f"{b}: x real time = air / time")
        check(abs(r["ns_per_data_symbol"] - t["median"] * 1e9 / r["data_symbols"]) <= 1e-6 * r["ns_per_data_symbol"],
              f"{b}: ns / data symbol = time / symbols")
    cpu = rows.get("cpu", {})
    if "report" in cpu:
        rep = cpu["report"]
        check(all(finite_positive(rep[k]) for k in ("setup_s", "decode_s", "wall_s")), f"cpu: the report's split ({rep})")
        # The report counts from the kernel's process start (10 ms ticks) to the payload
        # written: inside the time taken from outside, but for that resolution.
        check(abs(rep["setup_s"] + rep["decode_s"] - rep["wall_s"]) <= 1e-6 and rep["wall_s"] <= cpu["time_s"]["max"] + 0.02,
              f"cpu: setup + decode = the report's wall, within the outside time ({rep}, {cpu['time_s']})")
        check(cpu["header_failures"] == 0 and cpu["truth_bit_errors"] == 0, "cpu: no header failure, the payload is the truth")
    liquid = rows.get("liquid", {})
    check(liquid.get("frames_match_cpu") is True, "liquid: its frames are the CPU backend's")
    check(liquid.get("threads", 0) >= 1 and liquid.get("locate_s", -1) >= 0, "liquid: threads and location time recorded")
    text = open(md).read()
    check("| tiny | ci8 | cpu | whole process | 1000 | 4000 |" in text and "| tiny | ci8 | liquid | located frames" in text,
          "the Markdown has both rows")
    left = [f for f in os.listdir(a.workdir) if f.startswith("whd-traffic-")]
    check(not left, f"no payload, report or stderr of whd-rx left behind ({left})")
    bad = subprocess.run([a.bench, "traffic", "--links", "f32,f16", "--dir", os.path.join(a.workdir, "shapes")], capture_output=True, text=True)
    check(bad.returncode != 0 and "'f16' is not f32, half or int8" in bad.stderr, f"--links names what it does not know ({bad.stderr.strip()})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["cpu", "ber", "compare", "traffic"])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--tx")
    ap.add_argument("--rx")
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    {"cpu": cpu, "ber": ber, "compare": compare, "traffic": traffic}[a.kind](a)
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed")
    print("all checks passed")


if __name__ == "__main__":
    main()
