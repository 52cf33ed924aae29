//! fio's terse output, version 3 (`--output-format terse`, fio 3.33's default
//! `--terse-version=3`): one semicolon-separated line per entry of the run's `jobs`, the
//! fields of `man fio`'s "TERSE OUTPUT":
//!
//! `3;fio-3.33;name;groupid;error`, then for reads and for writes (version 3 has no trim
//! fields) `KiB;KiB/s;IOPS;runtime ms`, submission latency `min;max;mean;deviation`,
//! completion latency likewise, 20 percentile fields `P%=V` (fio's list, then `0%=0` up to
//! 20), total latency `min;max;mean;deviation` (latencies in µs, as fio divides its ns by
//! 1000: integers truncated, means with six decimals), bandwidth samples
//! `min;max;share%;mean;deviation` (KiB/s); CPU `usr%;sys%;ctx;majf;minf`; the 7 I/O
//! depth shares; the 10 µs latency ranges (the ns ranges counted in the first, as fio
//! does to keep the format) and the 12 ms ranges; then each disk's
//! `name;read ios;write ios;read merges;write merges;read ticks;write ticks;in_queue;util%`,
//! and the job's `description` when it has one. A job with its disk is 130 fields.
//!
//! Where a simulation's output necessarily differs from fio's: CPU figures, errors and
//! context switches are zero; submission latencies are zero (fio's `lat` is `clat` here);
//! the disk fields are the simulated drive's (see [`super`]).

use std::fmt::Write as _;

use super::json::FIO_VERSION;
use super::normal::{depth_dist, description, lat_dist, total_ios};
use super::stat::SampleStat;
use super::{DirStats, JobStats, RunStats};
use crate::fio::JobFile;

/// Percentile fields of a direction (fio's `FIO_IO_U_LIST_MAX_LEN`).
const PERCENTILE_FIELDS: usize = 20;

/// One run's terse lines.
pub fn document(run: &RunStats, file: &JobFile) -> String {
    let mut s = String::new();
    for j in &run.jobs {
        line(&mut s, j, run, file);
    }
    s
}

fn line(s: &mut String, j: &JobStats, run: &RunStats, file: &JobFile) {
    let _ = write!(s, "3;{FIO_VERSION};{};{};0", j.name, j.groupid);
    let group = run.groups.iter().find(|g| g.groupid == j.groupid);
    let mut percentiles = j.percentiles.clone();
    percentiles.sort_by(f64::total_cmp);
    percentiles.truncate(PERCENTILE_FIELDS);
    for (i, d) in j.dirs.iter().enumerate().take(2) {
        dir(s, d, group.map_or(0, |g| g.dirs[i].agg_bw), &percentiles);
    }
    s.push_str(";0.000000%;0.000000%;0;0;0");
    let total = total_ios(j);
    for p in depth_dist(&j.depth, total) {
        let _ = write!(s, ";{p:3.1}%");
    }
    let lat = lat_dist(&j.lat_ranges, total);
    // the ns ranges go to the first µs range, unfloored; 0/0 (no I/O) is C's -nan
    let ns: u64 = j.lat_ranges[..10].iter().sum();
    let first_us = lat[10] + 100.0 * ns as f64 / total as f64;
    for p in std::iter::once(first_us).chain(lat[11..].iter().copied()) {
        if p.is_nan() {
            s.push_str(";-nan%");
        } else {
            let _ = write!(s, ";{p:3.2}%");
        }
    }
    for d in &run.disk_util {
        let _ = write!(
            s,
            ";{};{};{};{};{};{};{};{};{:3.2}%",
            d.name, d.ios[0], d.ios[1], d.merges[0], d.merges[1], d.ticks[0], d.ticks[1], d.in_queue, d.util
        );
    }
    if let Some(desc) = description(file, &file.jobs[j.spec]) {
        let _ = write!(s, ";{desc}");
    }
    s.push('\n');
}

/// A latency's `;min;max;mean;dev` in µs from ns (zeros without samples).
fn lat_fields(s: &mut String, st: &SampleStat) {
    if st.n == 0 {
        s.push_str(";0;0;0.000000;0.000000");
    } else {
        let _ = write!(
            s,
            ";{};{};{:.6};{:.6}",
            st.min / 1000,
            st.max / 1000,
            st.mean() / 1000.0,
            st.stddev() / 1000.0
        );
    }
}

