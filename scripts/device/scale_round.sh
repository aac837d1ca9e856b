#!/usr/bin/env bash
# Scale run: a capture of SIZE_GB, made of copies of one whd-tx capture (raw ci8,
# 16-QAM, 4-tap channel, CFO, 40 dB), decodes end to end with whd-rx; the payload
# is checked against the copies' whd-tx truth twice (whd-rx --truth, streamed, and
# cmp on the payload file), and memory is reported: peak RSS (the report's and
# /usr/bin/time's), the device and page-locked memory the backend allocated, and
# the device memory in use (the report's and nvidia-smi's, sampled). WHD_SCALE_TX: the
# copy's whd-tx options instead (for example coded frames: "--mcs 2 -n 16 --nd 28000
# --snr-db 40 --cfo-hz 300e3 --taps 4 --seed 11"). The copy
# itself (base.ci8) is decoded first: memory that does not grow from it to the
# big capture is memory that is bounded.
#
# Usage: scripts/device/scale_round.sh BIN_DIR WORK_DIR SIZE_GB BACKEND [whd-rx options...]
#   BIN_DIR   folder holding whd-tx and whd-rx (dist/bin of scripts/bundle.sh)
#   WORK_DIR  where the captures, truths and payloads go (needs SIZE_GB * 1.3 free)
#   BACKEND   cpu or gpu
# Writes WORK_DIR/scale.md and WORK_DIR/scale.json (or under $OUT when set).
# WHD_SCALE_REPEATS (3): decodes of the big capture; WHD_SCALE_NO_FILE (1): one more
# without a payload file, and one with neither payload file nor --truth;
# WHD_SCALE_SPARSE=K: the big capture is a sparse file of SIZE_GB holding K copies
# spread evenly, holes (zero samples) between them (for sizes beyond the disk); WHD_PAYLOAD_DIR (WORK_DIR): where payload files go.
set -euo pipefail
bin=$1 work=$2 size_gb=$3 backend=$4
shift 4
extra=("$@")
out=${OUT:-$work}
mkdir -p "$work" "$out"
payload_dir=${WHD_PAYLOAD_DIR:-$work}

if [[ ! -f $work/base.ci8 || ! -f $work/base.truth ]]; then
  echo "== generating the copy"
  # shellcheck disable=SC2086 # WHD_SCALE_TX is a list of options
  "$bin/whd-tx" -o "$work/base" --raw -d ci8 ${WHD_SCALE_TX:--m qam16 -n 16 --nd 28000 --snr-db 40 --cfo-hz 300e3 --taps 4 --seed 11} 2>"$out/whd-tx.log"
fi
base_bytes=$(stat -c %s "$work/base.ci8")
copies=$(python3 -c "import math; print(max(1, math.ceil($size_gb * 1e9 / $base_bytes)))")
if [[ -n ${WHD_SCALE_SPARSE:-} ]]; then
  # A capture larger than the disk: WHD_SCALE_SPARSE copies spread evenly over
  # SIZE_GB, the rest holes in a sparse file, read back as zero samples (silence).
  copies=$WHD_SCALE_SPARSE
  total=$(python3 -c "print(int($size_gb * 1e9) // 2 * 2)")
  echo "== writing a sparse capture of $total bytes with $copies copies"
  rm -f "$work/big.ci8" "$work/big.truth"
  truncate -s "$total" "$work/big.ci8"
  for ((i = 0; i < copies; i++)); do
    offset=$(python3 -c "print($total * $i // $copies // 2 * 2)")
    dd if="$work/base.ci8" of="$work/big.ci8" bs=4M seek="$offset" oflag=seek_bytes conv=notrunc status=none
    cat "$work/base.truth" >>"$work/big.truth"
  done
  echo "on disk: $(du -h "$work/big.ci8" | cut -f1) of $(du -h --apparent-size "$work/big.ci8" | cut -f1)"
