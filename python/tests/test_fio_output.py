"""fio's JSON from `headway simulate --output-format json`, read by pandas code written for
fio's JSON, unchanged."""

import json

import pandas as pd

from test_simulate import cli

JOB = """\
[global]
ioengine=psync
direct=1
bs=4k
size=8m
[seq]
rw=read
[rand]
rw=randread
number_ios=400
"""


def test_pandas_code_for_fio_json_runs_unchanged(tmp_path):
    job = tmp_path / "two.fio"
    job.write_text(JOB)
    out = tmp_path / "fio.json"
    p = cli("simulate", str(job), "--scheduler", "noop", "--output-format", "json", "--output", str(out))
    assert p.returncode == 0, p.stderr
    # as fio users write it
    with open(out) as f:
        d = json.load(f)
    jobs = pd.json_normalize(d["jobs"])
    bw = jobs["read.bw"]
    lat = jobs["read.lat_ns.mean"]
    util = d["disk_util"][0]["util"]
    assert list(jobs["jobname"]) == ["seq", "rand"]
    assert list(jobs["read.total_ios"]) == [2048, 400]
    # bw is KiB/s over the job's runtime, as fio's
    for _, j in jobs.iterrows():
        assert j["read.bw"] == j["read.io_bytes"] * 1000 // j["read.runtime"] // 1024
    assert (bw > 0).all() and (lat > 0).all()
    # the random reader waits for seeks: its mean latency is the longer
    assert lat[1] > lat[0]
    assert 0 < util <= 100
