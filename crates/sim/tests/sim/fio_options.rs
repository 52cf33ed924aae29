//! fio job options that shape the workload, end to end through the simulator: block-size
//! mixes (`bssplit`, `bsrange`), skewed offsets (`random_distribution`), bandwidth caps
//! (`rate`, `rate_process`), `number_ios`, `loops`, percentage regions, `ramp_time`,
//! `exitall`, `percentile_list`, `iodepth_low`, `fsync`, `end_fsync` and `sync`. Each checks what the report shows
//! against what the option asks for.

use headway_sim::{simulate, ContextMode, RunReport};

use crate::common;

fn one(text: &str, sched: &str) -> RunReport {
    let cfg = common::config(text, "wd5000aaks", &[sched], ContextMode::Process, 1);
    simulate(&cfg, |_, _| {}).expect("simulation runs").runs.remove(0)
}

#[test]
fn bssplit_mix_shows_in_the_mean_request_size() {
    // 80% 4 KiB, 20% 64 KiB: 16 KiB mean
    let r = one("[j]\nrw=randread\ndirect=1\nsize=1g\nbssplit=4k/80:64k/20\nnumber_ios=4000\n", "noop");
    let read = &r.jobs[0].read;
    assert_eq!(read.total_ios, 4000);
    let mean = read.io_bytes as f64 / read.total_ios as f64;
    assert!((15_000.0..17_800.0).contains(&mean), "mean request {mean} bytes, 16384 asked");
    // bsrange 4k-16k: sizes 4, 8, 12, 16 KiB alike, 10 KiB mean
    let r = one("[j]\nrw=read\ndirect=1\nsize=64m\nbsrange=4k-16k\nnumber_ios=4000\n", "noop");
    let mean = r.jobs[0].read.io_bytes as f64 / 4000.0;
    assert!((9_700.0..10_800.0).contains(&mean), "mean request {mean} bytes, 10240 asked");
}

#[test]
fn a_zipf_hot_set_is_served_faster_than_uniform_offsets() {
    // The same random reads over 4 GiB: with a zipf hot set the drive's cache serves the
    // hottest blocks again; uniform offsets rarely repeat. Measured 2026-11-22 (noop, depth
    // 1): uniform 153.6 IOPS, zipf:1.2 239.0 IOPS (1.56x).
    let job = |dist: &str| {
        format!("[j]\nrw=randread\ndirect=1\nsize=4g\nnumber_ios=3000\nrandom_distribution={dist}\n")
    };
    let uniform = one(&job("random"), "noop").aggregate.iops;
    let zipf = one(&job("zipf:1.2"), "noop").aggregate.iops;
    assert!(zipf > 1.2 * uniform, "zipf {zipf:.0} IOPS vs uniform {uniform:.0}");
}

#[test]
fn rate_caps_a_job_s_bandwidth() {
    // a sequential reader the disk could serve at ~100 MB/s, capped at 4 MiB/s for 2 s
    let r = one("[j]\nrw=read\ndirect=1\nbs=64k\nsize=1g\nrate=4m\nruntime=2\ntime_based\n", "noop");
    let bw = r.jobs[0].read.bw_bytes as f64;
    assert!((3.7e6..=4.25e6).contains(&bw), "{bw} bytes/s, 4 MiB/s asked");
    // with rate_iops too, the tighter cap holds: 10 x 64 KiB = 640 KiB/s
    let r = one(
        "[j]\nrw=read\ndirect=1\nbs=64k\nsize=1g\nrate=4m\nrate_iops=10\nruntime=2\ntime_based\n",
        "noop",
    );
    let bw = r.jobs[0].read.bw_bytes as f64;
    assert!((0.55e6..=0.7e6).contains(&bw), "{bw} bytes/s, 640 KiB/s asked");
}

