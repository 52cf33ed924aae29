"""The ``headway`` console script: the Rust command line, run in this process.

``python -m headway simulate JOB.fio ...`` is the same as the ``headway`` command.
"""

from __future__ import annotations

import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    """Run the ``headway`` command with ``argv`` (default: ``sys.argv[1:]``); returns, and
    as a console script exits with, its status."""
    from headway import _native

    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["sweep"] and _engine(args) == "dask":
        return _sweep_dask(args[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    return _native.main(["headway", *args])


def _engine(args: List[str]) -> Optional[str]:
    for i, a in enumerate(args):
        if a == "--engine" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--engine="):
            return a.split("=", 1)[1]
    return None


def _sweep_dask(args: List[str]) -> int:
    """``headway sweep SWEEP.toml --engine dask``: the Rust command runs the local engine;
    the Dask engine is Python's (:func:`headway.sweep`)."""
    import argparse

    import headway

    p = argparse.ArgumentParser(prog="headway sweep", description="Run a sweep file on a Dask cluster.")
    p.add_argument("sweep")
    p.add_argument("--engine", choices=["local", "dask"], default="local")
    p.add_argument("--scheduler-address", metavar="ADDR", default=None)
    p.add_argument("--out", metavar="FILE", default=None)
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(args)
    try:
        res = headway.sweep(a.sweep, engine="dask", scheduler_address=a.scheduler_address)
        out = res.save(a.out)
    except headway.HeadwayError as e:
        print(f"headway: error: {e}", file=sys.stderr)
        return 2
    print(f"{res.points} points, {res.csv.count(chr(10)) - 1} rows: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
