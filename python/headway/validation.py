"""The result of :func:`headway.validate`: a drive model scored against a measured trace,
as DiskSim's validation scores it."""

from __future__ import annotations

import io
import json as _json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Union

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = ["Validation"]

_PLOT_FORMATS = (".png", ".svg", ".pdf")


class Validation:
    """One drive replayed against one DiskSim validation trace (``headway validate PARV
    TRACE``).

    ``json`` is what ``--json`` writes: ``drive``, ``requests``, ``demerit_ms`` (the RMS
    horizontal distance between the simulated and measured service-time CDFs at 10,000
    quantiles, from exact values), ``demerit_binned_ms`` (the same through DiskSim's binned
    distributions, the estimator of DiskSim's published figures), ``mean_simulated_ms``,
    ``mean_measured_ms``, ``cache_hit_agreement`` and ``parts`` (the same figures for the
    reads, the writes, each class of the trace and the reads by position). The attributes
    repeat the scalars; :meth:`to_pandas` has one row a request, :meth:`parts` one row a
    part.
    """

    def __init__(self, raw: str, per_request_csv: str) -> None:
        self.raw: str = raw
        self.json: Dict[str, Any] = _json.loads(raw)
        self._csv = per_request_csv
        j = self.json
        self.drive: str = j["drive"]
        self.requests: int = j["requests"]
        self.demerit_ms: float = j["demerit_ms"]
        self.demerit_binned_ms: float = j["demerit_binned_ms"]
        self.mean_simulated_ms: float = j["mean_simulated_ms"]
        self.mean_measured_ms: float = j["mean_measured_ms"]

    def __repr__(self) -> str:
        return (
            f"<headway.Validation {self.drive}: demerit {self.demerit_ms:.6f} ms "
            f"({self.demerit_binned_ms:.6f} binned) over {self.requests} requests>"
        )

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the JSON (as ``--json PATH`` would)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.raw)

    def save_per_request(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the per-request CSV (as ``--per-request PATH`` would)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self._csv)

    def to_pandas(self) -> "pandas.DataFrame":
        """One row a request, in trace order: ``line``, ``dir`` (``R``/``W``), ``class``
        (the trace's Hit/Miss column), ``blkno``, ``bcount``, ``measured_ms``,
        ``simulated_ms``, ``model_hit`` (the model served it from its cache), ``same_cylinder``
        (it starts on the cylinder where the previous request ended), ``seek_cylinders``."""
        import pandas as pd

        return pd.read_csv(io.StringIO(self._csv))

    def parts(self) -> "pandas.DataFrame":
        """The breakdown ``headway validate`` prints below ``all``: ``part``, ``requests``,
        ``demerit_ms``, ``mean_simulated_ms``, ``mean_measured_ms``."""
        import pandas as pd

        cols = ["part", "requests", "demerit_ms", "mean_simulated_ms", "mean_measured_ms"]
        rows: List[Dict[str, Any]] = self.json["parts"]
        return pd.DataFrame([{c: r[c] for c in cols} for r in rows], columns=cols)

    def plot(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Draw the simulated and measured service-time CDFs into ``path`` (PNG, SVG or PDF by
        its extension), as ``--plot`` does."""
        ext = os.path.splitext(os.fspath(path))[1].lower()
        if ext not in _PLOT_FORMATS:
            raise ValueError(f"plot {os.fspath(path)!r}: expected a .png, .svg or .pdf file name")
        import matplotlib

        matplotlib.use("Agg", force=False)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        df = self.to_pandas()
        fig = Figure(figsize=(8, 5), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        n = len(df)
        for col, label in (("simulated_ms", "simulated"), ("measured_ms", "measured")):
            x = df[col].sort_values().to_numpy()
            ax.step(x, [(i + 1) / n for i in range(n)], where="post", label=label)
        ax.set_xlabel("service time (ms)")
        ax.set_ylabel("fraction of requests")
        ax.set_title(f"{self.drive}: demerit {self.demerit_ms:.3f} ms over {self.requests} requests")
        ax.legend()
        fig.savefig(os.fspath(path))