#[test]
fn loops_and_percentage_regions_set_the_bytes() {
    let r = one("[j]\nrw=read\ndirect=1\nbs=1m\nsize=8m\nloops=3\n", "noop");
    assert_eq!(r.jobs[0].read.io_bytes, 24 << 20);
    // wd5000aaks: 1% of the disk (in whole 1 MiB blocks), read once
    let r = one("[j]\nrw=read\ndirect=1\nbs=1m\nsize=1%\noffset=50%\n", "noop");
    let want = 976_773_168u64 * 512 / 100;
    let got = r.jobs[0].read.io_bytes;
    assert!(got <= want && want - got < 1 << 20, "{got} bytes read, 1% of the disk is {want}");
}

#[test]
fn ramp_time_runs_first_and_measures_after() {
    let text = "[j]\nrw=randread\ndirect=1\nruntime=2\ntime_based\n";
    let plain = one(text, "noop");
    let ramped = one(&format!("{text}ramp_time=1\n"), "noop");
    let (p, r) = (&plain.jobs[0], &ramped.jobs[0]);
    // the same 2 s measured (plus the last request's completion), after a 1 s ramp
    for rt in [p.job_runtime, r.job_runtime] {
        assert!((2000..2050).contains(&rt), "{rt} ms");
    }
    let ratio = r.read.total_ios as f64 / p.read.total_ios as f64;
    assert!((0.9..1.1).contains(&ratio), "{} vs {} I/Os measured", r.read.total_ios, p.read.total_ios);
    assert!((r.read.iops - p.read.iops).abs() < 0.1 * p.read.iops);
    // the drive worked through the ramp too: its figures cover the whole 3 s run
    assert!(
        ramped.device.utilization <= 1.0
            && ramped.device.requests as f64 > 1.4 * plain.device.requests as f64
    );
    // a ramp longer than the job leaves nothing measured
    let r = one("[j]\nrw=read\ndirect=1\nsize=8m\nramp_time=10\n", "noop");
    assert_eq!((r.jobs[0].read.total_ios, r.aggregate.io_bytes), (0, 0));
}

#[test]
fn poisson_arrivals_queue_where_evenly_spaced_ones_do_not() {
    // 100 random reads a second at ~6.5 ms each: the disk is 65% busy either way, but
    // Poisson arrivals bunch up and wait (M/G/1). Measured 2026-11-22 over 60 s: linear
    // 6.55 ms mean completion latency, poisson 13.28 ms (2.0x); 100 and 99 IOPS.
    let job = |p: &str| {
        format!(
            "[j]\nrw=randread\ndirect=1\nioengine=libaio\niodepth=64\nsize=4g\nrate_iops=100\n\
             rate_process={p}\nruntime=20\ntime_based\n"
        )
    };
    let (lin, poi) = (one(&job("linear"), "noop"), one(&job("poisson"), "noop"));
    for r in [&lin, &poi] {
        assert!((95.0..=101.0).contains(&r.aggregate.iops), "{} IOPS, 100 asked", r.aggregate.iops);
    }
    let (l, p) = (lin.aggregate.clat_ns.mean, poi.aggregate.clat_ns.mean);
    assert!(p > 1.5 * l, "poisson {p:.0} ns vs linear {l:.0} ns mean latency");
}

#[test]
fn exitall_stops_the_group_when_one_job_finishes() {
    // a 4 MiB reader with exitall beside a reader set to run for 10 s; a later group
    // (stonewall) is not stopped
    let text = "[short]\nrw=read\ndirect=1\nsize=4m\nexitall\n\
                [long]\nrw=randread\ndirect=1\nsize=1g\nruntime=10\ntime_based\n\
                [after]\nstonewall\nrw=read\ndirect=1\nsize=4m\n";
    let r = one(text, "noop");
    let (short, long, after) = (&r.jobs[0], &r.jobs[1], &r.jobs[2]);
    assert_eq!(short.read.io_bytes, 4 << 20);
    assert!(
        long.job_runtime <= short.job_runtime + 50,
        "long ran {} ms, short {} ms",
        long.job_runtime,
        short.job_runtime
    );
    assert!(long.read.total_ios > 0);
    assert_eq!(after.read.io_bytes, 4 << 20);
    // without exitall the long job runs its 10 s
    let r = one(&text.replace("exitall\n", ""), "noop");
    assert!(r.jobs[1].job_runtime >= 10_000);
}

