"""The result of :func:`headway.simulate`: the fio-shaped JSON report, as a table and as
pictures."""

from __future__ import annotations

import json as _json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = ["Result", "percentile_label"]

_DIRS = ("read", "write")
_PLOT_FORMATS = (".png", ".svg", ".pdf")


def percentile_label(key: str) -> str:
    """fio's percentile key (``"99.500000"``) as a column suffix (``"p99.5"``)."""
    return "p" + f"{float(key):g}"


def _job_names(run: Dict[str, Any]) -> List[str]:
    """Job names made unique within a run: fio names every clone of a job alike, so a
    repeated name gets its clone number (``par-read#2``)."""
    names = [j["jobname"] for j in run["jobs"]]
    seen: Dict[str, int] = {}
    out = []
    for n in names:
        if names.count(n) > 1:
            out.append(f"{n}#{seen.get(n, 0)}")
            seen[n] = seen.get(n, 0) + 1
        else:
            out.append(n)
    return out


class Result:
    """One ``headway simulate``: every scheduler's run of the same workload on the same
    disk with the same seed.

    ``raw`` is the JSON text (what ``headway simulate --json`` writes), ``json`` its parsed
    form (``{"headway_version", "runs": [...]}``, see the README), ``runs`` its list of runs.
    """

    def __init__(self, raw: str, trace: Optional[Dict[str, Any]] = None) -> None:
        self.raw: str = raw
        self.json: Dict[str, Any] = _json.loads(raw)
        #: For :func:`headway.replay`: the trace's ``mode`` (``open``/``closed``) and counts
        #: (``records``, ``bytes``, ``flushes``, ``contexts``, ``ignored``, ``bad``, ``wrapped``,
        #: ``window_stalls``, ``window_stall_ns``, ``peak_buffered``); ``None`` for
        #: :func:`headway.simulate`.
        self.trace: Optional[Dict[str, Any]] = trace

    @property
    def runs(self) -> List[Dict[str, Any]]:
        return self.json["runs"]

    @property
    def schedulers(self) -> List[str]:
        return [r["scheduler"] for r in self.runs]

    def __repr__(self) -> str:
        parts = ", ".join(f"{r['scheduler']}: {r['aggregate']['bw_bytes'] / 1e6:.2f} MB/s" for r in self.runs)
        return f"<headway.Result {parts}>"

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the JSON report (as ``--json PATH`` would)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.raw)

    def to_pandas(self) -> "pandas.DataFrame":
        """One row per run x job, fio-like columns.

        ``run`` (index of the run), ``scheduler``, ``disk``, ``context``, ``seed``,
        ``job`` (jobname as fio names it), ``job_index`` (the clone's position in the run),
        ``groupid``, ``job_runtime_ms``, ``disk_time_ns``, and for ``read`` and ``write``:
        ``{dir}_io_bytes``, ``{dir}_bw_bytes`` (bytes per simulated second), ``{dir}_iops``,
        ``{dir}_runtime_ms``, ``{dir}_total_ios``, ``{dir}_clat_min_ns``,
        ``{dir}_clat_max_ns``, ``{dir}_clat_mean_ns`` and one ``{dir}_clat_pP_ns`` per fio
        percentile (``read_clat_p99_ns``, ``read_clat_p99.9_ns``, ...); for a job that synced
        (``fsync``, ``end_fsync``, a trace's flushes), ``sync_total_ios``,
        ``sync_lat_mean_ns`` and ``sync_lat_max_ns`` (empty for the other jobs).
        """
        import pandas as pd

        return pd.DataFrame(self._job_rows())

    def summary(self) -> "pandas.DataFrame":
        """One row per run: the command line's comparison table, unrounded (``bw_bytes``,
        ``iops``, ``clat_mean_ns``, ``clat_p99_ns``, ``utilization``, ``idle_wait_ns``,
        ``seek_count``, ...)."""
        import pandas as pd

        rows = []
        for i, r in enumerate(self.runs):
            a, d = r["aggregate"], r["device"]
            rows.append(
                {
                    "run": i,
                    "scheduler": r["scheduler"],
                    "bw_bytes": a["bw_bytes"],
                    "iops": a["iops"],
                    "io_bytes": a["io_bytes"],
                    "runtime_ns": a["runtime_ns"],
                    "clat_mean_ns": a["clat_ns"]["mean"],
                    "clat_p99_ns": a["clat_ns"]["percentile"].get("99.000000"),
                    "utilization": d["utilization"],
                    "idle_wait_ns": d["idle_wait_ns"],
                    "seek_count": d["seek_count"],
                    "requests": d["requests"],
                }
            )
        return pd.DataFrame(rows)

    def _job_rows(self) -> List[Dict[str, Any]]:
        rows = []
        for i, r in enumerate(self.runs):
            for k, j in enumerate(r["jobs"]):
                row: Dict[str, Any] = {
                    "run": i,
                    "scheduler": r["scheduler"],
                    "disk": r["disk"],
                    "context": r["context"],
                    "seed": r["seed"],
                    "job": j["jobname"],
                    "job_index": k,
                    "groupid": j["groupid"],
                    "job_runtime_ms": j["job_runtime"],
                    "disk_time_ns": j["disk_time_ns"],
                }
                for d in _DIRS:
                    s = j[d]
                    c = s["clat_ns"]
                    row[f"{d}_io_bytes"] = s["io_bytes"]
                    row[f"{d}_bw_bytes"] = s["bw_bytes"]
                    row[f"{d}_iops"] = s["iops"]
                    row[f"{d}_runtime_ms"] = s["runtime"]
                    row[f"{d}_total_ios"] = s["total_ios"]
                    row[f"{d}_clat_min_ns"] = c["min"]
                    row[f"{d}_clat_max_ns"] = c["max"]
                    row[f"{d}_clat_mean_ns"] = c["mean"]
                    for key in sorted(c["percentile"], key=float):
                        row[f"{d}_clat_{percentile_label(key)}_ns"] = c["percentile"][key]
                sync = j.get("sync")
                if sync is not None:
                    row["sync_total_ios"] = sync["total_ios"]
                    row["sync_lat_mean_ns"] = sync["lat_ns"]["mean"]
                    row["sync_lat_max_ns"] = sync["lat_ns"]["max"]
                rows.append(row)
        return rows

    def plot(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Draw the comparison into ``path``, PNG, SVG or PDF by its extension.

        Top row: aggregate throughput per scheduler; completion-latency CDFs (from fio's
        percentiles); each job's share of the disk's time per scheduler. Below, one panel
        per run: where the head was sent during the run's first moments (the dispatches of
        ``simulate(head_trace=...)``), one colour per job: a work-conserving scheduler
        zig-zags between the jobs' regions (deceptive idleness), stream scheduling stays on
        one for a slice. The head panels are left out when the runs have no trace.
        """
        from headway import _plot

        ext = os.path.splitext(os.fspath(path))[1].lower()
        if ext not in _PLOT_FORMATS:
            raise ValueError(f"plot {os.fspath(path)!r}: expected a .png, .svg or .pdf file name")
        _plot.draw(self, os.fspath(path))
