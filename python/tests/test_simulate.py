"""headway from Python: simulate, the DataFrame against the CLI's JSON, errors, plots,
the console script."""

import json
import math
import os
import shutil
import subprocess
import sys

import pytest

import headway
from conftest import SMALL_JOB

SCHEDS = ["noop", "deadline", "stream"]


def cli(*args, **kw):
    """The installed `headway` console script."""
    exe = shutil.which("headway", path=os.path.dirname(sys.executable)) or shutil.which("headway")
    assert exe, "the headway console script is installed"
    return subprocess.run([exe, *args], capture_output=True, text=True, **kw)


def test_simulate_text_and_path_agree(job_path):
    a = headway.simulate(SMALL_JOB, schedulers=SCHEDS, context="none")
    b = headway.simulate(job_path, schedulers=SCHEDS, context="none")
    c = headway.simulate(str(job_path), schedulers="noop,deadline,stream", context="none")
    assert a.schedulers == ["noop", "deadline", "stream:deadline"]
    assert a.json["runs"] == b.json["runs"] == c.json["runs"]
    assert isinstance(a.raw, str) and json.loads(a.raw) == a.json
    # stream scheduling beats deadline on par-read without process information
    bw = {r["scheduler"]: r["aggregate"]["bw_bytes"] for r in a.runs}
    assert bw["stream:deadline"] > 5 * bw["deadline"]


def test_dataframe_matches_cli_json(job_path, tmp_path):
    out = tmp_path / "cli.json"
    p = cli("simulate", str(job_path), "--scheduler", ",".join(SCHEDS), "--context", "none",
            "--seed", "3", "--json", str(out), "--quiet")
    assert p.returncode == 0, p.stderr
    ref = json.loads(out.read_text())
    res = headway.simulate(job_path, schedulers=SCHEDS, context="none", seed=3, head_trace=0)
    # without a head trace the report is byte for byte the CLI's
    assert res.raw == out.read_text()

    df = res.to_pandas()
    runs = ref["runs"]
    assert df.shape[0] == sum(len(r["jobs"]) for r in runs) == 3 * 4
    percentiles = runs[0]["jobs"][0]["read"]["clat_ns"]["percentile"]
    assert df.shape[1] == 10 + 2 * (8 + len(percentiles))
    i = 0
    for r in runs:
        for k, j in enumerate(r["jobs"]):
            row = df.iloc[i]
            i += 1
            assert row["scheduler"] == r["scheduler"]
            assert row["job"] == j["jobname"] and row["job_index"] == k
            assert row["seed"] == 3 and row["context"] == "none" and row["disk"] == r["disk"]
            assert row["disk_time_ns"] == j["disk_time_ns"]
            assert row["job_runtime_ms"] == j["job_runtime"]
            for d in ("read", "write"):
                s = j[d]
                assert row[f"{d}_io_bytes"] == s["io_bytes"]
                assert row[f"{d}_bw_bytes"] == s["bw_bytes"]
                assert math.isclose(row[f"{d}_iops"], s["iops"], rel_tol=0, abs_tol=0)
                assert row[f"{d}_total_ios"] == s["total_ios"]
                assert row[f"{d}_runtime_ms"] == s["runtime"]
                assert row[f"{d}_clat_mean_ns"] == s["clat_ns"]["mean"]
                assert row[f"{d}_clat_max_ns"] == s["clat_ns"]["max"]
                for key, v in s["clat_ns"]["percentile"].items():
                    assert row[f"{d}_clat_{headway.result.percentile_label(key)}_ns"] == v
    assert df["read_clat_p99_ns"].dtype.kind in "iu"
    s = res.summary()
    assert list(s["scheduler"]) == [r["scheduler"] for r in runs]
    assert list(s["bw_bytes"]) == [r["aggregate"]["bw_bytes"] for r in runs]


def test_settings_seed_and_options(job_path):
    base = headway.simulate(job_path, schedulers=["stream"], context="none", head_trace=0)
    slow = headway.simulate(job_path, schedulers=["stream"], context="none", head_trace=0,
                            settings={"stream_time_slice": "10ms"})
    assert base.raw != slow.raw
    q = headway.simulate(job_path, schedulers=["deadline"], queue_depth=32, drive_scheduler="sptf")
    assert q.runs[0]["device"]["queue_depth"] == 32
    assert "head_trace" in q.runs[0]
    tr = q.runs[0]["head_trace"]
    assert len(tr["t_ns"]) == len(tr["sector"]) == len(tr["sectors"]) == len(tr["job"]) > 0
    assert all(t <= tr["window_ns"] for t in tr["t_ns"])
    assert set(headway.disks()) >= {"wd5000aaks", "hd080hj"}
    assert "stream:cscan" in headway.schedulers()


