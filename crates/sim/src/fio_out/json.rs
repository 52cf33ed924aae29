//! fio's JSON and json+ documents (`--output-format json`, `json+`), laid out as fio 3.33
//! prints them: keys in fio's order, `"key" : value`, two-space indents, floats with six
//! decimals, percentile keys in numeric order. json+ adds each latency section's `bins`
//! (bucket value in ns, fio's bucket midpoints, to count).
//!
//! The root holds fio's keys (`fio version`, `timestamp`, `timestamp_ms`, `time`,
//! `global options`, `jobs`, `disk_util`) and one of headway's: `"headway" : {"version",
//! "scheduler", "disk"}`, naming the run the document describes.

use std::fmt::Write as _;

use super::stat::{percents, BATCH_KEYS, DEPTH_KEYS, LAT_MS, LAT_NS};
use super::{DirStats, JobStats, RunStats, DIRS, FIO_BUCKETS};
use crate::fio::JobFile;

/// The fio version whose output headway's follows.
pub const FIO_VERSION: &str = "fio-3.33";

/// fio's `time` for timestamp 0 (simulated time starts at the epoch).
pub const EPOCH_TIME: &str = "Thu Jan  1 00:00:00 1970";

/// A JSON writer in fio's layout.
struct Out {
    s: String,
    /// Per open object or array: whether it has a member yet.
    open: Vec<bool>,
}

impl Out {
    fn new() -> Self {
        Out { s: String::new(), open: Vec::new() }
    }

    fn indent(&mut self) {
        for _ in 0..self.open.len() {
            self.s.push_str("  ");
        }
    }

    /// Start a member: a comma after the previous one, a new line, the key.
    fn member(&mut self, key: Option<&str>) {
        if let Some(first) = self.open.last_mut() {
            if std::mem::replace(first, true) {
                self.s.push(',');
            }
            self.s.push('\n');
        }
        self.indent();
        if let Some(k) = key {
            self.s.push_str(&quote(k));
            self.s.push_str(" : ");
        }
    }

    fn begin(&mut self, key: Option<&str>, bracket: char) {
        self.member(key);
        self.s.push(bracket);
        self.open.push(false);
    }

    fn end(&mut self, bracket: char) {
        let had = self.open.pop().expect("open");
        if had {
            self.s.push('\n');
            self.indent();
        }
        self.s.push(bracket);
    }

    fn obj(&mut self, key: &str) {
        self.begin(Some(key), '{');
    }

    fn int(&mut self, key: &str, v: impl std::fmt::Display) {
        self.member(Some(key));
        let _ = write!(self.s, "{v}");
    }

    fn float(&mut self, key: &str, v: f64) {
        self.member(Some(key));
        let _ = write!(self.s, "{v:.6}");
    }

