import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Small enough to run in well under a second per scheduler: four synchronous sequential
# readers 50 GiB apart (par-read, shrunk).
SMALL_JOB = """\
[global]
ioengine=psync
direct=1
rw=read
bs=4k
size=8m

[par-read]
numjobs=4
offset_increment=51g
"""


@pytest.fixture
def job_path(tmp_path):
    p = tmp_path / "small.fio"
    p.write_text(SMALL_JOB)
    return p


@pytest.fixture(scope="session")
def root():
    return ROOT