elif [[ ! -f $work/big.ci8 || $(stat -c %s "$work/big.ci8") -ne $((copies * base_bytes)) ]]; then
  echo "== writing $copies copies ($((copies * base_bytes / 1000000)) MB)"
  rm -f "$work/big.ci8" "$work/big.truth"
  t0=$(date +%s.%N)
  for ((i = 0; i < copies; i++)); do
    cat "$work/base.ci8" >>"$work/big.ci8"
    cat "$work/base.truth" >>"$work/big.truth"
  done
  echo "written in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s"
fi

# One decode: NAME CAPTURE TRUTH [PAYLOAD]; PAYLOAD /dev/null writes no payload file.
decode() {
  local name=$1 capture=$2 truth=$3 payload=${4:-$payload_dir/$1.payload}
  local smi_pid=""
  if [[ $backend == gpu ]] && command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$out/$name.smi.log" 2>/dev/null &
    smi_pid=$!
  fi
  echo "== whd-rx $name ($(stat -c %s "$capture") bytes), backend $backend"
  local timev=()
  [[ -x /usr/bin/time ]] && timev=(/usr/bin/time -v -o "$out/$name.time.log")
  local check=(--truth "$truth")
  [[ $truth == - ]] && check=()
  "${timev[@]}" "$bin/whd-rx" "$capture" --backend "$backend" -v --report "$out/$name.json" "${check[@]}" \
    -o "$payload" "${extra[@]}" 2>"$out/$name.log" || echo "whd-rx rc=$?"
  grep -E "stage|memory:|truth:" "$out/$name.log" | sed 's/^.*\] //'

  [[ -n $smi_pid ]] && kill "$smi_pid" 2>/dev/null || true
  if [[ $truth == - ]]; then
    echo "not checked" >"$out/$name.cmp.log"
  elif [[ $payload == /dev/null ]]; then
    echo "not written" >"$out/$name.cmp.log"
  elif cmp -s "$payload" "$truth"; then
    echo "equal (cmp)" >"$out/$name.cmp.log"
  else
    { cmp "$payload" "$truth" 2>&1 || true; } | sed 's/.* differ: /differs at /' >"$out/$name.cmp.log"
  fi
  [[ $payload == /dev/null ]] || rm -f "$payload"
}
decode base "$work/base.ci8" "$work/base.truth"
# The big capture three times (the first pays for the payload file's memory
# being touched for the first time), then once more without a payload file.
names="base"
for ((i = 1; i <= ${WHD_SCALE_REPEATS:-3}; i++)); do
  decode "big-$i" "$work/big.ci8" "$work/big.truth"
  names="$names big-$i"
done
if [[ ${WHD_SCALE_NO_FILE:-1} == 1 ]]; then
  decode big-no-file "$work/big.ci8" "$work/big.truth" /dev/null
  decode big-receiver-only "$work/big.ci8" - /dev/null
  names="$names big-no-file big-receiver-only"
fi

python3 - "$out" "$backend" "$copies" "${extra[*]}" "$names" "$size_gb" <<'EOF'
import json, os, platform, subprocess, sys, datetime
out, backend, copies, extra, names, size_gb = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5].split(), sys.argv[6]
def time_rss(name):
    try:
        for line in open(os.path.join(out, name + ".time.log")):
            if "Maximum resident set size" in line:
                return int(line.split(":")[1]) * 1024
    except OSError:
        pass
    return None
def smi_max(name):
    try:
        vals = [int(v) for v in open(os.path.join(out, name + ".smi.log")).read().split() if v.isdigit()]
        return max(vals) * 1024 * 1024 if vals else None
    except OSError:
        return None
