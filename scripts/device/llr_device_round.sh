#!/usr/bin/env bash
# Soft output on a GPU machine: the GPU tests (the soft-output ones under memcheck
# and racecheck too), the calibration of the CPU's and the GPU's LLRs over the BER
# curves (whd-bench ber), and what --llr costs the whole whd-rx process on long
# frames and packets (ci8 captures in /dev/shm, payload and LLRs written there).
# Usage (device `carry: ["dist"]`): scripts/device/llr_device_round.sh dist [REPEATS]
# Writes $OUT/{llr-speed.md,ber.json,ber.md,logs.tgz} (or ./out-llr).
set -uo pipefail
dist=${1:-dist}
repeats=${2:-3}
final=${OUT:-out-llr}
out=$(mktemp -d)
mkdir -p "$final"
trap 'cp "$out"/llr-speed.md "$out"/ber.json "$out"/ber.md "$final"/ 2>/dev/null; tar czf "$final/logs.tgz" -C "$out" .' EXIT
source "$(dirname "$0")/device_env.sh"
{ nvidia-smi; lscpu; } >"$out/machine.txt" 2>&1

echo "== gpu tests"
gpu_tests 300
grep -E "one step apart|calibration slope" "$out/baseband_gpu_tests.log"
echo "== sanitizers on the soft-output tests"
for tool in memcheck racecheck; do
  timeout 300 "$san" --tool "$tool" --error-exitcode 3 "$dist/bin/baseband_gpu_tests" --gtest_filter='vectors/gpu_llr.*' >"$out/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log" | tr '\n' ' ')"
done

echo "== whd-bench ber (CPU and GPU f32, LLR calibration)"
timeout 420 "$dist/bin/whd-bench" ber --links f32 --errors 3000 --max-bits 60000000 --ebn0-qpsk 2:10:2 --ebn0-qam16 6:14:2 \
  --json "$out/ber.json" --markdown "$out/ber.md" >"$out/ber.log" 2>&1
echo "ber rc=$?"
sed -n '/| modulation | backend | Eb/,/^$/p' "$out/ber.md"

echo "== --llr on the whole whd-rx process"
dir=/dev/shm/whd-llr
mkdir -p "$dir"
"$dist/bin/whd-tx" -o "$dir/long" -d ci8 --mod qam16 --frames 16 --nd 65536 --taps 4 --cfo-hz 3e5 --random-phase --snr-db 30 --seed 7 >/dev/null 2>&1 &
"$dist/bin/whd-tx" -o "$dir/packets" -d ci8 --mod qpsk,qam16 --frames 20000 --nd 52 --taps 4 --cfo-hz 3e5 --random-phase --snr-db 30 --seed 7 >/dev/null 2>&1 &
wait
python3 - "$dist/bin/whd-rx" "$dir" "$repeats" "$out" <<'PY'
import json, os, statistics, subprocess, sys, time, datetime
rx, d, repeats, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = []
for shape in ("long", "packets"):
    cap = f"{d}/{shape}.sigmf-meta"
    for form in (None, "int8", "f16", "f32"):
        walls, rep, err = [], None, None
        for _ in range(repeats):
            args = [rx, cap, "--backend", "gpu", "-q", "-o", "/dev/shm/whd-llr-payload", "--report", f"{out}/r.json"]
            if form:
                args += ["--llr", "/dev/shm/whd-llr-soft", "--llr-format", form]
            t0 = time.perf_counter()
            r = subprocess.run(args, capture_output=True, text=True)
            walls.append(time.perf_counter() - t0)
            if r.returncode:
                err = r.stderr[-300:]
                break
            rep = json.load(open(f"{out}/r.json"))
        if err:
            rows.append((shape, form or "none", "FAILED " + err))
            continue
        t = rep["timing"]
        w = statistics.median(walls)
        sym = t["data_symbols"]
        llr_bytes = rep.get("llr", {}).get("bytes", 0)
        rows.append((shape, form or "none", w, t["air_seconds"] / w, w * 1e9 / sym, t["setup_seconds"], t["decode_seconds"],
                     rep["payload_bytes"], llr_bytes, (rep["payload_bytes"] + llr_bytes) / t["decode_seconds"] / 1e9))
        for f in ("/dev/shm/whd-llr-payload", "/dev/shm/whd-llr-soft"):
            if os.path.exists(f):
                os.remove(f)
with open(f"{out}/llr-speed.md", "w") as f:
    f.write(f"# whd-rx --llr, whole process (H100 machine, {datetime.date.today()})\n\n")
    f.write(f"Median of {repeats} runs; ci8 captures in /dev/shm, payload and LLRs written to /dev/shm. "
            "Whole process = process start to exit, timed from outside; x real time by air time.\n\n")
    f.write("| shape | --llr-format | wall s | x real time (air) | ns / data symbol | setup s | decode s | payload bytes | LLR bytes | bytes written / decode s [GB/s] |\n")
    f.write("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    for r in rows:
        if isinstance(r[2], str):
            f.write(f"| {r[0]} | {r[1]} | {r[2]} |\n")
        else:
            f.write("| %s | %s | %.3f | %.2f | %.1f | %.3f | %.3f | %d | %d | %.2f |\n" % r)
print(open(f"{out}/llr-speed.md").read())
PY
"$dist/bin/whd-rx" "$dir/long.sigmf-meta" --backend gpu -v -o /dev/shm/p --llr /dev/shm/l --report /dev/null 2>&1 | grep -E "stage|frame" >"$out/stages-long-llr.txt"
"$dist/bin/whd-rx" "$dir/long.sigmf-meta" --backend gpu -v -o /dev/shm/p --report /dev/null 2>&1 | grep -E "stage|frame" >"$out/stages-long.txt"
cat "$out/stages-long.txt" "$out/stages-long-llr.txt"
rm -rf "$dir" /dev/shm/p /dev/shm/l
