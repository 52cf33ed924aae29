"""Drawing :meth:`headway.Result.plot` with matplotlib (Agg: no display needed)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:  # pragma: no cover
    from headway.result import Result

_HEAD_COLS = 3


def _colors(n: int) -> List[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def draw(result: "Result", path: str) -> None:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from headway.result import _job_names

    runs = result.runs
    traced = [r for r in runs if r.get("head_trace") and r["head_trace"]["t_ns"]]
    head_rows = math.ceil(len(traced) / _HEAD_COLS) if traced else 0
    fig = Figure(figsize=(16, 4.6 + 3.6 * head_rows), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(1 + head_rows, _HEAD_COLS * 2, height_ratios=[1.25] + [1] * head_rows)
    ax_bw = fig.add_subplot(grid[0, 0:2])
    ax_cdf = fig.add_subplot(grid[0, 2:4])
    ax_share = fig.add_subplot(grid[0, 4:6])
    names = [r["scheduler"] for r in runs]
    colors = _colors(len(runs))

    # Throughput per scheduler, relative to the first as the table shows it.
    bw = [r["aggregate"]["bw_bytes"] / 1e6 for r in runs]
    bars = ax_bw.bar(range(len(runs)), bw, color=colors)
    base = bw[0] if bw and bw[0] > 0 else None
    for b, v in zip(bars, bw):
        label = f"{v:.1f}" + (f"\n{v / base:.2f}x" if base else "")
        ax_bw.annotate(label, (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom", fontsize=8)
    ax_bw.set_xticks(range(len(runs)), names, rotation=20, ha="right")
    ax_bw.set_ylabel("MB/s (simulated)")
    ax_bw.set_title("Throughput")
    ax_bw.margins(y=0.2)

    # Completion-latency CDFs from fio's percentiles (all jobs together).
    for r, c in zip(runs, colors):
        pct: Dict[str, int] = r["aggregate"]["clat_ns"]["percentile"]
        keys = sorted(pct, key=float)
        xs = [max(pct[k], 1) / 1e6 for k in keys]
        ys = [float(k) / 100 for k in keys]
        ax_cdf.step(xs, ys, where="post", color=c, label=r["scheduler"], marker=".", markersize=3)
    ax_cdf.set_xscale("log")
    ax_cdf.set_xlabel("completion latency, ms")
    ax_cdf.set_ylabel("fraction of requests")
    ax_cdf.set_ylim(0, 1.02)
    ax_cdf.set_title("Latency CDF")
    ax_cdf.legend(fontsize=8)

    # Each job's share of the disk's time, per scheduler.
    all_jobs: List[str] = []
    for r in runs:
        for n in _job_names(r):
            if n not in all_jobs:
                all_jobs.append(n)
    job_colors = dict(zip(all_jobs, _colors(len(all_jobs))))
    for i, r in enumerate(runs):
        total = sum(j["disk_time_ns"] for j in r["jobs"]) or 1
        left = 0.0
        for n, j in zip(_job_names(r), r["jobs"]):
            w = j["disk_time_ns"] / total
            ax_share.barh(i, w, left=left, color=job_colors[n], label=n if i == 0 else None)
            left += w
    ax_share.set_yticks(range(len(runs)), names)
    ax_share.invert_yaxis()
    ax_share.set_xlim(0, 1)
    ax_share.set_xlabel("share of disk time")
    ax_share.set_title("Disk time per job")
    if len(all_jobs) <= 12:
        ax_share.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=4)

    # Where the head went: each dispatch's offset against time.
    for k, r in enumerate(traced):
        row, col = 1 + k // _HEAD_COLS, k % _HEAD_COLS
        ax = fig.add_subplot(grid[row, 2 * col : 2 * col + 2])
        tr = r["head_trace"]
        t = [x / 1e6 for x in tr["t_ns"]]
        off = [s * 512 / 1e9 for s in tr["sector"]]
        names_r = _job_names(r)
        ax.plot(t, off, color="0.75", linewidth=0.5, zorder=1)
        cols = [job_colors[names_r[j]] if 0 <= j < len(names_r) else "0.3" for j in tr["job"]]
        ax.scatter(t, off, c=cols, s=4, zorder=2, linewidths=0)
        ax.set_xlim(0, tr["window_ns"] / 1e6)
        ax.set_xlabel("simulated time, ms")
        ax.set_ylabel("disk offset, GB")
        capped = " (capped)" if len(t) >= 20_000 else ""
        ax.set_title(f"{r['scheduler']}: {len(t)} dispatches{capped}", fontsize=10)
    fig.suptitle(_title(result))
    fig.savefig(path, dpi=110)


def _title(result: "Result") -> str:
    r = result.runs[0] if result.runs else {}
    jobs = len(r.get("jobs", []))
    return (
        f"headway {result.json.get('headway_version', '')}: {jobs} job(s) on {r.get('disk', '?')}, "
        f"context {r.get('context', '?')}, seed {r.get('seed', '?')}"
    )
