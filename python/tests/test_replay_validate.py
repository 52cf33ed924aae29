"""headway.replay and headway.validate from Python: the same bytes as the command line,
the same requests in two trace formats give the same result, DiskSim drives as disk=,
errors with file and line."""

import json
import math

import pytest

import headway
from test_simulate import cli

VALID = "data/disksim-valid"


def traces():
    """Two processes reading 4 KiB sequentially, 100 GiB apart, one request a millisecond:
    (blkparse text, fio iolog v3)."""
    blk, log = [], ["fio version 3 iolog", "0 dd[10] add", "0 cat[20] add"]
    for i in range(120):
        name, pid, base = ("dd", 10, 0) if i % 2 == 0 else ("cat", 20, 100 << 30)
        sector = base // 512 + (i // 2) * 8
        t = f"{i // 1000:>5}.{(i % 1000) * 1_000_000:09}"
        blk.append(f"  8,16   0 {i + 1:>8} {t} {pid:>5}  Q  RS {sector} + 8 [{name}]")
        log.append(f"{i * 1000} {name}[{pid}] read {sector * 512} 4096")  # microseconds, as fio writes
    return "\n".join(blk) + "\n", "\n".join(log) + "\n"


@pytest.fixture
def trace_files(tmp_path):
    blk, log = traces()
    b, l = tmp_path / "t.blk", tmp_path / "t.iolog"
    b.write_text(blk)
    l.write_text(log)
    return b, l


def test_replay_is_the_cli_byte_for_byte(trace_files, tmp_path):
    b, _ = trace_files
    out, csv = tmp_path / "cli.json", tmp_path / "cli.csv"
    p = cli("replay", str(b), "--format", "blkparse", "--mode", "closed", "--scheduler", "deadline,stream",
            "--json", str(out), "--per-request", str(csv), "--quiet")
    assert p.returncode == 0, p.stderr
    pcsv = tmp_path / "py.csv"
    res = headway.replay(b, format="blkparse", mode="closed", schedulers="deadline,stream", per_request=pcsv)
    assert res.raw == out.read_text()
    assert pcsv.read_bytes() == csv.read_bytes()
    assert res.schedulers == ["deadline", "stream:deadline"]
    assert res.trace == {"mode": "closed", "records": 120, "bytes": 120 * 4096, "flushes": 0, "contexts": 2, "ignored": 0,
                         "bad": 0, "wrapped": 0, "window_stalls": 0, "window_stall_ns": 0,
                         "peak_buffered": res.trace["peak_buffered"]}
    df = res.to_pandas()
    assert set(df.job) == {"dd[10]", "cat[20]"}
    assert (df.groupby("scheduler").read_io_bytes.sum() == 120 * 4096).all()


def test_replay_blkparse_and_iolog_agree(trace_files):
    b, l = trace_files
    for mode in ("open", "closed"):
        rb = headway.replay(b, format="blkparse", mode=mode, schedulers=["deadline", "stream"])
        rl = headway.replay(l, format="iolog", mode=mode, schedulers=["deadline", "stream"])
        assert rb.raw == rl.raw, mode
        assert rb.trace["mode"] == mode


def test_replay_errors_name_file_and_line(trace_files, tmp_path):
    b, _ = trace_files
    bad = tmp_path / "bad.blk"
    lines = b.read_text().splitlines()
    lines[4] = "  8,16   0        5     0.004000000    10  Q  RS notanumber + 8 [dd]"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(headway.TraceFileError) as e:
        headway.replay(bad, format="blkparse", schedulers="noop")
    assert e.value.file == str(bad) and e.value.line == 5
    assert str(bad) + ":5:" in str(e.value)
    skipped = headway.replay(bad, format="blkparse", schedulers="noop", skip_bad=True)
    assert skipped.trace["bad"] == 1 and skipped.trace["records"] == 119
    with pytest.raises(headway.TraceFileError) as e:
        headway.replay(tmp_path / "missing.blk", format="blkparse", schedulers="noop")
    assert e.value.line is None
    with pytest.raises(headway.SettingError, match="format: `nope` is not a trace format"):
        headway.replay(b, format="nope")
    with pytest.raises(headway.SettingError, match="mode: `half` is not a replay mode"):
        headway.replay(b, format="blkparse", mode="half")
    with pytest.raises(headway.SettingError, match="`vm` is not a context of a trace"):
        headway.replay(b, format="blkparse", context="vm")


