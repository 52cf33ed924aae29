"""headway: non-work-conserving disk I/O scheduling, simulated.

Simulate a fio job file on a modelled hard disk once per scheduler and compare::

    import headway

    result = headway.simulate("experiments/par-read.fio", context="none",
                              schedulers=["noop", "deadline", "stream"])
    df = result.to_pandas()        # one row per run x job, fio-like columns
    result.plot("par-read.png")    # throughput, latency CDFs, disk-time shares, head trace

The work is done by the same Rust simulator as the ``headway`` command (which this package
installs too); :attr:`Result.json` is the report ``headway simulate --json`` writes.
"""

from __future__ import annotations

import os
from typing import Iterable, List, Mapping, Optional, Union

from headway import _native
from headway.errors import (
    HeadwayError,
    JobFileError,
    SettingError,
    SimulationError,
    UnknownNameError,
)
from headway.result import Result
from headway._sweep import SweepResult, sweep

__version__: str = _native.__version__

__all__ = [
    "simulate",
    "sweep",
    "SweepResult",
    "disks",
    "schedulers",
    "Result",
    "HeadwayError",
    "JobFileError",
    "UnknownNameError",
    "SettingError",
    "SimulationError",
    "__version__",
]

#: The command line's defaults.
DEFAULT_SCHEDULERS = ("noop", "deadline", "stream")


def _is_job_text(job: str) -> bool:
    """A string is a job file's text when it has a line break or starts with a section."""
    return "\n" in job or job.lstrip().startswith("[")


def _setting_value(v: object) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def simulate(
    job: Union[str, "os.PathLike[str]"],
    *,
    disk: str = "wd5000aaks",
    schedulers: Union[str, Iterable[str]] = DEFAULT_SCHEDULERS,
    context: str = "process",
    settings: Optional[Mapping[str, object]] = None,
    seed: int = 1,
    queue_depth: int = 1,
    drive_scheduler: str = "sptf",
    write_cache: str = "through",
    head_trace: float = 0.5,
    array: Optional[str] = None,
    array_queue_depth: int = 64,
    per_request: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Result:
    """Run a fio job file on a modelled disk once per scheduler (``headway simulate``).

    ``job`` is a path (``str`` or ``os.PathLike``) or the job file's text (a string with a
    line break, or starting with ``[``). ``schedulers`` is a list of names or a
    comma-separated string (``headway.schedulers()`` lists them); ``disk`` a built-in model
    (``headway.disks()``); ``context`` is ``process``, ``thread``, ``none``, ``vm`` or
    ``pool:N``; ``settings`` are tunables as ``--set`` takes them (``{"read_expire":
    "250ms", "stream_time_slice": 60}``: a bare number is in the unit ``headway tunables``
    shows). ``head_trace`` keeps each run's dispatches during the first that many seconds
    of simulated time for :meth:`Result.plot` (0: none, and the JSON is then byte for byte
    what the command line writes). ``array`` (``"raid0:5:64k"``, ``"raid5:4:16k"``) makes the
    disk an array of ``disk`` drives, each with its own scheduler instance (``stream``: the
    coordinated array stream scheduler, one state over all members), behind a front
    end admitting ``array_queue_depth`` requests (``--array``, ``--array-queue-depth``);
    runs then have ``array`` and per-member ``members`` sections. ``per_request`` (a path)
    streams every job request of every run to that CSV file, as ``--per-request`` does
    (``scheduler,job_index,job,dir,offset,bytes,submit_ns,complete_ns,latency_ns``; read it
    with ``pandas.read_csv``).

    Raises :class:`JobFileError`, :class:`UnknownNameError`, :class:`SettingError` or
    :class:`SimulationError` (all :class:`HeadwayError`).
    """
    if isinstance(job, os.PathLike):
        job_arg, is_text = os.fspath(job), False
    elif isinstance(job, str):
        job_arg, is_text = job, _is_job_text(job)
    else:
        raise TypeError(f"job: expected a path or the job file's text, not {type(job).__name__}")
    if isinstance(schedulers, str):
        names: List[str] = [s.strip() for s in schedulers.split(",") if s.strip()]
    else:
        names = [str(s) for s in schedulers]
    pairs = [(str(k), _setting_value(v)) for k, v in (settings or {}).items()]
    if head_trace < 0:
        raise SettingError(f"head_trace {head_trace}: expected seconds >= 0")
    raw = _native.simulate_json(
        job_arg,
        job_is_text=is_text,
        label="<job text>",
        disk=disk,
        schedulers=names,
        context=context,
        settings=pairs,
        seed=int(seed),
        queue_depth=int(queue_depth),
        drive_scheduler=drive_scheduler,
        write_cache=write_cache,
        head_trace_ns=int(round(head_trace * 1e9)),
        **({} if array is None else {"array": str(array), "array_queue_depth": int(array_queue_depth)}),
        **({} if per_request is None else {"per_request": os.fspath(per_request)}),
    )
    return Result(raw)


def disks() -> List[str]:
    """Names of the built-in drive models (``headway disks``)."""
    return list(_native.disk_names())


def schedulers() -> List[str]:
    """Every scheduler name (``headway schedulers``)."""
    return list(_native.scheduler_names())
