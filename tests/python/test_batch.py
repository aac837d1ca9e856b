"""python3 -m whdrx.batch on a local cluster of 2 CPU worker processes: a folder of small
captures made by whdrx.transmit plus a broken one, the summary of each, a rerun that
skips them, --force that redoes them; --one (the Slurm path), several at once; a worker
that dies is replaced and its task retried, and a capture that kills every worker fails
once its retries are spent; --scheduler; wrong command lines (exit status 2); .part files
removed after a decode that fails midway."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import whdrx
from whdrx import batch

# name -> transmit settings; each small (decoded in milliseconds).
CAPTURES = {
    "a_qpsk_cf32": dict(datatype="cf32_le", frames=2, nd=4, mod="qpsk", seed=1),
    "b_qam16_ci16": dict(datatype="ci16_le", frames=3, nd=5, mod="qam16", snr_db=30, seed=2),
    "c_mixed_ci8": dict(datatype="ci8", frames=3, nd=[3, 6], mod="qpsk,qam16", snr_db=28, cfo_hz=4e5, seed=3),
    "d_corrupt_cf32": dict(datatype="cf32_le", frames=3, nd=4, mod="qam16", corrupt_header=[1], snr_db=30, seed=4),
    "e_noise_ci8": dict(datatype="ci8", frames=0, lead=20000, tail=0, snr_db=20, seed=5),
    "f_raw_ci16": dict(datatype="ci16_le", frames=2, nd=7, mod="qpsk", snr_db=25, raw=True, seed=6),
}


def expected(t):
    ok = [f for f in t.frames if f["header_ok"]]
    return dict(frames=len(ok), header_failures=len(t.frames) - len(ok), data_symbols=sum(f["nd"] for f in ok))


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    d = tmp_path_factory.mktemp("archive")
    made = {}
    for name, kw in CAPTURES.items():
        t = whdrx.transmit(d / name, **kw)
        made[t.paths["meta_path"] or t.paths["data_path"]] = (name, t)
    # Broken: a meta that is not JSON beside its data.
    (d / "z_broken.sigmf-meta").write_text("{ this is not json")
    (d / "z_broken.sigmf-data").write_bytes(b"\0" * 4096)
    return d, made


def run_batch(*args, timeout=150):
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-m", "whdrx.batch", *map(str, args)], env=env, capture_output=True,
                       text=True, timeout=timeout)
    print(p.stderr[-3000:])
    print(p.stdout)
    return p


def rows_of(out):
    lines = (out / "summary.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines]
    assert len({r["capture"] for r in rows}) == len(rows), "one line per capture"
    return {r["capture"]: r for r in rows}


def check_summary(out, made, broken):
    rows = rows_of(out)
    assert set(rows) == set(made) | {broken}
    for capture, (name, t) in made.items():
        r = rows[capture]
        assert r["status"] == "ok" and r["error"] is None, r
        assert {k: r[k] for k in ("frames", "header_failures", "data_symbols")} == expected(t), (name, r)
        assert r["seconds"] > 0
        payload = (out / r["payload"]).read_bytes()
        assert payload == open(t.paths["truth_path"], "rb").read(), name
        report = json.loads((out / r["report"]).read_text())
        assert report["input"]["path"] == capture and len(report["frames"]) == r["frames"]
    b = rows[broken]
    assert b["status"] == "failed" and b["frames"] is None and b["payload"] is None
    assert "CaptureError" in b["error"] and "not valid JSON" in b["error"], b
    assert not any(p.name.endswith(".part") for p in out.iterdir())
    return rows


def test_batch_local_cluster(archive, tmp_path):
    d, made = archive
    out = tmp_path / "out"
    broken = str(d / "z_broken.sigmf-meta")
    p = run_batch(d, "--out", out, "--workers", 2, "--backend", "cpu")
    assert p.returncode == 1, "one capture failed"
    assert f"{len(made) + 1} capture(s), 0 done before, {len(made) + 1} to decode" in p.stderr
    assert f"[{len(made) + 1}/{len(made) + 1}]" in p.stderr  # the progress counter
    assert "| z_broken.sigmf-meta | failed |" in p.stdout and "| a_qpsk_cf32.sigmf-meta | ok |" in p.stdout
    first = check_summary(out, made, broken)
    mtimes = {c: os.stat(out / r["payload"]).st_mtime_ns for c, r in first.items() if r["status"] == "ok"}

    # A rerun skips what is done (the broken capture is tried again, and fails again).
    p = run_batch(d, "--out", out, "--workers", 2, "--backend", "cpu")
    assert p.returncode == 1
    assert f"{len(made) + 1} capture(s), {len(made)} done before, 1 to decode" in p.stderr
    assert p.stdout.count("ok (done before)") == len(made)
    again = check_summary(out, made, broken)
    assert all(again[c] == first[c] for c in made)
    assert all(os.stat(out / first[c]["payload"]).st_mtime_ns == m for c, m in mtimes.items())

    # --force redoes every capture (the broken one fails again: exit status 1).
    p = run_batch(d, "--out", out, "--workers", 2, "--backend", "cpu", "--force")
    assert p.returncode == 1
    assert f"{len(made) + 1} capture(s), 0 done before, {len(made) + 1} to decode" in p.stderr
    check_summary(out, made, broken)
    assert all(os.stat(out / first[c]["payload"]).st_mtime_ns != m for c, m in mtimes.items())


def test_batch_one_capture_without_dask(archive, tmp_path):
    d, made = archive
    out = tmp_path / "one"
    capture, (name, t) = next(iter(made.items()))
    p = run_batch("--one", capture, "--out", out, "--backend", "cpu", "--threads", 1)
    assert p.returncode == 0
    row = json.loads(p.stdout)
    assert row["status"] == "ok" and {k: row[k] for k in ("frames", "header_failures", "data_symbols")} == expected(t)
    p = run_batch("--one", d / "z_broken.sigmf-data", "--out", out, "--backend", "cpu")
    assert p.returncode == 1 and json.loads(p.stdout)["status"] == "failed"
    # Done: a second --one does not decode again (same row, file untouched).
    m = os.stat(out / row["payload"]).st_mtime_ns
    p = run_batch("--one", capture, "--out", out, "--backend", "cpu")
    assert json.loads(p.stdout) == row and os.stat(out / row["payload"]).st_mtime_ns == m
    p = run_batch("--summary", "--out", out)
    assert "| z_broken.sigmf-meta | failed |" in p.stdout and f"| {os.path.basename(capture)} | ok |" in p.stdout
    assert len(rows_of(out)) == 2


def test_find_captures_and_names(archive, tmp_path):
    d, made = archive
    found = batch.find_captures([d, d / "a_qpsk_cf32.sigmf-data"])
    assert sorted(found) == sorted(list(made) + [str(d / "z_broken.sigmf-meta")])
    other = tmp_path / "x"
    other.mkdir()
    keys = batch.assign_keys([str(d / "a.sigmf-meta"), str(other / "a.sigmf-meta"), str(d / "a.ci8")])
    assert len(set(keys.values())) == 3 and keys[str(d / "a.ci8")] == "a.ci8"


def _die_once(marker):
    """Kills its worker process the first time (as a crash or the OOM killer would),
    leaving its pid in `marker`; run again, returns the pid of the process it ran in."""
    if not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write(str(os.getpid()))
        os._exit(1)
    return os.getpid()


def test_worker_death_is_retried(tmp_path):
    """The cluster batch.py starts replaces a worker that dies and runs its task again,
    in another process."""
    from distributed import Client
    cluster, resource, _, _ = batch.local_cluster(workers=2, gpus_per_worker=1, backend="cpu", retries=2)
    with cluster, Client(cluster) as client:
        f = client.submit(_die_once, str(tmp_path / "died"), resources={resource: 1}, pure=False)
        again = f.result(timeout=60)
    died = int((tmp_path / "died").read_text())
    assert again != died and again != os.getpid(), "the task ran again in a worker process other than the one that died"


# ------------------------------------------------------------------ failures and arguments

# Loaded first by every Python process of a run given its folder on PYTHONPATH (the
# batch and its Dask workers): a capture whose name starts with $WHD_TEST_CRASH_ON
# ends the process that decodes it, as a crash of the decoder would.
CRASHER = """
import os
if os.environ.get("WHD_TEST_CRASH_ON"):
    import whdrx
    _decode = whdrx.decode
    def decode(capture, *args, **kwargs):
        if os.path.basename(str(capture)).startswith(os.environ["WHD_TEST_CRASH_ON"]):
            os._exit(3)
        return _decode(capture, *args, **kwargs)
    whdrx.decode = decode
