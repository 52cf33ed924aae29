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
from typing import Iterable, List, Mapping, NamedTuple, Optional, Tuple, Union

from headway import _native
from headway.errors import (
    DriveFileError,
    HeadwayError,
    JobFileError,
    SettingError,
    SimulationError,
    TraceFileError,
    UnknownNameError,
)
from headway.result import Result
from headway.validation import Validation
from headway._sweep import SweepResult, sweep

__version__: str = _native.__version__

__all__ = [
    "simulate",
    "replay",
    "validate",
    "Validation",
    "sweep",
    "SweepResult",
    "disks",
    "schedulers",
    "tunables",
    "Tunable",
    "DEFAULT_SCHEDULERS",
    "DEFAULT_DISK",
    "Result",
    "HeadwayError",
    "JobFileError",
    "UnknownNameError",
    "SettingError",
    "SimulationError",
    "DriveFileError",
    "TraceFileError",
    "__version__",
]

#: The command line's defaults.
DEFAULT_SCHEDULERS: Tuple[str, ...] = tuple(_native.DEFAULT_SCHEDULERS)
#: The default drive (``headway_disk::DEFAULT``, the ``--disk`` default).
DEFAULT_DISK: str = _native.DEFAULT_DISK


def _is_job_text(job: str) -> bool:
    """A string is a job file's text when it has a line break or starts with a section."""
    return "\n" in job or job.lstrip().startswith("[")


def _setting_value(v: object) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def _names(schedulers: Union[str, Iterable[str]]) -> List[str]:
    """A list of scheduler names, or a comma-separated string of them."""
    if isinstance(schedulers, str):
        return [s.strip() for s in schedulers.split(",") if s.strip()]
    return [str(s) for s in schedulers]


def _pairs(settings: Optional[Mapping[str, object]]) -> List[Tuple[str, str]]:
    return [(str(k), _setting_value(v)) for k, v in (settings or {}).items()]