def test_array(job_path):
    r = headway.simulate(job_path, schedulers=["noop", "stream-local", "stream"], array="raid0:5:64k",
                         array_queue_depth=16, head_trace=0)
    for run in r.runs:
        assert run["array"] == "raid0:5:64k"
        assert [m["member"] for m in run["members"]] == [0, 1, 2, 3, 4]
    assert r.runs[1]["scheduler"] == "stream-local:deadline"
    # `stream` on an array is the coordinated scheduler: array-wide counters beside the members'
    assert r.runs[2]["scheduler"] == "stream:deadline"
    assert {"virtual_streams", "coordinations", "array_slices"} <= set(r.runs[2]["scheduler_stats"])
    assert "coordinations" not in r.runs[1]["scheduler_stats"]
    plain = headway.simulate(job_path, schedulers=["noop"], head_trace=0)
    assert "array" not in plain.runs[0] and "members" not in plain.runs[0]
    with pytest.raises(headway.SettingError, match="raid7"):
        headway.simulate(job_path, array="raid7:5:64k")


def test_per_request_csv_matches_the_cli_and_the_json(job_path, tmp_path):
    mine, theirs = tmp_path / "py.csv", tmp_path / "cli.csv"
    r = headway.simulate(job_path, schedulers=["noop", "stream"], context="none", head_trace=0,
                         per_request=mine)
    p = cli("simulate", str(job_path), "--scheduler", "noop,stream", "--context", "none",
            "--per-request", str(theirs), "--quiet")
    assert p.returncode == 0, p.stderr
    assert mine.read_bytes() == theirs.read_bytes()
    lines = mine.read_text().splitlines()
    assert lines[0] == "scheduler,job_index,job,dir,offset,bytes,submit_ns,complete_ns,latency_ns"
    rows = [l.split(",") for l in lines[1:]]
    for run, sched in zip(r.runs, ["noop", "stream"]):
        for j, job in enumerate(run["jobs"]):
            mine_j = [x for x in rows if x[0] == sched and x[1] == str(j)]
            assert len(mine_j) == job["read"]["total_ios"]
            assert sum(int(x[5]) for x in mine_j) == job["read"]["io_bytes"]
    with pytest.raises(headway.SettingError, match="no/such/dir"):
        headway.simulate(job_path, per_request="/proc/no/such/dir/x.csv")


def test_unknown_scheduler(job_path):
    with pytest.raises(headway.UnknownNameError) as e:
        headway.simulate(job_path, schedulers=["noop", "no-such-sched"])
    assert e.value.kind == "scheduler" and e.value.name == "no-such-sched"
    assert "known:" in str(e.value) and "deadline" in str(e.value)
    assert isinstance(e.value, headway.HeadwayError) and isinstance(e.value, ValueError)


def test_unknown_disk(job_path):
    with pytest.raises(headway.UnknownNameError, match="drive model `floppy`") as e:
        headway.simulate(job_path, disk="floppy")
    assert e.value.kind == "drive model"


def test_bad_job_line_names_file_and_line(tmp_path):
    p = tmp_path / "bad.fio"
    p.write_text("[global]\nrw=read\n\n[j]\nbs=4k\nfrobnicate=3\n")
    with pytest.raises(headway.JobFileError) as e:
        headway.simulate(p)
    assert e.value.file == str(p) and e.value.line == 6 and e.value.option == "frobnicate"
    assert f"{p}:6" in str(e.value) and "frobnicate" in str(e.value)

    with pytest.raises(headway.JobFileError) as e:
        headway.simulate("[j]\nrw=read\nbs=banana\n")
    assert e.value.line == 3 and e.value.option == "bs" and "<job text>:3" in str(e.value)


def test_missing_job_file(tmp_path):
    with pytest.raises(headway.JobFileError, match="cannot read") as e:
        headway.simulate(tmp_path / "nope.fio")
    assert e.value.line is None


def test_bad_settings(job_path):
    with pytest.raises(headway.SettingError, match="no_such_knob"):
        headway.simulate(job_path, settings={"no_such_knob": 1})
    with pytest.raises(headway.SettingError, match="read_expire"):
        headway.simulate(job_path, schedulers=["deadline"], settings={"read_expire": "soon"})
    with pytest.raises(headway.SettingError, match="context"):
        headway.simulate(job_path, context="everyone")
    with pytest.raises(headway.SettingError, match="queue_depth"):
        headway.simulate(job_path, queue_depth=0)
    with pytest.raises(TypeError):
        headway.simulate(42)


@pytest.mark.parametrize("ext", ["png", "svg"])
def test_plot_written(job_path, tmp_path, ext):
    res = headway.simulate(job_path, schedulers=SCHEDS, context="none")
    out = tmp_path / f"cmp.{ext}"
    res.plot(out)
    data = out.read_bytes()
    assert len(data) > 10_000
    if ext == "png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert b"<svg" in data[:2000]


def test_plot_without_trace_and_bad_extension(job_path, tmp_path):
    res = headway.simulate(job_path, schedulers=["noop"], head_trace=0)
    res.plot(tmp_path / "no-trace.png")
    assert (tmp_path / "no-trace.png").stat().st_size > 0
    with pytest.raises(ValueError, match="png"):
        res.plot(tmp_path / "cmp.gif")


