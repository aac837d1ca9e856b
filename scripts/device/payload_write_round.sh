#!/usr/bin/env bash
# The payload file's write question on a GPU machine's host, in one run:
#   1. the host's write ceiling: bench/probes/payload_write_probe.cpp (built
#      beside the bundle as DIST/bin/payload_write_probe) into /dev/shm (tmpfs) and
#      into a file on the disk (its page cache), 1, 8 and 16 threads;
#   2. whd-rx --backend gpu on a long-frame ci8 capture of SIZE_GB (copies of one
#      whd-tx capture, on the disk, read from the page cache) with the payload into
#      /dev/shm and into the disk's page cache, by mapping and by pwrite, and with no
#      payload file; median of REPEATS whole processes each, from the report's timing.
# Usage (device `carry: ["dist"]`): scripts/device/payload_write_round.sh dist [SIZE_GB] [REPEATS]
# Environment: WHD_DISK_DIR (default /var/tmp/whd-write): a folder on the disk.
# Writes $OUT/payload-write.md and $OUT/write-logs.tgz (or ./out-write).
set -uo pipefail
dist=$(cd "${1:-dist}" && pwd)
size_gb=${2:-20}
repeats=${3:-3}
final=${OUT:-out-write}
out=$(mktemp -d)
mkdir -p "$final"
trap 'cp "$out"/payload-write.md "$final"/ 2>/dev/null; tar czf "$final/write-logs.tgz" -C "$out" .' EXIT
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
disk=${WHD_DISK_DIR:-/var/tmp/whd-write}
shm=/dev/shm/whd-write
mkdir -p "$disk" "$shm"
md=$out/payload-write.md
{
  echo "# Payload writes on the GPU machine's host ($(date -u +%FT%TZ))"
  echo
  echo '```'
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "$(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB; kernel $(uname -r)"
  df -T /dev/shm "$disk" | sed 's/  */ /g'
  echo "tmpfs huge pages: $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null)"
  echo '```'
  echo
  echo "## 1. The write probe (2000 MB in pieces of 5 MiB, median of 3)"
  echo
  echo '```'
} >"$md"
if [[ -x $dist/bin/payload_write_probe ]]; then
  for t in 1 8 16; do
    for dir in "$shm" "$disk"; do
      timeout 200 "$dist/bin/payload_write_probe" "$dir/probe.bin" "$t" 2000 >>"$md" 2>&1
    done
  done
else
  echo "(no payload_write_probe in the bundle: the probe was not run)" >>"$md"
fi
echo '```' >>"$md"
rm -f "$shm/probe.bin" "$disk/probe.bin"

# The capture: copies of one whd-tx capture (as scripts/device/scale_round.sh makes it).
"$dist/bin/whd-tx" -o "$disk/base" --raw -d ci8 -m qam16 -n 16 --nd 28000 --snr-db 40 --cfo-hz 300e3 --taps 4 --seed 11 \
  >"$out/whd-tx.log" 2>&1
base_bytes=$(stat -c %s "$disk/base.ci8")
copies=$(python3 -c "import math; print(max(1, math.ceil($size_gb * 1e9 / $base_bytes)))")
rm -f "$disk/big.ci8"
for ((i = 0; i < copies; i++)); do cat "$disk/base.ci8" >>"$disk/big.ci8"; done
cat "$disk/big.ci8" >/dev/null # into the page cache

cases=("none|" "shm map|$shm/payload.bin|map" "shm pwrite|$shm/payload.bin|pwrite" "disk map|$disk/payload.bin|map"
       "disk pwrite|$disk/payload.bin|pwrite")
for c in "${cases[@]}"; do
  IFS='|' read -r name path method <<<"$c"
  for ((r = 0; r < repeats; r++)); do
    args=("$disk/big.ci8" --backend gpu -v --report "$out/${name// /-}.$r.json")
    [[ -n $path ]] && args+=(-o "$path" --payload-write "$method")
    "$dist/bin/whd-rx" "${args[@]}" 2>"$out/${name// /-}.$r.log"
    echo "$name run $r: rc=$?"
    rm -f "$path"
  done
done
python3 - "$out" "$repeats" "$size_gb" >>"$md" <<'PY'
import json, re, statistics, sys
out, repeats, size_gb = sys.argv[1], int(sys.argv[2]), sys.argv[3]
print(f"\n## 2. whd-rx --backend gpu on {size_gb} GB of ci8 (page cache), median of {repeats} processes\n")
print("| payload | wall [s] | x real time (air) | setup [s] | decode [s] | payload GB | payload to the sink [s] | GB/s into the sink |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for name in ["none", "shm map", "shm pwrite", "disk map", "disk pwrite"]:
    rows = []
    for r in range(repeats):
        try:
            rep = json.load(open(f"{out}/{name.replace(' ', '-')}.{r}.json"))
        except Exception:
            continue
        log = open(f"{out}/{name.replace(' ', '-')}.{r}.log").read()
        m = re.search(r"payload to the sink\D*([0-9.]+) s", log)
        rows.append((rep["timing"]["wall_seconds"], rep["timing"]["x_realtime_air"], rep["timing"]["setup_seconds"],
                     rep["timing"]["decode_seconds"], rep["payload_bytes"] / 1e9, float(m.group(1)) if m else float("nan")))
    if not rows:
        print(f"| {name} | failed | | | | | | |")
        continue
    rows.sort()
    w, x, s, d, gb, sink = rows[len(rows) // 2]
    rate = gb / sink if name != "none" and sink == sink and sink > 0 else float("nan")
    print(f"| {name} | {w:.3f} | {x:.2f} | {s:.3f} | {d:.3f} | {gb:.2f} | {sink:.3f} | {rate:.2f} |")
PY
cat "$md"
rm -rf "$shm" "$disk"
