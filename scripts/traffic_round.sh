#!/usr/bin/env bash
# The traffic shapes users record, decoded as users run whd-rx: the whole process,
# payload written, timed from outside (process start to exit), per backend.
#
#   long     16 x 65536 16-QAM data symbols
#   packets  20000 x 52, QPSK and 16-QAM alternating, 4 taps, CFO 300 kHz, random phase
#   tiny     100000 x 4 16-QAM
#   bursty   2000 x 200 16-QAM, 200000 samples of silence before each frame
# each as ci8 and cf32, SNR 30 dB, made with whd-tx into $WHD_SHAPES (default
# /dev/shm/whd-shapes: the capture in memory, as in the page cache).
#
# For each shape and backend: the median over REPEATS runs of the wall time, as x
# real time by air time (capture samples / 2.538 GS/s over the wall time) and as ns
# per data symbol, with the report's own timing beside it; and whether the GPU's
# frames and payload equal the CPU's (the CPU backend is the reference).
# Usage: scripts/traffic_round.sh DIST [REPEATS] [SHAPES...]   (DIST from scripts/bundle.sh)
# Writes $OUT/traffic.md and $OUT/traffic.json (or ./out-traffic).
set -uo pipefail
dist=${1:-dist}
repeats=${2:-3}
shift 2 || shift $#
shapes=("$@")
((${#shapes[@]})) || shapes=(long packets tiny bursty)
final=${OUT:-out-traffic}
mkdir -p "$final"
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
dir=${WHD_SHAPES:-/dev/shm/whd-shapes}
mkdir -p "$dir"
tx=$dist/bin/whd-tx
rx=$dist/bin/whd-rx

shape_args() {
  case $1 in
    long) echo "--mod qam16 --frames 16 --nd 65536 --taps 4 --cfo-hz 3e5 --random-phase" ;;
    packets) echo "--mod qpsk,qam16 --frames 20000 --nd 52 --taps 4 --cfo-hz 3e5 --random-phase" ;;
    tiny) echo "--mod qam16 --frames 100000 --nd 4" ;;
    bursty) echo "--mod qam16 --frames 2000 --nd 200 --gap 200000" ;;
  esac
}

echo "== making the captures (whd-tx, in parallel)"
pids=()
for s in "${shapes[@]}"; do
  for d in ci8 cf32_le; do
    base=$dir/$s-$d
    [[ -f $base.sigmf-meta ]] && continue
    # shellcheck disable=SC2046
    "$tx" -o "$base" -d "$d" $(shape_args "$s") --snr-db 30 --seed 7 >"$base.tx.log" 2>&1 &
    pids+=($!)
  done
done
for p in "${pids[@]}"; do wait "$p" || echo "whd-tx failed (pid $p)"; done
du -sh "$dir"

python3 - "$rx" "$dir" "$repeats" "$final" "${shapes[@]}" <<'EOF'
import json, os, statistics, subprocess, sys, time, datetime, platform, filecmp
rx, d, repeats, final, shapes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
FS, SYMBOL_NS = 2.538e9, 226.95
rows = []
def run(cap, backend, payload, report):
    t0 = time.perf_counter()
    r = subprocess.run([rx, cap, "--backend", backend, "-q", "-o", payload, "--report", report],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{cap} {backend}: exit {r.returncode}: {r.stderr[-400:]}")
    return wall, json.load(open(report))
for s in shapes:
    for dt in ("ci8", "cf32_le"):
        cap = f"{d}/{s}-{dt}.sigmf-meta"
        out = {}
        for backend in ("gpu", "cpu"):
            payload = f"/dev/shm/whd-payload-{backend}"
            walls, rep = [], None
            try:
                for _ in range(repeats if backend == "gpu" else max(1, repeats // 2)):
                    w, rep = run(cap, backend, payload, f"/tmp/rep-{backend}.json")
                    walls.append(w)
            except RuntimeError as e:
                print("FAILED", e, flush=True)
                out[backend] = {"error": str(e)}
                continue
            wall = statistics.median(walls)
            samples = rep["input"]["samples"]
            ds = rep["timing"]["data_symbols"]
            air = samples / FS
            out[backend] = {"wall_s": wall, "walls": walls, "air_s": air, "x_realtime_air": air / wall,
                            "ns_per_data_symbol": wall * 1e9 / ds if ds else None, "data_symbols": ds,
                            "frames": len(rep["frames"]), "header_failures": len(rep["header_failures"]),
                            "report_timing": rep["timing"],
                            "stages": rep.get("stage_seconds") or rep["timing"].get("stages")}
            out[backend]["_frames"] = [(f["start"], f["mod"], f["nd"], f["seq"], f["symbols"], f["truncated"]) for f in rep["frames"]]
        if "_frames" in out.get("gpu", {}) and "_frames" in out.get("cpu", {}):
            fg, fc = out["gpu"].pop("_frames"), out["cpu"].pop("_frames")
            same_frames = fg == fc
            diff_starts = sum(1 for a, b in zip(fg, fc) if a != b)
            same_payload = filecmp.cmp("/dev/shm/whd-payload-gpu", "/dev/shm/whd-payload-cpu", shallow=False)
            out["agreement"] = {"same_frames": same_frames, "frames_gpu": len(fg), "frames_cpu": len(fc),
                                "differing_frames": diff_starts, "same_payload": same_payload}
        for b in ("gpu", "cpu"):
            out.get(b, {}).pop("_frames", None)
        out.update(shape=s, datatype=dt)
        rows.append(out)
        g, c = out.get("gpu", {}), out.get("cpu", {})
        print(f"{s:8s} {dt:8s} gpu {g.get('x_realtime_air', float('nan')):8.3f}x air {g.get('ns_per_data_symbol') or float('nan'):9.1f} ns/sym | "
              f"cpu {c.get('x_realtime_air', float('nan')):8.3f}x air | agree {out.get('agreement')}", flush=True)
meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "host": platform.node(),
        "command": "scripts/traffic_round.sh " + " ".join(sys.argv[3:4] + shapes), "repeats": repeats,
        "region": "whole whd-rx process (start to exit), payload written to /dev/shm, capture in /dev/shm"}
try:
    meta["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except OSError:
    pass
json.dump({"meta": meta, "rows": rows}, open(f"{final}/traffic.json", "w"), indent=1)
with open(f"{final}/traffic.md", "w") as f:
    f.write(f"# Traffic shapes, whole whd-rx process\n\n{meta}\n\n")
    f.write("| shape | datatype | air [ms] | GPU wall [s] | GPU x real time (air) | GPU ns / data symbol | CPU wall [s] | CPU x real time (air) | GPU = CPU (frames, payload) |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n")
    for r in rows:
        g, c, a = r.get("gpu", {}), r.get("cpu", {}), r.get("agreement", {})
        f.write(f"| {r['shape']} | {r['datatype']} | {1e3 * g.get('air_s', c.get('air_s', 0)):.1f} | {g.get('wall_s', float('nan')):.3f} | "
                f"{g.get('x_realtime_air', float('nan')):.3f} | {g.get('ns_per_data_symbol') or float('nan'):.1f} | {c.get('wall_s', float('nan')):.3f} | "
                f"{c.get('x_realtime_air', float('nan')):.3f} | {a.get('same_frames')}, {a.get('same_payload')} |\n")
print(open(f"{final}/traffic.md").read())
EOF