#[test]
fn percentile_list_sets_a_job_s_reported_percentiles() {
    let text = "[a]\nrw=randread\ndirect=1\nsize=1g\nnumber_ios=500\npercentile_list=50:99.99:99\n\
                [b]\nrw=randread\ndirect=1\nsize=1g\nnumber_ios=500\n";
    let r = one(text, "noop");
    let keys = |j: usize| r.jobs[j].read.clat_ns.percentile.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(0), ["50.000000", "99.000000", "99.990000"]);
    assert_eq!(keys(1).len(), headway_sim::report::PERCENTILES.len());
    let p = &r.jobs[0].read.clat_ns.percentile;
    assert!(p["50.000000"] <= p["99.000000"] && p["99.000000"] <= p["99.990000"]);
    // the aggregate keeps fio's default list
    assert_eq!(r.aggregate.clat_ns.percentile.len(), headway_sim::report::PERCENTILES.len());
}

#[test]
fn iodepth_low_lets_the_queue_drain_before_refilling() {
    let job = |extra: &str| {
        format!("[j]\nrw=randread\ndirect=1\nioengine=libaio\niodepth=16\nsize=4g\nnumber_ios=3000\n{extra}")
    };
    let cfg = |text: &str| {
        let mut c = common::config(text, "wd5000aaks", &["noop"], ContextMode::Process, 1);
        c.run.drive = headway_disk::DriveConfig { queue_depth: 32, ..Default::default() };
        c
    };
    let run = |text: &str| simulate(&cfg(text), |_, _| {}).unwrap().runs.remove(0);
    let (full, low) = (run(&job("")), run(&job("iodepth_low=2\n")));
    assert_eq!(full.jobs[0].read.total_ios, 3000);
    assert_eq!(low.jobs[0].read.total_ios, 3000);
    // the drive holds ~16 commands when the job keeps its queue full, fewer when it drains
    // to 2 before refilling, and its SPTF has less to choose from. Measured 2026-11-22:
    // 15.9 commands and 316 IOPS full, 9.1 and 262 IOPS with iodepth_low=2.
    let (f, l) = (full.device.queue_occupancy, low.device.queue_occupancy);
    assert!(f > 14.0 && l < 0.7 * f, "commands in the drive: full {f:.1}, iodepth_low=2 {l:.1}");
    assert!(low.aggregate.iops < 0.9 * full.aggregate.iops);
}

fn on(text: &str, write_cache: headway_disk::WriteCache) -> RunReport {
    let mut cfg = common::config(text, "wd5000aaks", &["noop"], ContextMode::Process, 1);
    cfg.run.drive = headway_disk::DriveConfig { write_cache, ..Default::default() };
    simulate(&cfg, |_, _| {}).unwrap().runs.remove(0)
}

#[test]
fn fsync_flushes_the_drive_s_write_cache() {
    use headway_disk::WriteCache::{Back, Through};
    // 2,000 random 4 KiB writes. Measured 2026-11-22 (IOPS over the job's runtime, syncs
    // included; mean sync latency): write-back 364 IOPS without syncs; fsync=1 152 IOPS,
    // 6.36 ms a sync (every write waits for its destage); fsync=8 197 IOPS, 39.1 ms a sync
    // (eight destages). Write-through: 148 IOPS with or without, syncs take no time.
    let job = |extra: &str| format!("[j]\nrw=randwrite\ndirect=1\nsize=4g\nnumber_ios=2000\n{extra}");
    let none = on(&job(""), Back);
    let every = on(&job("fsync=1\n"), Back);
    let eight = on(&job("fdatasync=8\n"), Back);
    assert!(none.jobs[0].sync.is_none(), "no sync section without syncs");
    let (s1, s8) = (every.jobs[0].sync.as_ref().unwrap(), eight.jobs[0].sync.as_ref().unwrap());
    assert_eq!((s1.total_ios, s8.total_ios), (2000, 250));
    // a sync waits for destages: about one write's media time, eight's for fsync=8
    assert!(
        s1.lat_ns.mean > 3e6 && s8.lat_ns.mean > 4.0 * s1.lat_ns.mean,
        "{} {}",
        s1.lat_ns.mean,
        s8.lat_ns.mean
    );
    let iops = |r: &RunReport| r.jobs[0].write.iops;
    assert!(iops(&every) < 0.5 * iops(&none) && iops(&every) < iops(&eight) && iops(&eight) < iops(&none));
    // write-through: nothing is dirty, the flush completes at once
    let wt = on(&job("fsync=1\n"), Through);
    assert_eq!(wt.jobs[0].sync.as_ref().unwrap().lat_ns.max, 0);
    let wt_none = on(&job(""), Through);
    assert!((iops(&wt) - iops(&wt_none)).abs() < 0.02 * iops(&wt_none));
}

