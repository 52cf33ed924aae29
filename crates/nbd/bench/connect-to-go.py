#!/usr/bin/env python3
"""Connect-to-GO latency of NBD servers on Unix sockets, side by side.

For each socket given: N times connect, read the greeting, send fixed-newstyle flags and
NBD_OPT_EXPORT_NAME, read the export reply (size and flags), close; print the median and
90th percentile, in two interleaved rounds.

    python3 crates/nbd/bench/connect-to-go.py NAME=SOCKET [NAME=SOCKET ...] [--n 300]
"""
import argparse
import socket
import statistics
import time


def go(path: str) -> float:
    t = time.perf_counter()
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    got = b""
    while len(got) < 18:
        got += s.recv(18 - len(got))
    s.send((3).to_bytes(4, "big"))  # fixed newstyle, no zeroes
    s.send(b"IHAVEOPT" + (1).to_bytes(4, "big") + (0).to_bytes(4, "big"))  # EXPORT_NAME ""
    got = b""
    while len(got) < 10:
        got += s.recv(10 - len(got))
    took = time.perf_counter() - t
    s.close()
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("servers", nargs="+", help="NAME=SOCKET")
    ap.add_argument("--n", type=int, default=300)
    a = ap.parse_args()
    servers = [x.split("=", 1) for x in a.servers]
    for rnd in range(2):
        for name, path in servers:
            v = sorted(go(path) for _ in range(a.n))
            print(f"round {rnd} {name}: median {statistics.median(v) * 1e3:.3f} ms, "
                  f"p90 {v[int(len(v) * 0.9)] * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