/// One direction's 41 fields; `group_bw`: its group's bandwidth, bytes/s.
fn dir(s: &mut String, d: &DirStats, group_bw: u64, percentiles: &[f64]) {
    // 0 without a runtime
    let bw = (d.io_bytes * 1000).checked_div(d.runtime_ms).map_or(0, |b| b / 1024);
    let iops = (d.total_ios * 1000).checked_div(d.runtime_ms).unwrap_or(0);
    let _ = write!(s, ";{};{bw};{iops};{}", d.io_bytes >> 10, d.runtime_ms);
    lat_fields(s, &d.slat);
    lat_fields(s, &d.clat);
    // without samples fio's percentile walk stops at its first bucket: all 0
    for i in 0..PERCENTILE_FIELDS {
        match percentiles.get(i) {
            Some(&p) => {
                let v = if d.clat.n == 0 { 0 } else { d.percentile(p) };
                let _ = write!(s, ";{p:.6}%={}", v / 1000);
            }
            None => s.push_str(";0%=0"),
        }
    }
    lat_fields(s, &d.clat);
    let st = &d.bw;
    if st.n == 0 {
        s.push_str(";0;0;0.000000%;0.000000;0.000000");
    } else {
        // the share against the group's bandwidth in whole KiB/s (fio's terse arithmetic)
        let kib = group_bw / 1024;
        let per = if group_bw == 0 || kib == 0 { 100.0 } else { (st.mean() * 100.0 / kib as f64).min(100.0) };
        let _ = write!(s, ";{};{};{per:.6}%;{:.6};{:.6}", st.min, st.max, st.mean(), st.stddev());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio_out::normal::tests::{file, real_run, stat};

    /// The terse line of the real fio 3.33 run behind [`real_run`].
    const REAL_TERSE: &str = "3;fio-3.33;r;0;0;48;48000;12000;1;3;74;11.349583;20.707036;50;276;115.379917;87.225040;\
1.000000%=50;5.000000%=50;10.000000%=56;20.000000%=61;30.000000%=63;40.000000%=68;50.000000%=70;60.000000%=79;\
70.000000%=92;80.000000%=220;90.000000%=276;95.000000%=276;99.000000%=276;99.500000%=276;99.900000%=276;\
99.950000%=276;99.990000%=276;0%=0;0%=0;0%=0;53;293;126.729500;96.352421;14812;81292;100.000000%;50437.833333;\
22760.254376;48;48000;12000;1;3;15;8.557917;5.637387;34;266;90.142083;60.170485;1.000000%=34;5.000000%=34;\
10.000000%=42;20.000000%=51;30.000000%=51;40.000000%=84;50.000000%=87;60.000000%=89;70.000000%=92;80.000000%=93;\
90.000000%=99;95.000000%=268;99.000000%=268;99.500000%=268;99.900000%=268;99.950000%=268;99.990000%=268;0%=0;0%=0;\
0%=0;37;281;98.700000;62.731356;15342;119622;100.000000%;58965.250000;28919.433457;0.000000%;0.000000%;11;0;55;\
4.2%;8.3%;87.5%;0.0%;0.0%;0.0%;0.0%;0.00%;0.00%;0.00%;0.00%;8.33%;75.00%;4.17%;12.50%;0.00%;0.00%;0.00%;0.00%;\
0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;vda;0;0;0;0;0;0;0;0.00%\n";

    #[test]
    fn a_real_run_prints_as_fio_printed_it() {
        let (run, file) = real_run();
        // what a simulation cannot reproduce: CPU use, and `lat` (`clat` here: no
        // submission time)
        let expected = REAL_TERSE
            .replace(";53;293;126.729500;96.352421;", ";50;276;115.379917;87.225040;")
            .replace(";37;281;98.700000;62.731356;", ";34;266;90.142083;60.170485;")
            .replace(";0.000000%;0.000000%;11;0;55;", ";0.000000%;0.000000%;0;0;0;");
        let got = document(&run, &file);
        assert_eq!(got, expected);
        // as many fields as fio's line for a job and its disk
        assert_eq!(got.trim_end().split(';').count(), 130);
        assert_eq!(REAL_TERSE.trim_end().split(';').count(), 130);
    }

    #[test]
    fn one_line_per_entry_disks_and_description_at_the_end() {
        let (mut run, _) = real_run();
        let file = file("[r]\nrw=randrw\ndescription=hello world\n");
        let mut second = run.jobs[0].clone();
        second.name = "s".into();
        run.jobs.push(second);
        let mut disk2 = run.disk_util[0].clone();
        disk2.name = "sdb".into();
        (disk2.ios, disk2.util) = ([5, 7], 61.538462);
        run.disk_util.push(disk2);
        let got = document(&run, &file);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[1].starts_with("3;fio-3.33;s;0;0;48;48000;12000;1;"), "{}", lines[1]);
        for l in lines {
            assert!(l.ends_with(";vda;0;0;0;0;0;0;0;0.00%;sdb;5;7;0;0;0;0;0;61.54%;hello world"), "{l}");
            assert_eq!(l.split(';').count(), 130 + 9 + 1);
        }
    }

    #[test]
    fn percentile_fields_and_a_job_without_io() {
        let (mut run, file) = real_run();
        // fio with `percentile_list=50:99.999:1.5:10`: its four, then `0%=0` to 20 fields
        let j = &mut run.jobs[0];
        j.percentiles = vec![50.0, 99.999, 1.5, 10.0];
        let d = &mut j.dirs[0];
        d.hist = headway_sched::hist::Histogram::default();
        (0..99).for_each(|_| d.hist.record(9));
        d.hist.record(21_000);
        let got = document(&run, &file);
        let zeros = ";0%=0".repeat(16);
        assert!(
            got.contains(&format!(";1.500000%=0;10.000000%=0;50.000000%=0;99.999000%=21{zeros};")),
            "{got}"
        );
        assert_eq!(got.trim_end().split(';').count(), 130);

        // nothing done: fio's percentile walk gives 0s, and its first µs range is 0/0
        let j = &mut run.jobs[0];
        j.dirs = Default::default();
        j.lat_ranges = [0; 32];
        j.depth = [0; 7];
        let got = document(&run, &file);
        assert!(got.starts_with("3;fio-3.33;r;0;0;0;0;0;0;0;0;0.000000;0.000000;0;0;0.000000;0.000000;1.500000%=0;10.000000%=0;50.000000%=0;99.999000%=0;0%=0;"));
        assert!(got.contains(";0;0;0.000000%;0.000000;0.000000;0.000000%;0.000000%;0;0;0;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%;-nan%;0.00%;"));
        assert_eq!(got.trim_end().split(';').count(), 130);
    }

    #[test]
    fn nanosecond_ranges_count_in_the_first_microsecond_range() {
        // as fio keeps the terse format: its null engine gave `100.01%;0.01%;...`
        let (mut run, file) = real_run();
        let j = &mut run.jobs[0];
        j.lat_ranges = [0; 32];
        (j.lat_ranges[4], j.lat_ranges[10], j.lat_ranges[12]) = (9998, 1, 1);
        j.dirs[0].total_ios = 5000;
        j.dirs[1].total_ios = 5000;
        let got = document(&run, &file);
        let fields: Vec<&str> = got.trim_end().split(';').collect();
        // after the 7 depths: 10 µs ranges, 12 ms ranges
        assert_eq!(fields[99..102], ["99.99%", "0.00%", "0.01%"]);
        assert!(fields[102..121].iter().all(|f| *f == "0.00%"), "{got}");
    }

    #[test]
    fn bandwidth_share_uses_the_group_rate_in_whole_kib() {
        // fio's terse share: mean * 100 / (group bytes/s / 1024, an integer)
        let mut s = String::new();
        let d = DirStats { bw: stat(&[280, 296]), runtime_ms: 1251, ..DirStats::default() };
        dir(&mut s, &d, 297_945, &[]);
        assert!(s.ends_with(";280;296;99.310345%;288.000000;11.313708"), "{s}");
        let mut s = String::new();
        dir(&mut s, &d, 0, &[]);
        assert!(s.ends_with(";280;296;100.000000%;288.000000;11.313708"), "{s}");
    }
}