    fn string(&mut self, key: &str, v: &str) {
        self.member(Some(key));
        self.s.push_str(&quote(v));
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// One run's document; `plus` for json+ (latency bins).
pub fn document(run: &RunStats, file: &JobFile, disk: &str, plus: bool) -> String {
    let mut o = Out::new();
    o.begin(None, '{');
    o.string("fio version", FIO_VERSION);
    o.int("timestamp", 0);
    o.int("timestamp_ms", 0);
    o.string("time", EPOCH_TIME);
    o.obj("global options");
    for (k, v) in &file.global_options {
        o.string(k, v);
    }
    o.end('}');
    o.begin(Some("jobs"), '[');
    for j in &run.jobs {
        job(&mut o, j, file, plus);
    }
    o.end(']');
    o.begin(Some("disk_util"), '[');
    for d in &run.disk_util {
        o.begin(None, '{');
        o.string("name", &d.name);
        o.int("read_ios", d.ios[0]);
        o.int("write_ios", d.ios[1]);
        o.int("read_merges", d.merges[0]);
        o.int("write_merges", d.merges[1]);
        o.int("read_ticks", d.ticks[0]);
        o.int("write_ticks", d.ticks[1]);
        o.int("in_queue", d.in_queue);
        o.float("util", d.util);
        o.end('}');
    }
    o.end(']');
    o.obj("headway");
    o.string("version", env!("CARGO_PKG_VERSION"));
    o.string("scheduler", &run.scheduler);
    o.string("disk", disk);
    o.end('}');
    o.end('}');
    o.s.push('\n');
    o.s
}

fn job(o: &mut Out, j: &JobStats, file: &JobFile, plus: bool) {
    o.begin(None, '{');
    o.string("jobname", &j.name);
    o.int("groupid", j.groupid);
    o.int("error", 0);
    o.int("eta", 0);
    o.int("elapsed", j.elapsed_s);
    o.obj("job options");
    for (k, v) in &file.jobs[j.spec].report.options {
        o.string(k, v);
    }
    o.end('}');
    for (d, name) in j.dirs.iter().zip(DIRS) {
        dir(o, name, d, &j.percentiles, plus);
    }
    o.obj("sync");
    o.int("total_ios", j.sync.total_ios);
    o.obj("lat_ns");
    o.int("min", j.sync.min);
    o.int("max", j.sync.max);
    o.float("mean", j.sync.mean);
    o.float("stddev", j.sync.stddev);
    o.int("N", j.sync.total_ios);
    if j.sync.total_ios > 0 {
        o.obj("percentile");
        for &(p, v) in &j.sync.percentiles {
            o.int(&format!("{p:.6}"), v);
        }
        o.end('}');
    }
    o.end('}');
    o.end('}');
    o.int("job_runtime", j.job_runtime_ms);
    o.float("usr_cpu", 0.0);
    o.float("sys_cpu", 0.0);
    o.int("ctx", 0);
    o.int("majf", 0);
    o.int("minf", 0);
    table(o, "iodepth_level", &DEPTH_KEYS, &percents(&j.depth));
    table(o, "iodepth_submit", &BATCH_KEYS, &percents(&j.submit));
    table(o, "iodepth_complete", &BATCH_KEYS, &percents(&j.complete));
    let all = percents(&j.lat_ranges);
    let ns_keys: Vec<String> = LAT_NS.iter().map(u64::to_string).collect();
    let mut ms_keys: Vec<String> = LAT_MS.iter().map(u64::to_string).collect();
    ms_keys.push(">=2000".into());
    let ns: Vec<&str> = ns_keys.iter().map(String::as_str).collect();
    let ms: Vec<&str> = ms_keys.iter().map(String::as_str).collect();
    table(o, "latency_ns", &ns, &all[..10]);
    table(o, "latency_us", &ns, &all[10..20]);
    table(o, "latency_ms", &ms, &all[20..]);
    // the option as written (fio prints it even where a synchronous engine makes it 1)
    let spec = &file.jobs[j.spec];
    let depth = super::normal::option(file, spec, "iodepth").and_then(|v| v.parse::<u64>().ok()).unwrap_or(1);
    o.int("latency_depth", depth);
    o.int("latency_target", 0);
    o.float("latency_percentile", 100.0);
    o.int("latency_window", 0);
    o.end('}');
}

fn table(o: &mut Out, key: &str, keys: &[&str], values: &[f64]) {
    o.obj(key);
    for (k, v) in keys.iter().zip(values) {
        o.float(k, *v);
    }
    o.end('}');
}

fn dir(o: &mut Out, name: &str, d: &DirStats, percentiles: &[f64], plus: bool) {
    o.obj(name);
    o.int("io_bytes", d.io_bytes);
    o.int("io_kbytes", d.io_bytes / 1024);
    o.int("bw_bytes", d.bw_bytes());
    o.int("bw", d.bw_bytes() / 1024);
    o.float("iops", d.iops());
    o.int("runtime", d.runtime_ms);
    o.int("total_ios", d.total_ios);
    o.int("short_ios", 0);
    o.int("drop_ios", 0);
    o.obj("slat_ns");
    o.int("min", d.slat.min);
    o.int("max", d.slat.max);
    o.float("mean", d.slat.mean());
    o.float("stddev", d.slat.stddev());
    o.int("N", d.slat.n);
    o.end('}');
    for (key, with_percentiles) in [("clat_ns", true), ("lat_ns", false)] {
        o.obj(key);
        o.int("min", d.clat.min);
        o.int("max", d.clat.max);
        o.float("mean", d.clat.mean());
        o.float("stddev", d.clat.stddev());
        o.int("N", d.clat.n);
        if with_percentiles && d.clat.n > 0 {
            o.obj("percentile");
            for &p in percentiles {
                o.int(&format!("{p:.6}"), d.percentile(p));
            }
            o.end('}');
            if plus {
                o.obj("bins");
                let counts = d.hist.buckets();
                for (b, &c) in counts.iter().enumerate().take(FIO_BUCKETS - 1).filter(|(_, &c)| c > 0) {
                    o.int(&headway_sched::hist::bucket_value(b).to_string(), c);
                }
                let last: u64 = counts[FIO_BUCKETS - 1..].iter().sum();
                if last > 0 {
                    o.int(&headway_sched::hist::bucket_value(FIO_BUCKETS - 1).to_string(), last);
                }
                o.end('}');
            }
        }
        o.end('}');
    }
    o.int("bw_min", d.bw.min);
    o.int("bw_max", d.bw.max);
    o.float("bw_agg", d.bw_agg);
    o.float("bw_mean", d.bw.mean());
    o.float("bw_dev", d.bw.stddev());
    o.int("bw_samples", d.bw.n);
    o.int("iops_min", d.iops.min);
    o.int("iops_max", d.iops.max);
    o.float("iops_mean", d.iops.mean());
    o.float("iops_stddev", d.iops.stddev());
    o.int("iops_samples", d.iops.n);
    o.end('}');
}