rows = []
for name in names:
    r = json.load(open(os.path.join(out, name + ".json")))
    cmp_line = open(os.path.join(out, name + ".cmp.log")).read().strip()
    rows.append({
        "capture": name, "bytes": os.path.getsize(r["input"]["path"]), "samples": r["input"]["samples"],
        "frames": len(r["frames"]), "data_symbols": r["timing"]["data_symbols"], "seconds": r["timing"]["seconds"],
        "ns_per_symbol": r["timing"]["ns_per_symbol"], "x_realtime": r["timing"]["x_realtime"],
        "bit_errors": r.get("truth", {}).get("bit_errors"), "compared_bits": r.get("truth", {}).get("compared_bits"),
        "missing_bits": r.get("truth", {}).get("missing_bits"), "cmp": cmp_line, **r["resources"],
        "time_max_rss_bytes": time_rss(name), "smi_max_used_bytes": smi_max(name)})
gpu = ""
try:
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except OSError:
    pass
mem_total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
env = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "host": platform.node(), "cpus": os.cpu_count(),
       "ram_bytes": mem_total, "gpu": gpu or "none", "backend": backend, "copies": copies,
       "command": f"scripts/device/scale_round.sh BIN WORK {size_gb} " + backend + (" " + extra if extra else ""),
       "copy": "whd-tx --raw -d ci8 " + os.environ.get("WHD_SCALE_TX", "-m qam16 -n 16 --nd 28000 --snr-db 40 --cfo-hz 300e3 --taps 4 --seed 11")}
mib = lambda b: "-" if b is None else f"{b / 2**20:,.0f}"
lines = [f"# Scale run, {backend} backend", "",
         f"- date {env['date']}, host {env['host']}, {env['cpus']} CPUs, {mem_total / 2**30:.0f} GiB RAM, GPU: {env['gpu']}",
         f"- command: `{env['command']}`", f"- the copy: `{env['copy']}`"]
if os.environ.get("WHD_SCALE_SPARSE"):
    env["sparse_copies"] = int(os.environ["WHD_SCALE_SPARSE"])
    lines.append(f"- the big capture is a sparse file: {env['sparse_copies']} copies spread evenly, holes between them read back as zero samples (silence)")
lines += ["",
         "| capture | GB | data symbols | s | ns/symbol | x real time | bit errors / bits | payload file vs truth | peak RSS MiB (report / time -v) | device MiB (ours / in use / nvidia-smi max) | pinned MiB | batch |",
         "|---|---:|---:|---:|---:|---:|---|---|---|---|---:|---:|"]
for r in rows:
    errs = "-" if r["bit_errors"] is None else f"{r['bit_errors']} / {r['compared_bits']:,} (missing {r['missing_bits']})"
    lines.append(f"| {r['capture']} | {r['bytes'] / 1e9:.2f} | {r['data_symbols']:,} | {r['seconds']:.1f} | {r['ns_per_symbol']:.1f} | "
                 f"{r['x_realtime']:.2f} | {errs} | {r['cmp']} | "
                 f"{mib(r['peak_rss_bytes'])} / {mib(r['time_max_rss_bytes'])} | {mib(r['device_bytes'])} / {mib(r['device_used_bytes'])} / "
                 f"{mib(r['smi_max_used_bytes'])} | {mib(r['pinned_bytes'])} | {r['symbols_per_batch']} |")
base, big = rows[0], rows[1]
lines += ["", f"Each of the {copies} copies decodes as the copy alone does: bit errors {big['bit_errors']} = {copies} x {base['bit_errors']}: "
          + ("yes" if big["bit_errors"] == copies * base["bit_errors"] and big["missing_bits"] == 0 else "NO"),
          f"Peak RSS from the copy to {copies} copies: {mib(base['peak_rss_bytes'])} -> {mib(big['peak_rss_bytes'])} MiB; "
          f"device memory allocated: {mib(base['device_bytes'])} -> {mib(big['device_bytes'])} MiB."]
json.dump({"environment": env, "runs": rows}, open(os.path.join(out, "scale.json"), "w"), indent=2)
open(os.path.join(out, "scale.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
