"""Exceptions raised by headway.

Every error headway reports is a :class:`HeadwayError`; the native module makes them from
the simulator's error types in one place (``crates/py/src/error.rs``), with the message the
command line prints.
"""

from __future__ import annotations

from typing import Optional

__all__ = [
    "HeadwayError",
    "JobFileError",
    "UnknownNameError",
    "SettingError",
    "SimulationError",
    "DriveFileError",
    "TraceFileError",
]


class HeadwayError(Exception):
    """Base class of every headway error."""


class JobFileError(HeadwayError, ValueError):
    """A fio job file that cannot be read, parsed or run on the chosen disk.

    ``file`` and ``line`` say where (``line`` is ``None`` when the error is not at a line:
    an unreadable file, a file without jobs); ``option`` names the option as written, for
    an unknown option or a bad value.
    """

    def __init__(
        self,
        message: str,
        *,
        file: Optional[str] = None,
        line: Optional[int] = None,
        option: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.option = option


class UnknownNameError(HeadwayError, ValueError):
    """A scheduler or drive model name headway does not know; the message lists the known
    ones. ``kind`` is ``"scheduler"`` or ``"drive model"``."""

    def __init__(self, message: str, *, kind: Optional[str] = None, name: Optional[str] = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name


class SettingError(HeadwayError, ValueError):
    """A bad tunable (``settings=``) or run argument: an unknown name, a bad value, a
    setting no chosen scheduler reads, a bad ``context``, ``queue_depth``,
    ``drive_scheduler`` or ``write_cache``."""


class SimulationError(HeadwayError, RuntimeError):
    """A simulation that could not finish (a scheduler that stalled the run)."""


class DriveFileError(HeadwayError, ValueError):
    """A DiskSim parameter file (``.parv``/``.diskspecs``, given as ``disk=``) that cannot
    be read or imported: a syntax error, an unknown or unsupported key, an inconsistent
    drive. ``file`` and ``line`` say where (``line`` is ``None`` when the error is not at a
    line)."""

    def __init__(self, message: str, *, file: Optional[str] = None, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.file = file
        self.line = line


class TraceFileError(HeadwayError, ValueError):
    """A block or validation trace that cannot be read or replayed: an unreadable file, a
    malformed line, a request past the end of the disk, an untimed trace in open mode.
    ``file`` and ``line`` say where (``line`` is ``None`` when the error is not at a line).
    """

    def __init__(self, message: str, *, file: Optional[str] = None, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
