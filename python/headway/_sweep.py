"""Parameter sweeps (``headway sweep SWEEP.toml``): a grid of simulations run on local
cores or on a Dask distributed cluster, one table in grid order either way.

The sweep file's format and the grid order are the Rust crate's (``headway_sim::sweep``,
and the README). Every point is computed by the same native code whatever the engine, and
the table is assembled from each point's CSV rows in grid order, so the same sweep gives
byte-identical CSV (and equal DataFrames) on either engine.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, List, Optional, Sequence, Union

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = ["sweep", "SweepResult"]

#: Points per Dask task (each task loads the sweep file once).
CHUNK = 8


class SweepResult:
    """A finished sweep: ``csv`` is the table's text (what ``headway sweep`` writes),
    ``points`` the number of grid points, ``out`` the sweep file's table path."""

    def __init__(self, csv: str, points: int, out: str) -> None:
        self.csv: str = csv
        self.points: int = points
        self.out: str = out

    def __repr__(self) -> str:
        return f"<headway.SweepResult {self.points} points, {self.csv.count(chr(10)) - 1} rows>"

    def to_pandas(self) -> "pandas.DataFrame":
        """The table: one row per point x job, the point's parameters then fio-like columns
        (``thinktime_us`` is empty when the grid leaves the job file's own)."""
        import pandas as pd

        return pd.read_csv(io.StringIO(self.csv), keep_default_na=False, na_values=[""])

    def save(self, path: Optional[Union[str, "os.PathLike[str]"]] = None) -> str:
        """Write the table to ``path`` (default: the sweep file's ``out``) and return the
        path: Parquet when it ends in ``.parquet`` (needs pyarrow or fastparquet), else CSV."""
        p = os.fspath(path) if path is not None else self.out
        d = os.path.dirname(p)
        if d:
            os.makedirs(d, exist_ok=True)
        if p.endswith(".parquet"):
            self.to_pandas().to_parquet(p, index=False)
            return p
        with open(p, "w", encoding="utf-8") as f:
            f.write(self.csv)
        return p


def _run_chunk(path: str, indices: Sequence[int]) -> List[str]:
    """A Dask task: the CSV rows of points ``indices`` (module level, so it pickles)."""
    from headway import _native

    return list(_native.sweep_points(path, list(indices)))


def sweep(
    path: Union[str, "os.PathLike[str]"],
    *,
    engine: str = "local",
    scheduler_address: Optional[str] = None,
    threads: Optional[int] = None,
) -> SweepResult:
    """Run the sweep file ``path`` (``headway sweep``).

    ``engine="local"`` runs the points on ``threads`` threads (default: every core);
    ``engine="dask"`` maps them over a ``dask.distributed`` cluster at ``scheduler_address``
    (``"tcp://127.0.0.1:8786"``; ``None``: a fresh local cluster). The workers must see the
    sweep and job files at the same paths. Raises :class:`headway.SettingError` naming
    ``file:line`` for a bad sweep file.
    """
    from headway import _native

    p = os.path.abspath(os.fspath(path))
    header, n, out = _native.sweep_plan(p)
    if engine == "local":
        if scheduler_address is not None:
            raise ValueError("scheduler_address is for engine='dask'")
        t = threads if threads is not None else (os.cpu_count() or 1)
        if t < 1:
            raise ValueError(f"threads {t}: expected at least 1")
        return SweepResult(_native.sweep_local(p, int(t)), n, out)
    if engine != "dask":
        raise ValueError(f"engine {engine!r}: expected 'local' or 'dask'")
    from dask.distributed import Client

    chunks = [list(range(i, min(i + CHUNK, n))) for i in range(0, n, CHUNK)]
    client = Client(scheduler_address) if scheduler_address is not None else Client(processes=True)
    try:
        futures = client.map(_run_chunk, [p] * len(chunks), chunks, pure=False)
        parts = client.gather(futures)
    finally:
        client.close()
    rows = "".join(r for part in parts for r in part)
    return SweepResult(header + rows, n, out)