@pytest.fixture
def valid(root):
    d = root / VALID
    if not d.is_dir():
        pytest.fail(f"{d} (the DiskSim reference data, data/ in the repository) is missing")
    return d


def test_validate_is_the_cli(valid, tmp_path):
    parv, trace = valid / "cheetah9LP.parv", valid / "cheetah9LP.trace"
    out, csv = tmp_path / "v.json", tmp_path / "v.csv"
    p = cli("validate", str(parv), str(trace), "--json", str(out), "--per-request", str(csv))
    assert p.returncode == 0, p.stderr
    v = headway.validate(parv, trace)
    assert v.raw == out.read_text()
    v.save_per_request(tmp_path / "py.csv")
    assert (tmp_path / "py.csv").read_bytes() == csv.read_bytes()
    assert v.drive == json.loads(v.raw)["drive"] and v.requests == 10_000

    df = v.to_pandas()
    assert len(df) == v.requests
    assert math.isclose(df.simulated_ms.mean(), v.mean_simulated_ms, rel_tol=1e-6)
    assert math.isclose(df.measured_ms.mean(), v.mean_measured_ms, rel_tol=1e-6)
    parts = v.parts().set_index("part")
    assert parts.loc["reads", "requests"] + parts.loc["writes", "requests"] == v.requests
    # every part's table row is the CLI's (3 decimals)
    for name, row in parts.iterrows():
        assert f"{name:<22} {int(row.requests):>8} {row.demerit_ms:>12.3f}" in p.stdout, name

    png = tmp_path / "cdf.png"
    v.plot(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_validate_directory_scores_every_pair(valid):
    vs = headway.validate(valid)
    assert len(vs) == 6
    assert all(0 < v.demerit_ms < 1 for v in vs)
    with pytest.raises(TypeError):
        headway.validate(valid / "ibm18es.parv")


def test_validate_errors_name_file_and_line(valid, tmp_path):
    t = tmp_path / "t.trace"
    t.write_text("R Hit 10 4 1000.0 2000.0\nR Hit 10 x 1000.0 2000.0\n")
    with pytest.raises(headway.TraceFileError) as e:
        headway.validate(valid / "ibm18es.parv", t)
    assert (e.value.file, e.value.line) == (str(t), 2)
    assert "bad bcount `x`" in str(e.value)
    d = tmp_path / "bad.diskspecs"
    d.write_text("disksim_disk X {\n  Model = 3,\n  Frobnicate = 1\n}\n")
    with pytest.raises(headway.DriveFileError) as e:
        headway.validate(d, t)
    assert e.value.file is not None and str(d) in str(e.value)


def test_simulate_on_a_disksim_drive(valid, tmp_path):
    job = tmp_path / "r.fio"
    job.write_text("[r]\nrw=randread\nbs=4k\nsize=64m\nnumjobs=2\nio_size=400k\n")
    parv = str(valid / "cheetah9LP.parv")
    res = headway.simulate(job, disk=parv, schedulers="noop", head_trace=0)
    out = tmp_path / "cli.json"
    p = cli("simulate", str(job), "--disk", parv, "--scheduler", "noop", "--json", str(out), "--quiet")
    assert p.returncode == 0, p.stderr
    assert res.raw == out.read_text()
    assert res.runs[0]["aggregate"]["io_bytes"] == 2 * 400 * 1024
    with pytest.raises(headway.UnknownNameError, match="parv"):
        headway.simulate(job, disk="no-such-drive")
    bad = tmp_path / "bad.parv"
    bad.write_text("disksim_disk X {\n  Frobnicate = 1\n}\n")
    with pytest.raises(headway.DriveFileError) as e:
        headway.simulate(job, disk=str(bad))
    assert e.value.file == str(bad)


def test_fio_options_and_syncs_reach_the_dataframe():
    job = (
        "[w]\nrw=randwrite\ndirect=1\nsize=1g\nnumber_ios=200\nfsync=4\nbssplit=4k/50:16k/50\n"
        "[r]\nrw=randread\ndirect=1\nsize=1g\nnumber_ios=200\nrandom_distribution=zipf:1.1\n"
    )
    res = headway.simulate(job, schedulers="noop", write_cache="back", head_trace=0)
    df = res.to_pandas().set_index("job")
    assert df.loc["w", "sync_total_ios"] == 50
    assert df.loc["w", "sync_lat_mean_ns"] > 0
    assert math.isnan(df.loc["r", "sync_total_ios"])
    # bssplit: 4 and 16 KiB writes, 10 KiB on average
    mean = df.loc["w", "write_io_bytes"] / df.loc["w", "write_total_ios"]
    assert 8000 < mean < 12500


def test_a_disksim_trace_on_a_system_of_several_devices_is_the_cli_byte_for_byte(tmp_path):
    """DiskSim's ascii.parv: 18 drives, its disksim_iosim maps trace devices 14, 18 and 10
    onto disk0-disk2; the Python replay routes the trace as the command line does, and
    its `disksim` scheduler takes the file's driver queue (here made FCFS) as the command
    line's does."""
    import shutil
    for f in ("hp_c2249a.diskspecs", "hp_c2249a.model"):
        shutil.copy(f"data/disksim4-dist/{f}", tmp_path / f)
    text = open("data/disksim4-dist/ascii.parv").read()
    assert text.count("Scheduling policy = 3,") == 1
    parv = str(tmp_path / "ascii.parv")
    open(parv, "w").write(text.replace("Scheduling policy = 3,", "Scheduling policy = 1,"))
    lines = [f"{i * 1.5:.6f}\t{(14, 18, 10)[i % 3]}\t{(i * 7919 * 37) % 2000000}\t{1 + i % 16}\t{i % 2}"
             for i in range(90)]
    t = tmp_path / "t.trace"
    t.write_text("\n".join(lines) + "\n")
    out, csv = tmp_path / "cli.json", tmp_path / "cli.csv"
    p = cli("replay", str(t), "--format", "disksim", "--disk", parv, "--scheduler", "noop,disksim",
            "--json", str(out), "--per-request", str(csv), "--quiet")
    assert p.returncode == 0, p.stderr
    pcsv = tmp_path / "py.csv"
    res = headway.replay(t, format="disksim", disk=parv, schedulers="noop,disksim", per_request=pcsv)
    assert res.raw == out.read_text()
    assert pcsv.read_bytes() == csv.read_bytes()
    # three devices answered: each request's device is in its offset from bit 49 up
    rows = csv.read_text().splitlines()[1:]
    assert {int(r.split(",")[4]) >> 49 for r in rows} == {0, 1, 2}
    assert json.loads(res.raw)["runs"][0]["disk"].startswith("ascii#disk0, ascii#disk1, ascii#disk2")
    # the file's FCFS is not the scheduler's own default (CYCLE_LBN): the order shows
    cycle = headway.replay(t, format="disksim", disk="data/disksim4-dist/ascii.parv", schedulers="disksim")
    fcfs = json.loads(res.raw)["runs"][1]["jobs"]
    assert [j["read"]["clat_ns"]["mean"] for j in fcfs] != \
        [j["read"]["clat_ns"]["mean"] for j in json.loads(cycle.raw)["runs"][0]["jobs"]]
