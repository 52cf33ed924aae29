"""headway.sweep: the local engine, the Dask engine on a real local cluster (a scheduler
and two worker processes on loopback), the console script, errors."""

import os
import shutil
import subprocess
import sys

import pytest

import headway

JOB = """\
[global]
ioengine=psync
direct=1
rw=read
bs=4k
size=64k

[r]
numjobs=2
offset_increment=51g
"""

# 3 schedulers x 2 thresholds x 3 thinktimes x 2 contexts x 6 seeds = 216 points
SWEEP = """\
job = "small.fio"
out = "tables/sweep.csv"
[grid]
scheduler = ["noop", "deadline", "stream"]
context = ["none", "process"]
thinktime_us = [0, 50, 200]
seed = [1, 2, 3, 4, 5, 6]
[grid.set]
stream_threshold = [2, 4]
"""


@pytest.fixture
def sweep_path(tmp_path):
    (tmp_path / "small.fio").write_text(JOB)
    p = tmp_path / "s.toml"
    p.write_text(SWEEP)
    return p


def cli(*args):
    exe = shutil.which("headway", path=os.path.dirname(sys.executable)) or shutil.which("headway")
    assert exe
    return subprocess.run([exe, *args], capture_output=True, text=True)


def test_local_engine_matches_the_cli(sweep_path, tmp_path):
    res = headway.sweep(sweep_path, threads=3)
    assert res.points == 216
    df = res.to_pandas()
    assert len(df) == 216 * 2
    assert list(df.columns[:7]) == ["point", "disk", "context", "thinktime_us", "stream_threshold", "scheduler", "seed"]
    assert list(df["point"]) == [i // 2 for i in range(432)]
    assert list(df["seed"][:4]) == [1, 1, 2, 2]
    assert res.csv == headway.sweep(sweep_path, threads=1).csv
    out = tmp_path / "cli.csv"
    p = cli("sweep", str(sweep_path), "--out", str(out), "--quiet")
    assert p.returncode == 0, p.stderr
    assert out.read_text() == res.csv
    assert res.save() == str(tmp_path / "tables" / "sweep.csv")
    # the same table as Parquet
    import pandas as pd

    pq = res.save(tmp_path / "sweep.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(pq), df)


def test_dask_engine_equals_local_engine(sweep_path, tmp_path):
    # installed by `make python` (dask[distributed]); missing, the test fails
    import dask.distributed as distributed

    local = headway.sweep(sweep_path)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        res = headway.sweep(sweep_path, engine="dask", scheduler_address=cluster.scheduler_address)
        assert res.csv == local.csv
        a, b = res.to_pandas(), local.to_pandas()
        assert len(a) >= 400
        import pandas.testing

        pandas.testing.assert_frame_equal(a, b, check_exact=True)
        # the console script's `--engine dask` runs the same
        out = tmp_path / "dask.csv"
        p = cli("sweep", str(sweep_path), "--engine", "dask", "--scheduler-address",
                cluster.scheduler_address, "--out", str(out))
        assert p.returncode == 0, p.stderr
        assert out.read_text() == local.csv


def test_bad_sweep_file_names_file_and_line(tmp_path):
    (tmp_path / "small.fio").write_text(JOB)
    p = tmp_path / "bad.toml"
    p.write_text('job = "small.fio"\n[grid]\nscheduler = ["noop"]\nsedd = [1]\n')
    with pytest.raises(headway.SettingError, match=rf"{p}:4: .*sedd"):
        headway.sweep(p)
    ok = tmp_path / "ok.toml"
    ok.write_text('job = "small.fio"\n[grid]\nscheduler = ["noop"]\n')
    with pytest.raises(ValueError, match="engine"):
        headway.sweep(ok, engine="spark")