#[test]
fn end_fsync_writes_back_the_page_cache_before_the_job_ends() {
    use headway_disk::WriteCache::Through;
    // 64 MiB of buffered writes: without a sync they are still dirty when the job ends
    // (headway reports them, it does not write them); with end_fsync the job ends when
    // they are on the disk
    let text = "[j]\nrw=write\nsize=64m\nbs=64k\n";
    let plain = on(text, Through);
    assert_eq!(plain.device.page_cache_dirty_bytes, 64 << 20);
    let synced = on(&format!("{text}end_fsync=1\n"), Through);
    assert_eq!(synced.device.page_cache_dirty_bytes, 0);
    let sync = synced.jobs[0].sync.as_ref().unwrap();
    assert_eq!(sync.total_ios, 1);
    // 64 MiB at the disk's ~100 MB/s: the sync takes most of a second, and the job with it
    assert!(sync.lat_ns.mean > 0.4e9, "{} ns", sync.lat_ns.mean);
    assert!(synced.jobs[0].job_runtime as f64 >= sync.lat_ns.mean / 1e6);
    assert!(synced.device.requests > 0);
}

#[test]
fn sync_writes_return_once_durable() {
    use headway_disk::WriteCache::{Back, Through};
    // Measured 2026-11-22 on wd5000aaks, 2,000 random 4 KiB direct writes: write-back
    // 2.72 ms mean completion latency, 6.54 ms with sync=1 (each write waits for its
    // destage; no separate sync section); write-through 6.72 ms either way. 16 MiB of
    // buffered 64 KiB writes: 0.001 ms each into the page cache, 8.92 ms with sync=1 (the
    // write back and the flush within each write), nothing left dirty.
    let job = |extra: &str| format!("[j]\nrw=randwrite\ndirect=1\nsize=4g\nnumber_ios=2000\n{extra}");
    let lat = |r: &RunReport| r.jobs[0].write.clat_ns.mean;
    let (wb, wb_sync) = (on(&job(""), Back), on(&job("sync=1\n"), Back));
    assert!(wb_sync.jobs[0].sync.is_none(), "the syncs are the writes' own");
    assert!(lat(&wb_sync) > 2.0 * lat(&wb), "{} vs {}", lat(&wb_sync), lat(&wb));
    assert_eq!(wb_sync.jobs[0].write.total_ios, 2000);
    let (wt, wt_sync) = (on(&job(""), Through), on(&job("sync=1\n"), Through));
    assert!((lat(&wt_sync) - lat(&wt)).abs() < 0.01 * lat(&wt));
    let buffered = |extra: &str| on(&format!("[j]\nrw=write\nsize=16m\nbs=64k\n{extra}"), Through);
    let (plain, synced) = (buffered(""), buffered("sync=1\n"));
    assert_eq!((plain.device.page_cache_dirty_bytes, synced.device.page_cache_dirty_bytes), (16 << 20, 0));
    assert!(lat(&synced) > 1000.0 * lat(&plain), "{} vs {}", lat(&synced), lat(&plain));
}
