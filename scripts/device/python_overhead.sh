#!/usr/bin/env bash
# What the Python module costs over whd-rx, on the same capture and machine:
#   whd-rx (the process, payload discarded, report to /dev/null) against
#   whdrx.decode (the whole call, in one process; payload returned in memory) and
#   python3 -c 'import whdrx; whdrx.decode(...)' (a process, like whd-rx);
# median of 5 runs each; then whdrx.batch over 16 copies of the capture (links to
# it) against a shell loop of whd-rx over the same 16, writing payloads and reports
# into a folder each (median of 3). Prints a markdown table.
#
#   scripts/device/python_overhead.sh BUILD_OR_DIST CAPTURE [--backend B] [--runs N]
#
# BUILD_OR_DIST: a build folder (BUILD/apps/whd-rx/whd-rx, BUILD/python) or a bundle
# of scripts/bundle.sh (DIST/bin/whd-rx, DIST/lib, DIST/python). The interpreter: WHD_PYTHON,
# else the one the build recorded (python/whdrx.env) when it is here, else python3;
# it must be the Python version the module was built for, with numpy (and
# dask.distributed for the batch rows, which are skipped, with the reason, without it).
# Environment: WHD_OVERHEAD_TMP (scratch folder, default a new one under /tmp).
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed '/^set -euo/d; s/^# \{0,1\}//' >&2; exit 2; }
(($# >= 2)) || usage
tree=$(cd "$1" && pwd)
capture=$2
shift 2
backend=auto runs=5
while (($#)); do
  case $1 in
    --backend) backend=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) usage ;;
  esac
done
if [[ -x $tree/apps/whd-rx/whd-rx ]]; then
  rx=$tree/apps/whd-rx/whd-rx
elif [[ -x $tree/bin/whd-rx ]]; then
  rx=$tree/bin/whd-rx
  export LD_LIBRARY_PATH="$tree/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  echo "python_overhead: no whd-rx in $tree (apps/whd-rx/whd-rx or bin/whd-rx)" >&2
  exit 1
fi
[[ -d $tree/python/whdrx ]] || { echo "python_overhead: no module in $tree/python/whdrx (built with WHD_BUILD_PYTHON?)" >&2; exit 1; }
recorded=''
if [[ -f $tree/python/whdrx.env ]]; then
  recorded=$(WHD_PYTHON=''; source "$tree/python/whdrx.env"; echo "${WHD_PYTHON:-}")
  [[ -x $recorded ]] || recorded=''
fi
py=${WHD_PYTHON:-${recorded:-python3}}
export PYTHONPATH="$tree/python${PYTHONPATH:+:$PYTHONPATH}"
if ! "$py" -c "import whdrx" 2>/tmp/python_overhead.err; then
  echo "python_overhead: $py cannot import whdrx from $tree/python:" >&2
  cat /tmp/python_overhead.err >&2
  exit 1
fi
work=${WHD_OVERHEAD_TMP:-$(mktemp -d /tmp/whdrx-overhead.XXXXXX)}
mkdir -p "$work"
exec "$py" - "$rx" "$capture" "$backend" "$runs" "$work" <<'PY'
import json, os, platform, shutil, statistics, subprocess, sys, time

rx, capture, backend, runs, work = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
import whdrx
from whdrx import batch

def timed(fn, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out

def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

rows = []
def row(what, times, ref=None, note=""):
    med = statistics.median(times)
    rows.append((what, med, times, ref, note))
    return med

first = whdrx.decode(capture, backend=backend)  # warm the page cache and the driver; what is decoded
symbols = first.data_symbols
cli = row(f"whd-rx (process), {runs} runs", timed(lambda: run([rx, capture, "--backend", backend, "-q", "--report", "/dev/null"]), runs))
row("whdrx.decode (the call)", timed(lambda: whdrx.decode(capture, backend=backend), runs), cli, "payload in memory")
code = f"import whdrx; whdrx.decode({capture!r}, backend={backend!r})"
row("python3 -c 'import whdrx; whdrx.decode(...)' (process)", timed(lambda: run([sys.executable, "-c", code]), runs), cli)

# 16 copies of the capture, each a link to it (a SigMF pair links both files).
src = os.path.join(work, "captures")
shutil.rmtree(src, ignore_errors=True)
os.makedirs(src)
cap = batch.find_captures([capture])[0]
names = []
for i in range(16):
    if cap.endswith(".sigmf-meta"):
        base = cap[: -len(".sigmf-meta")]
        for ext in (".sigmf-meta", ".sigmf-data"):
            os.symlink(base + ext, os.path.join(src, f"copy{i:02d}{ext}"))
        names.append(os.path.join(src, f"copy{i:02d}.sigmf-meta"))
    else:
        ext = os.path.splitext(cap)[1]
        os.symlink(cap, os.path.join(src, f"copy{i:02d}{ext}"))
        names.append(os.path.join(src, f"copy{i:02d}{ext}"))

def loop():
    out = os.path.join(work, "loop")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    script = "\n".join(f"'{rx}' '{c}' --backend {backend} -q -o '{out}/{i}.payload' --report '{out}/{i}.json' || exit 1"
                       for i, c in enumerate(names))
    subprocess.run(["bash", "-c", script], check=True)

batch_runs = max(1, min(3, runs))
skip = ""
try:
    import distributed  # noqa: F401
except ImportError as e:
    skip = f"skipped: {e} (install python3-distributed)"
loop_med = row(f"shell loop of whd-rx over 16 captures, {batch_runs} runs", timed(loop, batch_runs))
if skip:
    rows.append(("python3 -m whdrx.batch over 16 captures", None, [], loop_med, skip))
else:
    def dask_batch():
        out = os.path.join(work, "batch")
        subprocess.run([sys.executable, "-m", "whdrx.batch", src, "--out", out, "--backend", backend, "--force", "-q"],
                       check=True)
    med = row(f"python3 -m whdrx.batch over 16 captures (local cluster), {batch_runs} runs", timed(dask_batch, batch_runs),
              loop_med, "cluster start-up included")
    # Where the batch's time goes: its decodes (the summary's seconds, one worker per
    # GPU decoding in turn) and the rest (the cluster, the tasks' hand-over).
    with open(os.path.join(work, "batch", "summary.jsonl")) as f:
        decodes = sum(json.loads(line)["seconds"] for line in f)
    rows.append(("  of which the 16 decodes (summary's seconds, summed)", decodes, [], None,
                 f"the rest {med - decodes:.2f} s: cluster start and stop, hand-over"))

gpu = ""
with_smi = shutil.which("nvidia-smi")
if with_smi:
    gpu = subprocess.run([with_smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip().replace("\n", ", ")
print(f"### whdrx against whd-rx: {os.path.basename(capture)}\n")
print(f"{first.report['input']['samples']} samples of {first.report['input']['datatype']}, {len(first.frames)} frame(s), "
      f"{symbols} data symbols; backend {first.choice.get('backend')} ({backend} asked); "
      f"{platform.node()}, {os.cpu_count()} CPUs{', ' + gpu if gpu else ''}; Python {platform.python_version()}; "
      f"{time.strftime('%Y-%m-%d')}\n")
print("| what | median s | runs (s) | against the row it compares with |")
print("|---|---:|---|---:|")
for what, med, times, ref, note in rows:
    runs_s = ", ".join(f"{t:.4f}" for t in times)
    if med is None:
        print(f"| {what} | | | {note} |")
        continue
    vs = "" if ref is None else f"{med / ref:.3f}x ({(med - ref) * 1e3:+.1f} ms)"
    print(f"| {what} | {med:.4f} | {runs_s} | {vs}{'; ' + note if note else ''} |")
PY
