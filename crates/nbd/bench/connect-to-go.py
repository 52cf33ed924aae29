#!/usr/bin/env python3
"""Connect-to-GO latency of NBD servers on Unix sockets, side by side.

For each socket given: N times connect, read the greeting, send fixed-newstyle flags and
NBD_OPT_EXPORT_NAME, read the export reply (size and flags), close; print the median and
90th percentile, in two interleaved rounds. With --go, NBD_OPT_GO (asking for the block
sizes, as libnbd does) instead of NBD_OPT_EXPORT_NAME, its replies read up to the ACK.

    python3 crates/nbd/bench/connect-to-go.py NAME=SOCKET [NAME=SOCKET ...] [--n 300] [--go]
"""
import argparse
import socket
import statistics
import time


def read_n(s: socket.socket, n: int) -> bytes:
    got = b""
    while len(got) < n:
        b = s.recv(n - len(got))
        if not b:
            raise SystemExit("the server closed the connection")
        got += b
    return got


def go(path: str, opt_go: bool) -> float:
    t = time.perf_counter()
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    read_n(s, 18)
    s.send((3).to_bytes(4, "big"))  # fixed newstyle, no zeroes
    if opt_go:
        # NBD_OPT_GO: name length 0, one information request (NBD_INFO_BLOCK_SIZE)
        data = (0).to_bytes(4, "big") + (1).to_bytes(2, "big") + (3).to_bytes(2, "big")
        s.send(b"IHAVEOPT" + (7).to_bytes(4, "big") + len(data).to_bytes(4, "big") + data)
        while True:
            head = read_n(s, 20)  # magic, option, reply type, length
            rtype, length = int.from_bytes(head[12:16], "big"), int.from_bytes(head[16:20], "big")
            read_n(s, length)
            if rtype == 1:  # NBD_REP_ACK
                break
            if rtype & (1 << 31):
                raise SystemExit(f"NBD_OPT_GO refused: {rtype:#x}")
    else:
        s.send(b"IHAVEOPT" + (1).to_bytes(4, "big") + (0).to_bytes(4, "big"))  # EXPORT_NAME ""
        read_n(s, 10)
    took = time.perf_counter() - t
    s.close()
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("servers", nargs="+", help="NAME=SOCKET")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--go", action="store_true", help="NBD_OPT_GO instead of NBD_OPT_EXPORT_NAME")
    a = ap.parse_args()
    servers = [x.split("=", 1) for x in a.servers]
    for rnd in range(2):
        for name, path in servers:
            v = sorted(go(path, a.go) for _ in range(a.n))
            print(f"round {rnd} {name}: median {statistics.median(v) * 1e3:.3f} ms, "
                  f"p90 {v[int(len(v) * 0.9)] * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
