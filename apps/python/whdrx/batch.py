"""Decode an archive of captures on Dask: one task per capture, one decode per GPU at a time.

    python3 -m whdrx.batch CAPTURE_OR_DIR... --out DIR [--scheduler ADDRESS] [--workers N]
                           [--gpus-per-worker K] [--backend auto|cpu|gpu] [--retries R] [--force]
    python3 -m whdrx.batch --one CAPTURE --out DIR [--list FILE]  # one capture, no Dask (scripts/slurm-batch.sh)
    python3 -m whdrx.batch --summary --out DIR          # print DIR's table, one line per capture

Each capture's payload and report land in DIR/ (NAME.payload, NAME.report.json) and a
line in DIR/summary.jsonl: capture, status (ok/failed), frames, header_failures, rs_failed (RS codewords of coded frames not corrected),
data_symbols, seconds, payload, report, error, warnings (payload and report relative
to DIR; warnings are whd-rx's, e.g. a data file cut short).
summary.jsonl is appended to as captures finish (under a lock, so Slurm array tasks
may share it; the last line of a capture counts) and rewritten with one line per
capture at the end of a run. A capture whose last line is ok and whose files are
there is skipped by a later run over the same DIR (--force redoes it).

Without --scheduler a cluster of worker processes starts on this machine: one per
GPU (K GPUs each with --gpus-per-worker, pinned by CUDA_VISIBLE_DEVICES), or, with
no GPU (or --backend cpu), --workers CPU workers sharing the cores. With --scheduler
the tasks go to that Dask cluster, whose workers must declare the resource the
tasks ask for (`dask worker ADDRESS --nthreads 1 --resources GPU=1`, or DECODE=1 for
CPU workers): each task holds it, so a GPU runs one decode at a time.

A capture that cannot be decoded is `failed` with whd-rx's message and costs no
other capture. A worker that dies is replaced and its task retried (--retries, the
scheduler's allowed failures). Exit status: 0 every capture ok, 1 some failed, 2 a
wrong command line.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import sys
import time
import warnings
from typing import Iterable, Optional

SUMMARY = "summary.jsonl"
FIELDS = ("capture", "status", "frames", "header_failures", "rs_failed", "data_symbols", "seconds", "payload", "report",
          "error", "warnings")
RAW_EXTENSIONS = (".cf32", ".cfile", ".ci16", ".sc16", ".ci8", ".sc8")


# ------------------------------------------------------------------ captures and names


def find_captures(paths: Iterable[str]) -> list[str]:
    """The captures named: files as they are (a SigMF pair by its .sigmf-meta), folders
    by their SigMF recordings and raw files (not recursive). Absolute, de-duplicated, sorted
    within each folder, in the order given."""
    out: list[str] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        p = os.path.abspath(p)
        if p.endswith(".sigmf-data"):
            p = p[: -len(".sigmf-data")] + ".sigmf-meta"
        if p not in seen:
            seen.add(p)
            out.append(p)

    for path in paths:
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                full = os.path.join(path, name)
                if not os.path.isfile(full):
                    continue
                if name.endswith((".sigmf-meta", ".sigmf-data")) or name.lower().endswith(RAW_EXTENSIONS):
                    add(full)
        else:
            add(path)
    return out


def capture_key(capture: str) -> str:
    """The name of a capture's outputs in DIR: NAME for NAME.sigmf-meta, the file name for a raw file."""
    base = os.path.basename(capture)
    return base[: -len(".sigmf-meta")] if base.endswith(".sigmf-meta") else base


def assign_keys(captures: list[str]) -> dict[str, str]:
    """capture -> output name, unique in DIR (a short hash of the path is added where two
    captures from different folders share a name)."""
    names: dict[str, list[str]] = {}
    for c in captures:
        names.setdefault(capture_key(c), []).append(c)
    keys = {}
    for name, group in names.items():
        for c in group:
            keys[c] = name if len(group) == 1 else f"{name}-{hashlib.sha1(c.encode()).hexdigest()[:8]}"
    return keys


# ------------------------------------------------------------------ the per-capture work


