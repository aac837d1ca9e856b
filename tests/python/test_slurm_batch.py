"""scripts/slurm-batch.sh against a stand-in `sbatch` on PATH that runs a job array's
tasks here, all at once (as Slurm may), and a --wrap job after them: the captures are
listed, each array task decodes its own with whdrx.batch --one, the summary job prints
the table, and a second submission skips what is done."""

import json
import os
import pathlib
import subprocess

import whdrx

REPO = pathlib.Path(__file__).resolve().parents[2]

# Records each call in $SBATCH_LOG, runs an array's tasks at once (each with its
# SLURM_ARRAY_TASK_ID and output file) or a --wrap command, and prints the job id as
# --parsable does. Array task statuses go to $SBATCH_LOG too.
SBATCH = r"""#!/usr/bin/env bash
set -u
echo "sbatch $*" >>"$SBATCH_LOG"
n=$(($(cat "$SBATCH_LOG.ids" 2>/dev/null || echo 1000) + 1))
echo "$n" >"$SBATCH_LOG.ids"
array='' wrap='' output=''
while (($#)); do
  case $1 in
    --array=*) array=${1#--array=} ;;
    --wrap=*) wrap=${1#--wrap=} ;;
    --output=*) output=${1#--output=} ;;
    --*) ;;
    *) break ;;
  esac
  shift
done
if [[ -n $wrap ]]; then
  bash -c "$wrap" >"${output//%j/$n}" 2>&1
  echo "wrap $n exit $?" >>"$SBATCH_LOG"
else
  range=${array%%%*}
  pids=()
  for ((t = ${range%-*}; t <= ${range#*-}; t++)); do
    SLURM_ARRAY_TASK_ID=$t SLURM_CPUS_PER_TASK=1 bash "$@" >"$SBATCH_LOG.task$t" 2>&1 &
    pids+=($!)
  done
  for t in "${!pids[@]}"; do
    wait "${pids[$t]}"
    echo "task $t exit $?" >>"$SBATCH_LOG"
  done
fi
echo "$n"
"""


def test_slurm_batch_with_a_stand_in_sbatch(tmp_path):
    archive = tmp_path / "archive"
    archive.mkdir()
    made = {}
    for name, kw in {"a_qpsk": dict(datatype="cf32_le", frames=2, nd=4, mod="qpsk", seed=1),
                     "b_qam16": dict(datatype="ci16_le", frames=3, nd=5, mod="qam16", snr_db=30, seed=2),
                     "c_ci8": dict(datatype="ci8", frames=2, nd=3, mod="qpsk", snr_db=28, seed=3)}.items():
        t = whdrx.transmit(archive / name, **kw)
        made[t.paths["meta_path"]] = t
    (archive / "z_broken.sigmf-meta").write_text("{ not json")
    (archive / "z_broken.sigmf-data").write_bytes(b"\0" * 4096)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(SBATCH)
    (bin_dir / "sbatch").chmod(0o755)
    log = tmp_path / "sbatch.log"
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", SBATCH_LOG=str(log), WHD_BACKEND="cpu")

    def submit():
        p = subprocess.run([str(REPO / "scripts" / "slurm-batch.sh"), "--submit", str(out), str(archive)], env=env,
                           capture_output=True, text=True, timeout=180)
        print(p.stdout, p.stderr[-3000:], log.read_text(), sep="\n")
        return p

    p = submit()
    assert p.returncode == 0
    assert "slurm-batch: 4 capture(s): array job 1001, summary job 1002" in p.stdout
    listed = (out / "captures.txt").read_text().split()
    assert sorted(listed) == sorted(list(made) + [str(archive / "z_broken.sigmf-meta")])
    calls = log.read_text().splitlines()
    assert any(c.startswith("sbatch --parsable --export=ALL --array=0-3 ") for c in calls), calls
    assert any("--dependency=afterany:1001" in c for c in calls), "the summary waits for the whole array"
    # Each task's status: 0 for a capture decoded, 1 for the broken one.
    for i, capture in enumerate(listed):
        assert f"task {i} exit {1 if 'z_broken' in capture else 0}" in calls, (i, capture)
    assert "wrap 1002 exit 1" in calls, "the summary job's status says a capture failed"
    rows = {json.loads(x)["capture"]: json.loads(x) for x in (out / "summary.jsonl").read_text().splitlines()}
    assert len(rows) == 4, "one line per capture after the summary job"
    for capture, t in made.items():
        r = rows[capture]
        assert r["status"] == "ok", r
        assert (out / r["payload"]).read_bytes() == open(t.paths["truth_path"], "rb").read()
    assert rows[str(archive / "z_broken.sigmf-meta")]["status"] == "failed"
    table = (out / "summary-1002.md").read_text()
    assert "| z_broken.sigmf-meta | failed |" in table and "| a_qpsk.sigmf-meta | ok |" in table

    # A second submission: the tasks of captures done skip them, files untouched.
    mtimes = {c: os.stat(out / rows[c]["payload"]).st_mtime_ns for c in made}
    p = submit()
    assert p.returncode == 0 and "array job 1003, summary job 1004" in p.stdout
    assert all(os.stat(out / rows[c]["payload"]).st_mtime_ns == m for c, m in mtimes.items())
    for i, capture in enumerate(listed):
        task_out = pathlib.Path(f"{log}.task{i}").read_text()
        if "z_broken" not in capture:
            assert json.loads(task_out.splitlines()[-1]) == rows[capture], "done before: the same row, not decoded again"