def test_console_script_is_the_cli(root):
    p = cli("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"headway {headway.__version__}"
    p = cli("schedulers")
    assert p.returncode == 0 and p.stdout.split() == headway.schedulers()
    p = cli("simulate", "no-such.fio")
    assert p.returncode == 2 and "cannot read" in p.stderr
    p = cli("--no-such-flag")
    assert p.returncode == 2 and "--no-such-flag" in p.stderr
    p = subprocess.run([sys.executable, "-m", "headway", "disks"], capture_output=True, text=True)
    assert p.returncode == 0 and "wd5000aaks" in p.stdout


def test_a_bad_context_reads_the_same_from_the_cli_python_and_a_sweep_file(job_path, tmp_path):
    """One error text for a bad `--context` value, whichever front door it came through;
    each names where the value was (the option, the keyword, the file, line and key)."""
    p = cli("simulate", str(job_path), "--context", "everyone")
    assert p.returncode != 0
    line = p.stderr.strip().splitlines()[-1]
    assert "--context: " in line, line
    core = line.split("--context: ", 1)[1]
    assert "`everyone`" in core and "pool:N" in core, core
    with pytest.raises(headway.SettingError) as py:
        headway.simulate(job_path, context="everyone")
    assert str(py.value) == f"context: {core}"
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'job = "{job_path}"\n[grid]\nscheduler = ["noop"]\ncontext = ["none", "everyone"]\n')
    with pytest.raises(headway.SettingError) as sw:
        headway.sweep(sweep)
    assert str(sw.value) == f"{sweep}:4: key `grid.context`: {core}"
    s = cli("sweep", str(sweep))
    assert s.returncode != 0 and s.stderr.strip().splitlines()[-1].endswith(f"{sweep}:4: key `grid.context`: {core}")


def test_a_bad_disk_reads_the_same_from_the_cli_python_and_a_sweep_file(job_path, tmp_path):
    """One resolver (headway_disk::resolve) and one error text for a drive name that names
    nothing, whichever front door it came through."""
    p = cli("simulate", str(job_path), "--disk", "floppy")
    assert p.returncode == 2
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("headway: error: unknown drive model `floppy` (known: "), line
    text = line.split("headway: error: ", 1)[1]
    assert headway.DEFAULT_DISK in text and ".parv" in text, text
    with pytest.raises(headway.UnknownNameError) as py:
        headway.simulate(job_path, disk="floppy")
    assert str(py.value) == text and py.value.name == "floppy"
    for args in (["replay", str(job_path), "--format", "iolog", "--disk", "floppy"], ["validate", "floppy", str(job_path)]):
        p = cli(*args)
        assert p.returncode == 2 and p.stderr.strip().splitlines()[-1] == f"headway: error: {text}", p.stderr
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'job = "{job_path}"\n[grid]\nscheduler = ["noop"]\ndisk = ["floppy"]\n')
    with pytest.raises(headway.SettingError) as sw:
        headway.sweep(sweep)
    assert str(sw.value) == f"{sweep}:4: key `grid.disk`: {text}"


def test_default_disk_is_the_cli_default(job_path):
    assert headway.DEFAULT_DISK in headway.disks()
    p = cli("simulate", "--help")
    assert f"[default: {headway.DEFAULT_DISK}]" in p.stdout


@pytest.mark.parametrize(
    "flag, keyword, value",
    [("--drive-scheduler", "drive_scheduler", "elevator"), ("--write-cache", "write_cache", "sometimes")],
)
def test_a_bad_option_word_reads_the_same_from_the_cli_and_python(job_path, flag, keyword, value):
    """A mode or option enum has one FromStr and one error text; the command line prefixes
    the flag, Python the keyword."""
    p = cli("simulate", str(job_path), flag, value)
    assert p.returncode == 2
    line = p.stderr.strip().splitlines()[-1]
    assert f"{flag}: `{value}` is not a " in line, line
    core = line.split(f"{flag}: ", 1)[1]
    with pytest.raises(headway.SettingError) as py:
        headway.simulate(job_path, **{keyword: value})
    assert str(py.value) == f"{keyword}: {core}"


def test_tunables_and_default_schedulers_come_from_the_table():
    """Python reads the same table as `headway tunables` and the CLI's defaults."""
    rows = headway.tunables()
    p = cli("tunables")
    assert p.returncode == 0
    listed = [line.split()[0] for line in p.stdout.strip().splitlines()[1:]]
    assert [t.name for t in rows] == listed
    re_ = {t.name: t for t in rows if t.read_by == "deadline, mq-deadline"}
    assert re_["read_expire"].default == "500" and "ms" in re_["read_expire"].unit
    assert any(t.name == "read_expire" and t.read_by == "as" and t.default == "125" for t in rows)
    h = cli("simulate", "--help").stdout
    assert f"[default: {','.join(headway.DEFAULT_SCHEDULERS)}]" in h