def decode_one(capture: str, out_dir: str, key: str, backend: str = "auto", gpus: int = 1, threads: int = 0) -> dict:
    """Decode one capture into DIR/KEY.payload and DIR/KEY.report.json; return its summary row.

    Errors of the capture (whdrx.CaptureError, OSError, ValueError, RuntimeError) make a
    `failed` row with the message; the files appear only whole (written aside, then renamed).
    The same function runs in a Dask task, in --one (Slurm) and in a plain loop."""
    import whdrx  # imported here: a worker process imports the package on first use

    row = {f: None for f in FIELDS}
    row.update(capture=capture, status="failed", payload=f"{key}.payload", report=f"{key}.report.json")
    payload = os.path.join(out_dir, row["payload"])
    report = os.path.join(out_dir, row["report"])
    t0 = time.monotonic()
    try:
        # whd-rx's warnings (a data file cut short, NaN samples) go into the row, not a worker's log.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = whdrx.decode(capture, backend=backend, gpus=gpus, threads=threads, output=payload + ".part")
        row["warnings"] = [str(w.message) for w in caught] or None
        with open(report + ".part", "w") as f:
            json.dump(r.report, f, indent=2)
            f.write("\n")
        os.replace(payload + ".part", payload)
        os.replace(report + ".part", report)
        row.update(status="ok", frames=len(r.frames), header_failures=len(r.header_failures), rs_failed=r.rs_failed,
                   data_symbols=r.data_symbols)
    except (whdrx.CaptureError, OSError, ValueError, RuntimeError) as e:
        row["error"] = f"{type(e).__name__}: {e}"
        row.update(payload=None, report=None)
        for p in (payload + ".part", report + ".part"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(p)
    row["seconds"] = round(time.monotonic() - t0, 4)
    return row


# ------------------------------------------------------------------ summary.jsonl


@contextlib.contextmanager
def _locked(out_dir: str):
    with open(os.path.join(out_dir, SUMMARY + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def append_row(out_dir: str, row: dict) -> None:
    """Append one line to DIR/summary.jsonl (several processes may append at once)."""
    line = json.dumps({f: row.get(f) for f in FIELDS}) + "\n"
    with _locked(out_dir), open(os.path.join(out_dir, SUMMARY), "a") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def read_rows(out_dir: str) -> dict[str, dict]:
    """capture -> its last line in DIR/summary.jsonl (a line cut by a crash is ignored)."""
    rows: dict[str, dict] = {}
    path = os.path.join(out_dir, SUMMARY)
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            with contextlib.suppress(ValueError):
                row = json.loads(line)
                if isinstance(row, dict) and "capture" in row:
                    rows[row["capture"]] = row
    return rows


def compact(out_dir: str) -> dict[str, dict]:
    """Rewrite DIR/summary.jsonl with one line per capture (its last); return the rows."""
    with _locked(out_dir):
        rows = read_rows(out_dir)
        tmp = os.path.join(out_dir, SUMMARY + ".part")
        with open(tmp, "w") as f:
            for row in rows.values():
                f.write(json.dumps({k: row.get(k) for k in FIELDS}) + "\n")
        os.replace(tmp, os.path.join(out_dir, SUMMARY))
    return rows


def is_done(row: Optional[dict], out_dir: str) -> bool:
    """A capture is done when its last row is ok and its payload and report are there."""
    return bool(row) and row.get("status") == "ok" and all(
        row.get(k) and os.path.exists(os.path.join(out_dir, row[k])) for k in ("payload", "report"))


def table(rows: list[dict], skipped: set[str] = frozenset()) -> str:
    """The summary as a markdown table."""
    lines = ["| capture | status | frames | header failures | RS failures | data symbols | seconds | error |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        status = r["status"] + (" (done before)" if r["capture"] in skipped else "")
        err = (r.get("error") or "").replace("|", "\\|").replace("\n", " ")
        cells = [os.path.basename(r["capture"]), status] + [
            "" if r.get(k) is None else str(r[k]) for k in ("frames", "header_failures", "rs_failed", "data_symbols", "seconds")]
        lines.append("| " + " | ".join(cells + [err]) + " |")
    return "\n".join(lines)


# ------------------------------------------------------------------ the cluster


def _device_count() -> int:
    from whdrx import _whdrx
    return _whdrx.device_count()


def local_cluster(workers: Optional[int], gpus_per_worker: int, backend: str, retries: int):
    """Worker processes on this machine: one per GPU group (CUDA_VISIBLE_DEVICES), or CPU
    workers. Returns (cluster, resource name, threads per decode, GPUs per decode)."""
    from distributed import Nanny, Scheduler, SpecCluster

    nof_gpus = 0 if backend == "cpu" else _device_count()
    specs = {}
    if nof_gpus > 0:
        groups = max(1, nof_gpus // gpus_per_worker)
        n = groups if workers is None else min(workers, groups)
        cores = os.cpu_count() or 1
        threads = max(1, cores // n)
        for w in range(n):
            devices = ",".join(str(d) for d in range(w * gpus_per_worker, (w + 1) * gpus_per_worker))
            specs[f"gpu{w}"] = {"cls": Nanny, "options": {
                "nthreads": 1, "resources": {"GPU": gpus_per_worker}, "memory_limit": 0, "silence_logs": logging.WARNING,
                "env": {"CUDA_VISIBLE_DEVICES": devices}}}
        resource, per_decode_gpus = "GPU", gpus_per_worker
    else:
        if backend == "gpu":
            raise SystemExit("whdrx.batch: --backend gpu but no CUDA device here; use --backend cpu or auto")
        cores = os.cpu_count() or 1
        n = workers if workers is not None else max(1, cores // 4)
        threads = max(1, cores // n)
        for w in range(n):
            specs[f"cpu{w}"] = {"cls": Nanny, "options": {
                "nthreads": 1, "resources": {"DECODE": 1}, "memory_limit": 0, "silence_logs": logging.WARNING,
                # No worker of a CPU cluster touches a GPU, even with backend auto.
                "env": {"CUDA_VISIBLE_DEVICES": ""}}}
        resource, per_decode_gpus = "DECODE", 1
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": ":0", "allowed_failures": retries}}
    cluster = SpecCluster(scheduler=scheduler, workers=specs, silence_logs=40)
    return cluster, resource, threads, per_decode_gpus


def _check_resource(client, resource: str, amount: int) -> None:
    workers = client.scheduler_info().get("workers", {})
    if not any(w.get("resources", {}).get(resource, 0) >= amount for w in workers.values()):
        raise SystemExit(f"whdrx.batch: no worker of the cluster declares the resource {resource}={amount}, so no task "
                         f"could run: start the workers with `dask worker ADDRESS --nthreads 1 --resources "
                         f"{resource}={amount}`")


def run_batch(captures: list[str], out_dir: str, *, scheduler: Optional[str], workers: Optional[int],
              gpus_per_worker: int, backend: str, retries: int, force: bool, quiet: bool) -> int:
    os.makedirs(out_dir, exist_ok=True)
    keys = assign_keys(captures)
    previous = read_rows(out_dir)
    todo = [c for c in captures if force or not is_done(previous.get(c), out_dir)]
    skipped = {c for c in captures if c not in todo}
    say = (lambda *a: None) if quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    say(f"whdrx.batch: {len(captures)} capture(s), {len(skipped)} done before, {len(todo)} to decode, into {out_dir}")

    results: dict[str, dict] = {}
    if todo:
        import dask
        from distributed import Client, as_completed

        # A worker that dies (its process killed, out of memory) costs its task a retry:
        # the scheduler's allowed failures for a LocalCluster, Dask's retries for errors.
        dask.config.set({"distributed.scheduler.allowed-failures": retries})
        cluster = None
        if scheduler:
            client = Client(scheduler)
            resource = "DECODE" if backend == "cpu" else "GPU"
            amount = 1 if backend == "cpu" else gpus_per_worker
            _check_resource(client, resource, amount)
            threads, per_decode_gpus = 0, gpus_per_worker
        else:
            cluster, resource, threads, per_decode_gpus = local_cluster(workers, gpus_per_worker, backend, retries)
            client = Client(cluster)
            amount = per_decode_gpus if resource == "GPU" else 1
        try:
            futures = {}
            for c in todo:
                f = client.submit(decode_one, c, os.path.abspath(out_dir), keys[c], backend, per_decode_gpus, threads,
                                  key=f"whdrx-decode-{keys[c]}-{time.time_ns()}", resources={resource: amount},
                                  retries=retries, pure=False)
                futures[f] = c
            done = 0
            for f in as_completed(futures):
                c = futures[f]
                try:
                    row = f.result()
                except Exception as e:  # the task itself failed: a worker died more often than allowed
                    row = {k: None for k in FIELDS}
                    row.update(capture=c, status="failed", error=f"{type(e).__name__}: {e}")
                results[c] = row
                append_row(out_dir, row)
                done += 1
                say(f"[{done}/{len(todo)}] {os.path.basename(c)}: {row['status']}"
                    + (f", {row['frames']} frame(s), {row['seconds']} s" if row["status"] == "ok" else f": {row['error']}"))
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

    rows = compact(out_dir)
    mine = [rows[c] for c in captures if c in rows]
    if not quiet:
        print(table(mine, skipped))
    return 0 if all(r["status"] == "ok" for r in mine) else 1


def run_one(capture: str, out_dir: str, backend: str, gpus: int, force: bool, threads: int,
            listing: Optional[str] = None) -> int:
    """One capture in this process (a Slurm array task): skipped when done, else decoded.
    `listing` (a file of the archive's captures, one a line) names the outputs as a
    whole batch would (two captures of one name in different folders)."""
    os.makedirs(out_dir, exist_ok=True)
    capture = find_captures([capture])[0]
    key = capture_key(capture)
    if listing:
        with open(listing) as f:
            keys = assign_keys(find_captures([line.rstrip("\n") for line in f if line.strip()] + [capture]))
        key = keys[capture]
    previous = read_rows(out_dir).get(capture)
    if not force and is_done(previous, out_dir):
        print(json.dumps(previous))
        return 0
    row = decode_one(capture, os.path.abspath(out_dir), key, backend, gpus, threads)
    append_row(out_dir, row)
    print(json.dumps(row))
    return 0 if row["status"] == "ok" else 1


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m whdrx.batch", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[2:]))
    p.add_argument("captures", nargs="*", metavar="CAPTURE_OR_DIR", help="capture files or folders of captures")
    p.add_argument("--out", required=True, metavar="DIR", help="where payloads, reports and summary.jsonl go")
    p.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler (default: start one here)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local workers (default: one per GPU group; without GPUs one per 4 cores)")
    p.add_argument("--gpus-per-worker", type=int, default=1, metavar="K", help="GPUs each decode spreads over (default 1)")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu"), help="as whd-rx --backend")
    p.add_argument("--retries", type=int, default=2, metavar="R", help="times a task is retried when its worker dies")
    p.add_argument("--force", action="store_true", help="decode captures already done in DIR again")
    p.add_argument("--one", metavar="CAPTURE", help="decode this capture in this process, without Dask (Slurm array tasks)")
    p.add_argument("--list", metavar="FILE", help="with --one: the archive's captures, one a line (output names as a batch gives them)")
    p.add_argument("--threads", type=int, default=0, metavar="T", help="with --one: host threads (0: all cores)")
    p.add_argument("--summary", action="store_true", help="only print DIR's summary (one line per capture kept)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress, no table")
    a = p.parse_args(argv)
    if a.gpus_per_worker < 1 or (a.workers is not None and a.workers < 1) or a.retries < 0 or a.threads < 0:
        p.error("--gpus-per-worker and --workers must be >= 1, --retries and --threads >= 0")
    if a.summary:
        if not os.path.isdir(a.out):
            p.error(f"--summary: '{a.out}' is not a folder")
        rows = compact(a.out)
        print(table(list(rows.values())))
        return 0 if all(r["status"] == "ok" for r in rows.values()) else 1
    if a.one:
        if a.captures:
            p.error("--one takes one capture; give no others")
        return run_one(a.one, a.out, a.backend, a.gpus_per_worker, a.force, a.threads, a.list)
    if not a.captures:
        p.error("no capture or folder given")
    captures = find_captures(a.captures)
    if not captures:
        p.error("no capture found in " + ", ".join(a.captures))
    return run_batch(captures, a.out, scheduler=a.scheduler, workers=a.workers, gpus_per_worker=a.gpus_per_worker,
                     backend=a.backend, retries=a.retries, force=a.force, quiet=a.quiet)


if __name__ == "__main__":
    sys.exit(main())