"""


def test_a_capture_that_kills_every_worker_fails_once_its_retries_are_spent(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    good = whdrx.transmit(d / "good", **CAPTURES["a_qpsk_cf32"])
    whdrx.transmit(d / "crash_me", **CAPTURES["b_qam16_ci16"])
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(CRASHER)
    out = tmp_path / "out"
    env = dict(os.environ, WHD_TEST_CRASH_ON="crash_", PYTHONPATH=f"{hook}:{os.environ.get('PYTHONPATH', '')}")
    p = subprocess.run([sys.executable, "-m", "whdrx.batch", str(d), "--out", str(out), "--workers", "2", "--backend", "cpu",
                        "--retries", "1"], env=env, capture_output=True, text=True, timeout=150)
    print(p.stderr[-3000:])
    assert p.returncode == 1, "a capture failed"
    rows = rows_of(out)
    crashed = rows[str(d / "crash_me.sigmf-meta")]
    assert crashed["status"] == "failed" and crashed["payload"] is None, crashed
    assert "KilledWorker" in crashed["error"], crashed
    ok = rows[good.paths["meta_path"]]
    assert ok["status"] == "ok", ok
    assert (out / ok["payload"]).read_bytes() == open(good.paths["truth_path"], "rb").read()
    assert not any(p.name.endswith(".part") for p in out.iterdir())


@pytest.mark.parametrize("args, message", [
    ([], "the following arguments are required: --out"),
    (["--out", "{out}"], "no capture or folder given"),
    (["{empty}", "--out", "{out}"], "no capture found in"),
    (["{capture}", "--out", "{out}", "--workers", "0"], "--workers must be >= 1"),
    (["{capture}", "--out", "{out}", "--gpus-per-worker", "0"], "--gpus-per-worker"),
    (["{capture}", "--out", "{out}", "--retries", "-1"], "--retries and --threads >= 0"),
    (["{capture}", "--out", "{out}", "--workers", "two"], "invalid int value"),
    (["{capture}", "--out", "{out}", "--backend", "fpga"], "invalid choice"),
    (["--one", "{capture}", "{capture}", "--out", "{out}"], "--one takes one capture"),
    (["--summary", "--out", "{missing}"], "is not a folder"),
])
def test_a_wrong_command_line_exits_2(tmp_path, args, message):
    (tmp_path / "empty").mkdir()
    capture = tmp_path / "c.ci8"
    capture.write_bytes(b"\0" * 4096)
    fill = dict(out=tmp_path / "out", empty=tmp_path / "empty", capture=capture, missing=tmp_path / "missing")
    p = run_batch(*[a.format(**fill) for a in args], timeout=60)
    assert p.returncode == 2
    assert message in p.stderr
    assert not (tmp_path / "out" / "summary.jsonl").exists()


def test_part_files_go_when_the_decode_fails_midway(tmp_path):
    """A payload that cannot be written whole (the file size limit, as a full disk would)
    fails its capture mid-decode: the row says why and no .part file stays behind."""
    import resource
    import signal
    t = whdrx.transmit(tmp_path / "big", datatype="ci8", frames=6, nd=200, mod="qam16", snr_db=30, seed=8)
    truth = open(t.paths["truth_path"], "rb").read()
    assert len(truth) > 3 * 65536, "the payload is well past the limit"
    out = tmp_path / "out"
    out.mkdir()

    def limit():  # in the child: writes past 64 KiB fail with EFBIG instead of killing it
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))

    p = subprocess.run([sys.executable, "-m", "whdrx.batch", "--one", t.paths["meta_path"], "--out", str(out), "--backend", "cpu"],
                       capture_output=True, text=True, timeout=60, preexec_fn=limit)
    print(p.stderr[-3000:])
    assert p.returncode == 1
    row = json.loads(p.stdout)
    assert row["status"] == "failed" and "File too large" in row["error"], row
    assert sorted(x.name for x in out.iterdir()) == ["summary.jsonl", "summary.jsonl.lock"]
    # Without the limit the same capture decodes, whole.
    p = run_batch("--one", t.paths["meta_path"], "--out", out, "--backend", "cpu")
    assert p.returncode == 0
    row = json.loads(p.stdout)
    assert (out / row["payload"]).read_bytes() == truth


def test_concurrent_one_tasks_append_a_line_each(archive, tmp_path):
    """Slurm array tasks share summary.jsonl: --one processes started at once each add
    their line whole (appended under a lock), and --summary keeps one per capture."""
    d, made = archive
    out = tmp_path / "many"
    captures = list(made) + [str(d / "z_broken.sigmf-meta")]
    procs = [subprocess.Popen([sys.executable, "-m", "whdrx.batch", "--one", c, "--out", str(out), "--backend", "cpu", "--threads", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in captures]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0] * len(made) + [1]
    lines = (out / "summary.jsonl").read_text().splitlines()
    assert len(lines) == len(captures)
    rows = [json.loads(x) for x in lines]
    assert sorted(r["capture"] for r in rows) == sorted(captures)
    p = run_batch("--summary", "--out", out)
    assert p.returncode == 1 and len(rows_of(out)) == len(captures)


def test_an_existing_scheduler_runs_the_tasks(archive, tmp_path):
    """--scheduler: the tasks go to a running Dask cluster whose workers declare DECODE;
    one whose workers lack it is refused with a message instead of waiting forever."""
    from distributed import LocalCluster
    d, made = archive
    one = next(iter(made))
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"DECODE": 1},
                      dashboard_address=":0") as cluster:
        out = tmp_path / "sched"
        p = run_batch(one, "--out", out, "--scheduler", cluster.scheduler_address, "--backend", "cpu")
        assert p.returncode == 0
        row = rows_of(out)[one]
        assert row["status"] == "ok" and (out / row["payload"]).read_bytes() == open(made[one][1].paths["truth_path"], "rb").read()
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        p = run_batch(one, "--out", tmp_path / "none", "--scheduler", cluster.scheduler_address, "--backend", "cpu", timeout=60)
        assert p.returncode == 1
        assert "no worker of the cluster declares the resource DECODE=1" in p.stderr
