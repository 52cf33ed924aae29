#!/usr/bin/env python3
"""One client's FUA writes beside another client's reads, headway serve against nbdkit.

Each server exports the same kind of file (a fresh 256 MiB file each, written once, on the
same file system). For each server, alternating within each repetition: a flooder process
keeps 32 FUA WRITEs of 64 KiB in flight on one connection (libnbd's aio_pwrite with
CMD_FLAG_FUA), and a reader process reads 4 KiB at random offsets, one at a time, on
another connection, for RUNTIME seconds; the reader's latency percentiles and IOPS, and
the flood's writes per second, are printed. A baseline row has no flood.

    python3 crates/nbd/bench/fua-flood.py [--headway BIN] [--reps 3] [--runtime 5]
        [--headway-args "--queue-depth 8"] [--dir /tmp]

Needs nbdkit and python3-libnbd (run it with /usr/bin/python3).
"""
import argparse
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import nbd

SIZE = 256 << 20
WRITE = 64 << 10
DEPTH = 32
READ = 4096


def flood(sock: str, seconds: float) -> None:
    h = nbd.NBD()
    h.connect_unix(sock)
    buf = nbd.Buffer(WRITE)
    inflight, done = 0, 0
    rng = random.Random(1)
    end = time.monotonic() + seconds

    def finished(*_):
        nonlocal inflight, done
        inflight -= 1
        done += 1
        return 1

    while time.monotonic() < end:
        while inflight < DEPTH:
            off = rng.randrange(SIZE // WRITE) * WRITE
            h.aio_pwrite(buf, off, completion=finished, flags=nbd.CMD_FLAG_FUA)
            inflight += 1
        h.poll(-1)
    while inflight > 0:
        h.poll(-1)
    print(done, flush=True)
    h.shutdown()


def read_latencies(sock: str, seconds: float) -> list:
    h = nbd.NBD()
    h.connect_unix(sock)
    rng = random.Random(2)
    lat = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        off = rng.randrange(SIZE // READ) * READ
        t = time.perf_counter()
        h.pread(READ, off)
        lat.append(time.perf_counter() - t)
    h.shutdown()
    return lat


def measure(sock: str, runtime: float, with_flood: bool) -> str:
    fl = None
    if with_flood:
        fl = subprocess.Popen([sys.executable, __file__, "--flood", sock, "--runtime", str(runtime + 1)],
                              stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)
    lat = sorted(read_latencies(sock, runtime))
    writes = ""
    if fl:
        out, _ = fl.communicate()
        writes = f", flood {int(out.strip() or 0) / (runtime + 1):.0f} FUA writes/s"
    p = lambda q: lat[min(len(lat) - 1, int(len(lat) * q))] * 1e3
    return (f"reads {len(lat) / runtime:.0f}/s, p50 {p(0.5):.3f} ms, p99 {p(0.99):.3f} ms, "
            f"max {lat[-1] * 1e3:.3f} ms{writes}")


def wait_for(sock: str) -> None:
    for _ in range(500):
        if os.path.exists(sock):
            try:
                h = nbd.NBD()
                h.connect_unix(sock)
                h.shutdown()
                return
            except nbd.Error:
                pass
        time.sleep(0.02)
    raise SystemExit(f"{sock}: no server")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flood")
    ap.add_argument("--headway", default=os.environ.get("CARGO_TARGET_DIR", "target") + "/ci/headway")
    ap.add_argument("--headway-args", default="")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--runtime", type=float, default=5)
    ap.add_argument("--dir", default="/tmp")
    a = ap.parse_args()
    if a.flood:
        flood(a.flood, a.runtime)
        return
    d = tempfile.mkdtemp(prefix="hw-fua-flood.", dir=a.dir)
    servers = []
    for name in ("headway", "nbdkit"):
        img, sock = os.path.join(d, f"{name}.img"), os.path.join(d, f"{name}.sock")
        with open(img, "wb") as f:
            f.write(os.urandom(SIZE))
            os.fsync(f.fileno())
        if name == "headway":
            cmd = [a.headway, "serve", "--export", img, "--unix", sock] + shlex.split(a.headway_args)
        else:
            cmd = ["nbdkit", "--foreground", "--unix", sock, "file", img]
        servers.append((name, sock, subprocess.Popen(cmd, stderr=subprocess.DEVNULL)))
    try:
        for _, sock, _ in servers:
            wait_for(sock)
        print(f"FUA flood ({DEPTH} x {WRITE >> 10} KiB FUA writes in flight) beside a 4 KiB random "
              f"reader at depth 1; {a.runtime:.0f} s runs; headway {a.headway_args or '(defaults)'}")
        for rep in range(a.reps):
            for name, sock, _ in servers:
                print(f"rep {rep} {name:8} alone: {measure(sock, a.runtime / 2, False)}", flush=True)
                print(f"rep {rep} {name:8} flood: {measure(sock, a.runtime, True)}", flush=True)
    finally:
        for _, _, p in servers:
            p.terminate()
            p.wait()
        subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
