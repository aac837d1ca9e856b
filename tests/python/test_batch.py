"""python3 -m whdrx.batch on a local cluster of 2 CPU worker processes: a folder of small
captures made by whdrx.transmit plus a broken one, the summary of each, a rerun that
skips them, --force that redoes them; --one (the Slurm path); a worker that dies is
replaced and its task retried."""

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

    # --force redoes every capture.
    p = run_batch(d, "--out", out, "--workers", 2, "--backend", "cpu", "--force")
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
    """Kills its worker process the first time (as a crash or the OOM killer would)."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return os.getpid()


def test_worker_death_is_retried(tmp_path):
    """The cluster batch.py starts replaces a worker that dies and runs its task again."""
    from distributed import Client
    cluster, resource, _, _ = batch.local_cluster(workers=2, gpus_per_worker=1, backend="cpu", retries=2)
    with cluster, Client(cluster) as client:
        f = client.submit(_die_once, str(tmp_path / "died"), resources={resource: 1}, pure=False)
        assert f.result(timeout=60) > 0
    assert (tmp_path / "died").exists()
