"""Type stubs of the native module (crates/py). Use the functions of ``headway`` instead."""

from typing import List, Optional, Sequence, Tuple

__version__: str

def simulate_json(
    job: str,
    *,
    job_is_text: bool,
    label: str,
    disk: str,
    schedulers: Sequence[str],
    context: str,
    settings: Sequence[Tuple[str, str]],
    seed: int,
    queue_depth: int,
    drive_scheduler: str,
    write_cache: str,
    head_trace_ns: int,
    array: Optional[str] = None,
    array_queue_depth: int = 64,
    per_request: Optional[str] = None,
) -> str: ...
def replay_json(
    trace: str,
    *,
    format: str,
    disk: str,
    schedulers: Sequence[str],
    context: str,
    mode: Optional[str],
    settings: Sequence[Tuple[str, str]],
    seed: int,
    queue_depth: int,
    drive_scheduler: str,
    write_cache: str,
    skip_bad: bool,
    wrap: bool,
    window: Optional[int],
    max_jobs: Optional[int],
    per_request: Optional[str] = None,
) -> Tuple[str, str, List[Tuple[str, int]]]: ...
def validate_json(parv: str, trace: str) -> Tuple[str, str]: ...
def validate_suite(dir: str) -> List[Tuple[str, str]]: ...
def main(argv: Sequence[str]) -> int: ...
def sweep_plan(path: str) -> Tuple[str, int, str]: ...
def sweep_points(path: str, indices: Sequence[int]) -> List[str]: ...
def sweep_local(path: str, threads: int) -> str: ...
def disk_names() -> List[str]: ...

DEFAULT_DISK: str
def scheduler_names() -> List[str]: ...