def simulate(
    job: Union[str, "os.PathLike[str]"],
    *,
    disk: str = DEFAULT_DISK,
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
    (``headway.disks()``) or a DiskSim 4.0 parameter file (``path/NAME.parv`` or
    ``.diskspecs``, read as it is); ``context`` is ``process``, ``thread``, ``none``, ``vm`` or
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

    Raises :class:`JobFileError`, :class:`UnknownNameError`, :class:`SettingError`,
    :class:`DriveFileError` or :class:`SimulationError` (all :class:`HeadwayError`).
    """
    if isinstance(job, os.PathLike):
        job_arg, is_text = os.fspath(job), False
    elif isinstance(job, str):
        job_arg, is_text = job, _is_job_text(job)
    else:
        raise TypeError(f"job: expected a path or the job file's text, not {type(job).__name__}")
    names = _names(schedulers)
    pairs = _pairs(settings)
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


def replay(
    trace: Union[str, "os.PathLike[str]"],
    *,
    format: str,
    disk: str = DEFAULT_DISK,
    schedulers: Union[str, Iterable[str]] = DEFAULT_SCHEDULERS,
    context: str = "process",
    mode: Optional[str] = None,
    settings: Optional[Mapping[str, object]] = None,
    seed: int = 1,
    queue_depth: int = 1,
    drive_scheduler: str = "sptf",
    write_cache: str = "through",
    skip_bad: bool = False,
    wrap: bool = False,
    window: Optional[int] = None,
    max_jobs: Optional[int] = None,
    per_request: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Result:
    """Replay a block trace on a modelled disk once per scheduler (``headway replay``).

    ``format`` is ``blkparse`` (blkparse's default text output, Q events), ``blktrace`` (blktrace's
    binary per-CPU files, NAME or NAME.blktrace.N), ``iolog`` (fio
    iolog v2 or v3), ``msr`` (MSR Cambridge CSV), ``spc`` (UMass/SPC), ``disksim`` (DiskSim
    ascii) or ``fiu``. ``mode`` ``"open"`` issues requests at their recorded times,
    ``"closed"`` makes each context of the trace a synchronous issuer with the recorded
    think times (``None``: open, closed for untimed fio iolog v2). ``context`` is
    ``process``, ``thread`` (each trace context an issuer of its own), ``none`` or
    ``pool:N``. ``skip_bad`` counts and skips malformed lines instead of stopping at the
    first; ``wrap`` folds requests past the end of the disk back onto it; ``window`` bounds
    the records closed mode reads ahead (``None``: 262,144, as ``--window``); ``max_jobs``
    contexts are reported as jobs of their own, the rest share a job named ``others``
    (``None``: 64). ``disk``, ``schedulers``, ``settings``,
    ``seed``, the drive's flags and ``per_request`` are as for :func:`simulate`.

    Returns a :class:`Result` (the JSON ``--json`` writes) whose ``trace`` attribute has the
    trace's mode and counts (``records``, ``bytes``, ``flushes`` — cache flushes, replayed as
    the drives' FLUSH CACHE — ``contexts``, ``ignored``, ``bad``, ``wrapped``, ...). Raises :class:`TraceFileError` (file and line of a malformed
    line), :class:`UnknownNameError`, :class:`SettingError`, :class:`DriveFileError` or
    :class:`SimulationError`.
    """
    raw, run_mode, counts = _native.replay_json(
        os.fspath(trace),
        format=format,
        disk=os.fspath(disk),
        schedulers=_names(schedulers),
        context=context,
        mode=mode,
        settings=_pairs(settings),
        seed=int(seed),
        queue_depth=int(queue_depth),
        drive_scheduler=drive_scheduler,
        write_cache=write_cache,
        skip_bad=bool(skip_bad),
        wrap=bool(wrap),
        window=None if window is None else int(window),
        max_jobs=None if max_jobs is None else int(max_jobs),
        **({} if per_request is None else {"per_request": os.fspath(per_request)}),
    )
    summary = {"mode": run_mode}
    summary.update(dict(counts))
    return Result(raw, trace=summary)


def validate(
    parv: Union[str, "os.PathLike[str]"],
    trace: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Union[Validation, List[Validation]]:
    """Score a drive against a DiskSim validation trace (``headway validate``).

    ``parv`` is a DiskSim 4.0 parameter file (or a built-in model name) and ``trace`` a
    measured trace (``R|W Hit|Miss blkno bcount service_us next_interarrival_us`` a line):
    the trace is replayed closed loop, as DiskSim's validation does, and scored by the
    demerit figure. Returns a :class:`Validation`. With ``parv`` a directory and no
    ``trace``, every ``NAME.parv`` with a ``NAME.trace`` beside it is scored: a list of
    :class:`Validation`, by name.

    Raises :class:`DriveFileError`, :class:`TraceFileError` (file and line of a malformed
    line) or :class:`HeadwayError`.
    """
    p = os.fspath(parv)
    if trace is None:
        if not os.path.isdir(p):
            raise TypeError(f"validate({p!r}): give the trace, or a directory of NAME.parv + NAME.trace pairs")
        return [Validation(*_native.validate_json(a, b)) for a, b in _native.validate_suite(p)]
    return Validation(*_native.validate_json(p, os.fspath(trace)))


def disks() -> List[str]:
    """Names of the built-in drive models (``headway disks``)."""
    return list(_native.disk_names())


def schedulers() -> List[str]:
    """Every scheduler name (``headway schedulers``)."""
    return list(_native.scheduler_names())


class Tunable(NamedTuple):
    """A tunable as ``headway tunables`` lists it: what ``settings=`` accepts."""

    name: str
    unit: str
    default: str
    read_by: str
    doc: str


def tunables() -> List[Tunable]:
    """The tunable table, from the same table of schedulers ``headway tunables`` prints."""
    return [Tunable(*t) for t in _native.tunables()]
