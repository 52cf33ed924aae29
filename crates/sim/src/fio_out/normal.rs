//! fio's normal (human-readable) output, `--output-format normal`, laid out as fio 3.33 prints
//! a whole run to stdout: each job section's line (`seq: (g=0): rw=read, bs=(R) 4096B-4096B,
//! ...`, `...` for its further clones), `fio-3.33`, `Starting N processes`, a blank line;
//! then per entry of the run's `jobs` its block (the read / write sections with their
//! latencies, percentiles, bandwidth and IOPS samples; the latency ranges; the sync section;
//! CPU, I/O depths, issued I/Os); then each reporting group's `Run status group` lines and
//! `Disk stats (read/write):`.
//!
//! Numbers are fio's: `num2str` (its 4 significant figures, `17.8k`, `69.6MiB/s`), its
//! latency unit rule (nsec, usec when min > 2 µs, max > 99.999 µs and the deviation above
//! 1 µs; msec likewise), its percentile columns, its shares (a latency range with any I/O
//! shows at least `0.01%`, an I/O depth at least `0.1%`). `kb_base=1000` puts SI units
//! first and `unit_base=1` shows bits, as in fio.
//!
//! Where a simulation's output necessarily differs from fio's:
//! - `pid=0` and the time `Thu Jan  1 00:00:00 1970`: simulated time starts at the epoch and
//!   no process runs, so the same inputs give the same bytes.
//! - CPU figures are zero (`usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0`); no errors, no
//!   short or dropped I/Os, no trims.
//! - `lat` is `clat` and `slat` is zero (see the module docs of [`super`]): the `slat` line
//!   shows zeros for an asynchronous engine, and no `slat` line for a synchronous one.
//! - fio prints a file's `Laying out IO file` line and engine notes (`queue depth will be
//!   capped at 1`) between `Starting` and the blank line; nothing is laid out here.
//! - A job that syncs: fio counts its syncs in the `IO depths` line too (past 100%); here
//!   the depths are the requests'.
//! - The percentiles' decimals (fio counts the digits after the point as written in
//!   `percentile_list`) come from the parsed values: `99.90` shows as `99.9`.

use std::fmt::Write as _;

use super::json::{EPOCH_TIME, FIO_VERSION};
use super::stat::SampleStat;
use super::{DirStats, GroupDir, JobStats, RunStats, SyncStats, DIRS};
use crate::fio::{JobFile, JobSpec, Pattern};

/// fio's default `significant_figures`: digits of the rates and sizes.
const SIG_FIGS: usize = 4;

/// What [`num2str`] appends after the unit prefix (fio's `N2S_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unit {
    None,
    Byte,
    BytePerSec,
    /// The number is bytes per second, shown in bits (times 8).
    BitPerSec,
}

/// fio's `num2str`: `num` in at most `maxlen` characters (digits and the point), divided by
/// 1000 (SI, `k`, `M`...) or 1024 (`pow2`, `Ki`, `Mi`...) while it has more digits, the
/// remainder shown as decimals when there is room, rounded as fio rounds.
pub(crate) fn num2str(num: u64, maxlen: usize, pow2: bool, unit: Unit) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let suffix = match unit {
        Unit::None => "",
        Unit::Byte => "B",
        Unit::BytePerSec => "B/s",
        Unit::BitPerSec => "bit/s",
    };
    let mut num = if unit == Unit::BitPerSec { num.wrapping_mul(8) } else { num };
    let mut post = 0;
    let mut modulo = None;
    let mut carry = false;
    while post < SI.len() && digits(num) > maxlen {
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post += 1;
    }
    if post >= SI.len() {
        post = 0;
    }
    let prefix = if pow2 { IEC[post] } else { SI[post] };
    let Some(m) = modulo else {
        return format!("{num}{prefix}{suffix}");
    };
    let len = digits(num);
    if maxlen as i64 - len as i64 <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{prefix}{suffix}");
    }
    // the remainder as a fraction, with the digits that fit (`0.96` may round to `1.0`)
    let frac = format!("{:.*}", maxlen - len - 1, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{prefix}{suffix}", &frac[2..])
}

/// Decimal digits of `n` (1 for 0).
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// fio's `stat_calc_dist` (I/O depths, submissions, completions): percentages of `total`,
/// a range with any count shown as at least 0.1.
pub(crate) fn depth_dist(counts: &[u64; 7], total: u64) -> [f64; 7] {
    counts.map(|c| {
        if total == 0 {
            0.0
        } else {
            let p = c as f64 / total as f64 * 100.0;
            if p < 0.1 && c > 0 {
                0.1
            } else {
                p
            }
        }
    })
}

/// fio's `stat_calc_lat` over the 32 latency ranges: percentages of the job's I/Os
/// (`total`), a range with any I/O shown as at least 0.01.
pub(crate) fn lat_dist(counts: &[u64; 32], total: u64) -> [f64; 32] {
    counts.map(|c| {
        if total == 0 {
            0.0
        } else {
            let p = c as f64 / total as f64 * 100.0;
            if p < 0.01 && c > 0 {
                0.01
            } else {
                p
            }
        }
    })
}

/// The I/Os of the job's read, write and trim sections (fio's `ddir_rw_sum(total_io_u)`).
pub(crate) fn total_ios(j: &JobStats) -> u64 {
    j.dirs.iter().map(|d| d.total_ios).sum()
}

/// An option as written for `spec`: in its job section, else in `[global]` (the last one
/// written wins).
pub(crate) fn option<'a>(file: &'a JobFile, spec: &'a JobSpec, key: &str) -> Option<&'a str> {
    let find = |opts: &'a [(String, String)]| opts.iter().rev().find(|(k, _)| k == key);
    find(&spec.report.options).or_else(|| find(&file.global_options)).map(|(_, v)| v.as_str())
}

/// A flag option (`thread`, bare or `=1`) set for `spec`.
fn flag(file: &JobFile, spec: &JobSpec, key: &str) -> bool {
    option(file, spec, key).is_some_and(|v| v.is_empty() || v.parse::<u64>().is_ok_and(|n| n != 0))
}

/// The job's `description`, when it has one (fio prints it in normal and terse output).
pub(crate) fn description<'a>(file: &'a JobFile, spec: &'a JobSpec) -> Option<&'a str> {
    option(file, spec, "description").filter(|d| !d.is_empty())
}

/// How a job's rates and sizes are shown: `kb_base=1000` (SI first), `unit_base=1` (bits).
#[derive(Clone, Copy, Debug)]
struct Units {
    pow2: bool,
    bits: bool,
}

impl Units {
    fn of(file: &JobFile, spec: &JobSpec) -> Self {
        Units {
            pow2: option(file, spec, "kb_base") != Some("1000"),
            bits: option(file, spec, "unit_base") == Some("1"),
        }
    }

    fn rate(self) -> Unit {
        if self.bits {
            Unit::BitPerSec
        } else {
            Unit::BytePerSec
        }
    }
}

/// fio's name for a pattern (`ddir_str`).
fn rw_name(p: Pattern) -> &'static str {
    match p {
        Pattern::Read => "read",
        Pattern::Write => "write",
        Pattern::RandRead => "randread",
        Pattern::RandWrite => "randwrite",
        Pattern::ReadWrite => "rw",
        Pattern::RandRw => "randrw",
    }
}

/// Each job section's reporting group (fio's `g=`): a new one at `stonewall` / `new_group`.
fn section_groups(file: &JobFile) -> Vec<u32> {
    let mut g = 0;
    file.jobs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            if i > 0 && (spec.stonewall || spec.report.new_group) {
                g += 1;
            }
            g
        })
        .collect()
}

/// `iodepth` as the job file gives it (fio prints it so even where a synchronous engine
/// caps the depth at 1).
fn iodepth(file: &JobFile, spec: &JobSpec) -> u32 {
    option(file, spec, "iodepth").and_then(|v| v.parse().ok()).unwrap_or(spec.iodepth)
}

/// One run's normal output.
pub fn document(run: &RunStats, file: &JobFile) -> String {
    let mut s = String::new();
    header(&mut s, file);
    s.push('\n');
    for j in &run.jobs {
        job(&mut s, j, run, file);
    }
    for g in &run.groups {
        let units = file
            .jobs
            .iter()
            .zip(section_groups(file))
            .find(|(_, gid)| *gid == g.groupid)
            .map_or(Units { pow2: true, bits: false }, |(spec, _)| Units::of(file, spec));
        let _ = writeln!(s, "\nRun status group {} (all jobs):", g.groupid);
        for (gd, label) in g.dirs.iter().zip(["   READ", "  WRITE", "   TRIM"]) {
            group_line(&mut s, label, gd, units);
        }
    }
    if !run.disk_util.is_empty() {
        s.push_str("\nDisk stats (read/write):\n");
        for d in &run.disk_util {
            let _ = writeln!(
                s,
                "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
                d.name,
                d.ios[0],
                d.ios[1],
                d.merges[0],
                d.merges[1],
                d.ticks[0],
                d.ticks[1],
                d.in_queue,
                d.util
            );
        }
    }
    s
}

/// The job sections' lines, the version and `Starting ...`.
fn header(s: &mut String, file: &JobFile) {
    let groups = section_groups(file);
    let (mut threads, mut processes) = (0u64, 0u64);
    for (spec, g) in file.jobs.iter().zip(groups) {
        let pow2 = Units::of(file, spec).pow2;
        let bs = |d: usize| {
            let (lo, hi) = spec.bs_bounds(d);
            format!("{}-{}", num2str(lo, SIG_FIGS, pow2, Unit::Byte), num2str(hi, SIG_FIGS, pow2, Unit::Byte))
        };
        // trims take the last size given, the writes'
        let _ = writeln!(
            s,
            "{}: (g={g}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}",
            spec.name,
            rw_name(spec.pattern),
            bs(0),
            bs(1),
            bs(1),
            option(file, spec, "ioengine").unwrap_or("psync"),
            iodepth(file, spec),
        );
        if spec.numjobs > 1 {
            s.push_str("...\n");
        }
        if flag(file, spec, "thread") {
            threads += u64::from(spec.numjobs);
        } else {
            processes += u64::from(spec.numjobs);
        }
    }
    let _ = writeln!(s, "{FIO_VERSION}");
    s.push_str("Starting ");
    if threads > 0 {
        let _ = write!(s, "{threads} thread{}", if threads > 1 { "s" } else { "" });
    }
    if processes > 0 {
        if threads > 0 {
            s.push_str(" and ");
        }
        let _ = write!(s, "{processes} process{}", if processes > 1 { "es" } else { "" });
    }
    s.push('\n');
}

/// One entry's block (nothing for an entry without I/O, as fio).
fn job(s: &mut String, j: &JobStats, run: &RunStats, file: &JobFile) {
    let total = total_ios(j);
    if total == 0 && j.dirs.iter().all(|d| d.io_bytes == 0) {
        return;
    }
    let spec = &file.jobs[j.spec];
    let units = Units::of(file, spec);
    let _ = writeln!(s, "{}: (groupid={}, jobs={}): err= 0: pid=0: {EPOCH_TIME}", j.name, j.groupid, j.jobs);
    if let Some(d) = description(file, spec) {
        let _ = writeln!(s, "  Description  : [{d}]");
    }
    let group = run.groups.iter().find(|g| g.groupid == j.groupid);
    let mut percentiles = j.percentiles.clone();
    percentiles.sort_by(f64::total_cmp);
    for (i, (d, name)) in j.dirs.iter().zip(DIRS).enumerate() {
        if d.io_bytes > 0 {
            let gd = group.map(|g| &g.dirs[i]);
            dir(s, name, d, gd, &percentiles, units);
        }
    }
    latencies(s, &lat_dist(&j.lat_ranges, total));
    if j.sync.total_ios > 0 {
        sync(s, &j.sync);
    }
    s.push_str("  cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0\n");
    let depth = depth_dist(&j.depth, total);
    let submit = depth_dist(&j.submit, j.submit.iter().sum());
    let complete = depth_dist(&j.complete, j.complete.iter().sum());
    let row = |keys: [&str; 7], v: [f64; 7]| {
        keys.iter().zip(v).map(|(k, p)| format!("{k}={p:3.1}%")).collect::<Vec<_>>().join(", ")
    };
    let batch = ["0", "4", "8", "16", "32", "64", ">=64"];
    let _ = writeln!(s, "  IO depths    : {}", row(["1", "2", "4", "8", "16", "32", ">=64"], depth));
    let _ = writeln!(s, "     submit    : {}", row(batch, submit));
    let _ = writeln!(s, "     complete  : {}", row(batch, complete));
    let _ = writeln!(
        s,
        "     issued rwts: total={},{},{},{} short=0,0,0,0 dropped=0,0,0,0",
        j.dirs[0].total_ios, j.dirs[1].total_ios, j.dirs[2].total_ios, j.sync.total_ios
    );
    let _ =
        writeln!(s, "     latency   : target=0, window=0, percentile=100.00%, depth={}", iodepth(file, spec));
}

/// A direction's section: rates, latencies, percentiles, bandwidth and IOPS samples.
fn dir(
    s: &mut String,
    name: &str,
    d: &DirStats,
    group: Option<&GroupDir>,
    percentiles: &[f64],
    units: Units,
) {
    let runt = d.runtime_ms;
    if runt == 0 {
        return;
    }
    let bw = d.io_bytes * 1000 / runt;
    let iops = d.total_ios * 1000 / runt;
    let _ = writeln!(
        s,
        "  {name}: IOPS={}, BW={} ({})({}/{runt}msec){}",
        num2str(iops, SIG_FIGS, false, Unit::None),
        num2str(bw, SIG_FIGS, units.pow2, units.rate()),
        num2str(bw, SIG_FIGS, !units.pow2, units.rate()),
        num2str(d.io_bytes, SIG_FIGS, units.pow2, Unit::Byte),
        // fio 3.33 reports zoned block devices' resets after every write section
        if name == "write" { "; 0 zone resets" } else { "" },
    );
    if d.slat.n > 0 {
        display_lat(s, "slat", &d.slat);
    }
    if d.clat.n > 0 {
        display_lat(s, "clat", &d.clat);
        display_lat(s, " lat", &d.clat);
        let values: Vec<(f64, u64)> = percentiles.iter().map(|&p| (p, d.percentile(p))).collect();
        percentile_block(s, "clat", &values);
    }
    if d.bw.n > 0 {
        bw_line(s, &d.bw, group.map_or(0, |g| g.agg_bw), units);
    }
    if d.iops.n > 0 {
        let st = &d.iops;
        let _ = writeln!(
            s,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            st.min,
            st.max,
            st.mean(),
            st.stddev(),
            st.n
        );
    }
}

/// The bandwidth samples' line (KiB/s, MiB/s from a mean above 1 GiB/s).
fn bw_line(s: &mut String, st: &SampleStat, group_bw: u64, units: Units) {
    let (mut min, mut max, mut mean, mut dev) = (st.min, st.max, st.mean(), st.stddev());
    let kb = if units.pow2 { 1024.0 } else { 1000.0 };
    let mut label = match (units.bits, units.pow2) {
        (true, true) => "Kibit",
        (true, false) => "kbit",
        (false, true) => "KiB",
        (false, false) => "kB",
    };
    // the job's share of its group's bandwidth, from its mean in whole KiB/s
    let per =
        if group_bw > 1024 { (mean.trunc() * 100.0 / (group_bw as f64 / 1024.0)).min(100.0) } else { 100.0 };
    if units.bits {
        (min, max, mean, dev) = (min * 8, max * 8, mean * 8.0, dev * 8.0);
    }
    if mean > kb * kb {
        min = (min as f64 / kb) as u64;
        max = (max as f64 / kb) as u64;
        mean /= kb;
        dev /= kb;
        label = if units.bits { "Mibit" } else { "MiB" };
    }
    let _ = writeln!(
        s,
        "   bw ({label:>5}/s): min={min:5}, max={max:5}, per={per:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
        st.n
    );
}

/// fio's unit for a latency line: the values scaled and its name.
fn lat_unit(min: u64, max: u64, mean: f64, dev: f64) -> (u64, u64, f64, f64, &'static str) {
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        (min / 1_000_000, max / 1_000_000, mean / 1e6, dev / 1e6, "msec")
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        (min / 1000, max / 1000, mean / 1e3, dev / 1e3, "usec")
    } else {
        (min, max, mean, dev, "nsec")
    }
}

fn display_lat(s: &mut String, name: &str, st: &SampleStat) {
    lat_line(s, name, st.min, st.max, st.mean(), st.stddev());
}

/// `    clat (usec): min=33, max=869, avg=55.86, stdev=17.15`, from ns.
fn lat_line(s: &mut String, name: &str, min: u64, max: u64, mean: f64, dev: f64) {
    let (min, max, mean, dev, unit) = lat_unit(min, max, mean, dev);
    let _ = writeln!(
        s,
        "    {name} ({unit}): min={}, max={}, avg={mean:5.2}, stdev={dev:5.2}",
        num2str(min, 6, false, Unit::None),
        num2str(max, 6, false, Unit::None)
    );
}

/// The decimals a percentile list is shown with: as many as its most precise value needs.
pub(crate) fn percentile_precision(list: &[f64]) -> usize {
    list.iter()
        .map(|p| {
            let t = format!("{p:.6}");
            let t = t.trim_end_matches('0');
            t.len() - t.find('.').map_or(t.len(), |i| i + 1)
        })
        .max()
        .unwrap_or(0)
}

/// fio's percentile block: `    clat percentiles (usec):` and rows of
/// ` |  1.00th=[   38],  5.00th=[   41], ...`, the unit from the smallest and largest value,
/// as many to a row as fit in 80 columns. `values`: (percentile, ns).
fn percentile_block(s: &mut String, pre: &str, values: &[(f64, u64)]) {
    if values.is_empty() {
        return;
    }
    let list: Vec<f64> = values.iter().map(|v| v.0).collect();
    let precision = percentile_precision(&list);
    let minv = values.iter().map(|v| v.1).min().unwrap_or(0);
    let maxv = values.iter().map(|v| v.1).max().unwrap_or(0);
    let (scale, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(s, "    {pre} percentiles ({unit}):\n     |");
    let q = maxv / divisor;
    let width = if q == 0 { 5 } else { digits(q).max(5) };
    let per_line = ((80 - 7) / (precision + 10 + width)).max(1);
    for (j, &(p, v)) in values.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            s.push_str("     |");
        }
        let last = j == values.len() - 1;
        let mut v = v;
        for _ in 0..scale {
            v = v.div_ceil(1000);
        }
        let _ = write!(
            s,
            " {p:w$.prec$}th=[{v:width$}]{}",
            if last { '\n' } else { ',' },
            w = precision + 3,
            prec = precision
        );
        if !last && j % per_line == per_line - 1 {
            s.push('\n');
        }
    }
}

/// The latency ranges with a share: `  lat (usec)   : 50=42.46%, 100=57.24%, ...`, five to a
/// line, ns then µs then ms.
fn latencies(s: &mut String, dist: &[f64; 32]) {
    const UPTO_1000: [&str; 10] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"];
    const MS: [&str; 12] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"];
    for (unit, keys, values) in [
        ("nsec", &UPTO_1000[..], &dist[..10]),
        ("usec", &UPTO_1000[..], &dist[10..20]),
        ("msec", &MS[..], &dist[20..]),
    ] {
        let shown: Vec<String> =
            keys.iter().zip(values).filter(|(_, &v)| v > 0.0).map(|(k, v)| format!("{k}={v:3.2}%")).collect();
        for line in shown.chunks(5) {
            let _ = writeln!(s, "  lat ({unit})   : {}", line.join(", "));
        }
    }
}

/// The sync section (`fsync`, `fdatasync` and the like).
fn sync(s: &mut String, st: &SyncStats) {
    s.push_str("  fsync/fdatasync/sync_file_range:\n");
    lat_line(s, "sync", st.min, st.max, st.mean, st.stddev);
    let mut values = st.percentiles.clone();
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    percentile_block(s, "sync", &values);
}

/// A group's line for one direction (none when no job of the group did that I/O).
fn group_line(s: &mut String, label: &str, gd: &GroupDir, units: Units) {
    if gd.max_run_ms == 0 {
        return;
    }
    let rate = |v: u64, pow2: bool| num2str(v, SIG_FIGS, pow2, units.rate());
    let (p, alt) = (units.pow2, !units.pow2);
    let _ = writeln!(
        s,
        "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
        rate(gd.agg_bw, p),
        rate(gd.agg_bw, alt),
        rate(gd.min_bw, p),
        rate(gd.max_bw, p),
        rate(gd.min_bw, alt),
        rate(gd.max_bw, alt),
        num2str(gd.io_bytes, SIG_FIGS, p, Unit::Byte),
        num2str(gd.io_bytes, SIG_FIGS, alt, Unit::Byte),
        gd.min_run_ms,
        gd.max_run_ms
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fio::parse_str;
    use crate::fio_out::stat::lat_range;
    use crate::fio_out::{DiskUtil, GroupStats};
    use crate::report::PERCENTILES;

    /// Per-I/O logs of a real fio 3.33 run (`rw=randrw bs=4k ioengine=libaio iodepth=4
    /// number_ios=24`, `write_lat_log`, `write_bw_log`, `log_avg_msec=0`): (value, direction)
    /// in log order; latencies in ns, bandwidth in KiB/s.
    const CLAT: [(u64, usize); 24] = [
        (219579, 0),
        (275133, 0),
        (276525, 0),
        (266971, 1),
        (79069, 0),
        (92889, 0),
        (92539, 1),
        (89875, 1),
        (61422, 0),
        (68263, 0),
        (93340, 1),
        (87682, 1),
        (63856, 0),
        (70045, 0),
        (71167, 0),
        (99810, 1),
        (50386, 0),
        (56225, 0),
        (84477, 1),
        (87542, 1),
        (51287, 1),
        (51457, 1),
        (42484, 1),
        (34241, 1),
    ];
    const SLAT: [(u64, usize); 24] = [
        (74302, 0),
        (5238, 0),
        (3425, 0),
        (14382, 1),
        (24447, 0),
        (4056, 0),
        (4367, 1),
        (4116, 1),
        (15844, 1),
        (4066, 0),
        (3896, 1),
        (3295, 0),
        (14722, 1),
        (4156, 0),
        (3325, 0),
        (3285, 0),
        (15643, 1),
        (4306, 1),
        (3325, 0),
        (3275, 0),
        (13981, 1),
        (4267, 1),
        (3555, 1),
        (3616, 1),
    ];
    const BW: [(u64, usize); 24] = [
        (18653, 0),
        (14887, 0),
        (14812, 0),
        (15342, 1),
        (51802, 0),
        (44095, 0),
        (44262, 1),
        (45574, 1),
        (66686, 0),
        (60003, 0),
        (43882, 1),
        (46714, 1),
        (64144, 0),
        (58476, 0),
        (57554, 0),
        (41037, 1),
        (81292, 0),
        (72850, 0),
        (48486, 1),
        (46788, 1),
        (79864, 1),
        (79600, 1),
        (96412, 1),
        (119622, 1),
    ];

    /// That run's normal output, as fio printed it (after `Starting 1 process`).
    pub(crate) const REAL_NORMAL: &str = "\
r: (groupid=0, jobs=1): err= 0: pid=29910: Fri Nov 27 07:33:19 2026
  read: IOPS=12.0k, BW=46.9MiB/s (49.2MB/s)(48.0KiB/1msec)
    slat (nsec): min=3275, max=74302, avg=11349.58, stdev=20707.04
    clat (usec): min=50, max=276, avg=115.38, stdev=87.23
     lat (usec): min=53, max=293, avg=126.73, stdev=96.35
    clat percentiles (usec):
     |  1.00th=[   51],  5.00th=[   51], 10.00th=[   57], 20.00th=[   62],
     | 30.00th=[   64], 40.00th=[   69], 50.00th=[   71], 60.00th=[   80],
     | 70.00th=[   93], 80.00th=[  221], 90.00th=[  277], 95.00th=[  277],
     | 99.00th=[  277], 99.50th=[  277], 99.90th=[  277], 99.95th=[  277],
     | 99.99th=[  277]
   bw (  KiB/s): min=14812, max=81292, per=100.00%, avg=50437.83, stdev=22760.25, samples=12
   iops        : min=    1, max=    1, avg= 1.00, stdev= 0.00, samples=12
  write: IOPS=12.0k, BW=46.9MiB/s (49.2MB/s)(48.0KiB/1msec); 0 zone resets
    slat (nsec): min=3555, max=15844, avg=8557.92, stdev=5637.39
    clat (usec): min=34, max=266, avg=90.14, stdev=60.17
     lat (usec): min=37, max=281, avg=98.70, stdev=62.73
    clat percentiles (usec):
     |  1.00th=[   35],  5.00th=[   35], 10.00th=[   43], 20.00th=[   52],
     | 30.00th=[   52], 40.00th=[   85], 50.00th=[   88], 60.00th=[   90],
     | 70.00th=[   93], 80.00th=[   94], 90.00th=[  100], 95.00th=[  269],
     | 99.00th=[  269], 99.50th=[  269], 99.90th=[  269], 99.95th=[  269],
     | 99.99th=[  269]
   bw (  KiB/s): min=15342, max=119622, per=100.00%, avg=58965.25, stdev=28919.43, samples=12
   iops        : min=    1, max=    1, avg= 1.00, stdev= 0.00, samples=12
  lat (usec)   : 50=8.33%, 100=75.00%, 250=4.17%, 500=12.50%
  cpu          : usr=0.00%, sys=0.00%, ctx=11, majf=0, minf=55
  IO depths    : 1=4.2%, 2=8.3%, 4=87.5%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%
     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     issued rwts: total=12,12,0,0 short=0,0,0,0 dropped=0,0,0,0
     latency   : target=0, window=0, percentile=100.00%, depth=4

Run status group 0 (all jobs):
   READ: bw=46.9MiB/s (49.2MB/s), 46.9MiB/s-46.9MiB/s (49.2MB/s-49.2MB/s), io=48.0KiB (49.2kB), run=1-1msec
  WRITE: bw=46.9MiB/s (49.2MB/s), 46.9MiB/s-46.9MiB/s (49.2MB/s-49.2MB/s), io=48.0KiB (49.2kB), run=1-1msec

Disk stats (read/write):
  vda: ios=0/0, merge=0/0, ticks=0/0, in_queue=0, util=0.00%
";

    pub(crate) fn stat(values: &[u64]) -> SampleStat {
        let mut s = SampleStat::default();
        values.iter().for_each(|&v| s.add(v));
        s
    }

    fn of_dir(log: &[(u64, usize)], d: usize) -> Vec<u64> {
        log.iter().filter(|e| e.1 == d).map(|e| e.0).collect()
    }

    pub(crate) fn file(text: &str) -> JobFile {
        parse_str(text, "t.fio").expect("a valid job file")
    }

    /// A run with that job's figures: the logs' samples, its byte counts and runtimes, its
    /// depths, its group, a disk with nothing counted (fio's for that file).
    pub(crate) fn real_run() -> (RunStats, JobFile) {
        let file = file("[global]\nsize=64m\ndirect=1\n[r]\nrw=randrw\nbs=4k\nioengine=libaio\niodepth=4\nnumber_ios=24\n");
        let dir = |d: usize| {
            let clat = of_dir(&CLAT, d);
            let mut hist = headway_sched::hist::Histogram::default();
            clat.iter().for_each(|&v| hist.record(v));
            DirStats {
                io_bytes: 49152,
                total_ios: 12,
                runtime_ms: 1,
                slat: stat(&of_dir(&SLAT, d)),
                clat: stat(&clat),
                hist,
                bw: stat(&of_dir(&BW, d)),
                iops: stat(&[1; 12]),
                bw_agg: 100.0,
                min_bs: 4096,
                max_bs: 4096,
            }
        };
        let mut lat_ranges = [0; 32];
        // fio's latency ranges count completion latencies
        CLAT.iter().for_each(|&(v, _)| lat_ranges[lat_range(v)] += 1);
        let job = JobStats {
            name: "r".into(),
            groupid: 0,
            jobs: 1,
            spec: 0,
            dirs: [dir(0), dir(1), DirStats::default()],
            sync: SyncStats::default(),
            job_runtime_ms: 1,
            elapsed_s: 1,
            depth: [1, 2, 21, 0, 0, 0, 0],
            submit: [0, 24, 0, 0, 0, 0, 0],
            complete: [0, 20, 0, 0, 0, 0, 0],
            lat_ranges,
            percentiles: PERCENTILES.to_vec(),
        };
        let gd = GroupDir {
            io_bytes: 49152,
            agg_bw: 49_152_000,
            min_bw: 49_152_000,
            max_bw: 49_152_000,
            min_run_ms: 1,
            max_run_ms: 1,
        };
        let run = RunStats {
            scheduler: "noop".into(),
            jobs: vec![job],
            groups: vec![GroupStats { groupid: 0, dirs: [gd.clone(), gd, GroupDir::default()] }],
            disk_util: vec![DiskUtil { name: "vda".into(), ..DiskUtil::default() }],
        };
        (run, file)
    }

    #[test]
    fn a_real_run_prints_as_fio_printed_it() {
        let (run, file) = real_run();
        // what a simulation cannot reproduce: the pid and time, CPU use, and `lat` (which is
        // `clat` in a simulation: no submission time)
        let expected = REAL_NORMAL
            .replace("pid=29910: Fri Nov 27 07:33:19 2026", "pid=0: Thu Jan  1 00:00:00 1970")
            .replace("ctx=11, majf=0, minf=55", "ctx=0, majf=0, minf=0")
            .replace(
                "lat (usec): min=53, max=293, avg=126.73, stdev=96.35",
                "lat (usec): min=50, max=276, avg=115.38, stdev=87.23",
            )
            .replace(
                "lat (usec): min=37, max=281, avg=98.70, stdev=62.73",
                "lat (usec): min=34, max=266, avg=90.14, stdev=60.17",
            );
        let header = "r: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, \
                      ioengine=libaio, iodepth=4\nfio-3.33\nStarting 1 process\n\n";
        let got = document(&run, &file);
        assert_eq!(got, format!("{header}{expected}"), "\n{got}");
    }

    #[test]
    fn an_entry_without_io_is_left_out() {
        let (mut run, file) = real_run();
        run.jobs[0].dirs = Default::default();
        run.jobs[0].lat_ranges = [0; 32];
        let got = document(&run, &file);
        assert!(!got.contains("(groupid="), "{got}");
        assert!(got.contains("Starting 1 process\n\n\nRun status group 0 (all jobs):\n"), "{got}");
    }

    #[test]
    fn num2str_as_fio() {
        // (value, significant figures, power of 2, unit) -> what real fio 3.33 printed
        let cases: &[(u64, usize, bool, Unit, &str)] = &[
            (17808, 4, false, Unit::None, "17.8k"), // 8192 I/Os in 460 ms
            (72_944_417, 4, true, Unit::BytePerSec, "69.6MiB/s"),
            (72_944_417, 4, false, Unit::BytePerSec, "72.9MB/s"),
            (33_554_432, 4, true, Unit::Byte, "32.0MiB"),
            (12_288_000, 4, true, Unit::Byte, "11.7MiB"),
            (8_388_608, 4, true, Unit::Byte, "8192KiB"),
            (8_388_608, 4, false, Unit::Byte, "8389kB"),
            (99_657_460, 4, true, Unit::BytePerSec, "95.0MiB/s"),
            (99_657_460, 4, false, Unit::BytePerSec, "99.7MB/s"),
            (45_842_432, 4, false, Unit::Byte, "45.8MB"),
            (115_555_508, 4, true, Unit::BytePerSec, "110MiB/s"),
            (115_555_508, 4, false, Unit::BytePerSec, "116MB/s"),
            (139_128_832, 4, true, Unit::Byte, "133MiB"),
            (3346, 4, false, Unit::None, "3346"),
            (1000, 4, false, Unit::None, "1000"),
            (6_990_506, 4, false, Unit::None, "6991k"),
            (256_000, 4, false, Unit::None, "256k"),
            (4096, 4, true, Unit::Byte, "4096B"),
            (65536, 4, true, Unit::Byte, "64.0KiB"),
            (1_048_576, 4, true, Unit::Byte, "1024KiB"),
            (1_572_864, 4, true, Unit::Byte, "1536KiB"),
            (1_048_576_000, 4, true, Unit::BitPerSec, "8000Mibit/s"),
            (1_048_576_000, 4, false, Unit::BitPerSec, "8389Mbit/s"),
            // display_lat's six characters
            (4_070_012, 6, false, Unit::None, "4070.0k"),
            (2_165_200, 6, false, Unit::None, "2165.2k"),
            (11_986_000, 6, false, Unit::None, "11986k"),
            (869, 6, false, Unit::None, "869"),
            // a remainder that rounds up to a whole unit
            (17_996, 4, false, Unit::None, "18.0k"),
            // no room for decimals: a remainder of half a unit rounds up
            (115_500, 4, false, Unit::None, "116k"),
            (115_499, 4, false, Unit::None, "115k"),
        ];
        for &(v, len, pow2, unit, want) in cases {
            assert_eq!(num2str(v, len, pow2, unit), want, "{v}");
        }
    }

    #[test]
    fn the_latency_unit_follows_fio() {
        let line = |v: &[u64]| {
            let mut s = String::new();
            display_lat(&mut s, "clat", &stat(v));
            s
        };
        // usec: min above 2 µs, max above 99.999 µs, deviation above 1 µs
        assert_eq!(
            line(&[33_000, 869_000, 40_000]),
            "    clat (usec): min=33, max=869, avg=314.00, stdev=480.66\n"
        );
        // a deviation of at most 1 µs keeps ns, whatever the values (fio's `max=4070.0k`)
        assert_eq!(
            line(&[5_000_000, 5_000_000]),
            "    clat (nsec): min=5000.0k, max=5000.0k, avg=5000000.00, stdev= 0.00\n"
        );
        // min at 2 µs stays in ns
        assert_eq!(
            line(&[2_000, 200_000]),
            "    clat (nsec): min=2000, max=200000, avg=101000.00, stdev=140007.14\n"
        );
        // msec
        assert_eq!(
            line(&[5_200_000, 175_062_000]),
            "    clat (msec): min=5, max=175, avg=90.13, stdev=120.11\n"
        );
        // fio's single I/O of 8193 ns
        assert_eq!(line(&[8193]), "    clat (nsec): min=8193, max=8193, avg=8193.00, stdev= 0.00\n");
    }

    #[test]
    fn percentile_blocks_as_fio_lays_them_out() {
        let block = |pre: &str, v: &[(f64, u64)]| {
            let mut s = String::new();
            percentile_block(&mut s, pre, v);
            s
        };
        // real fio: nsec, values up to 7 digits, three to a line
        let ns = [
            450, 462, 470, 470, 470, 482, 490, 588, 644, 684, 804, 972, 207872, 264192, 2179072, 2179072,
            2179072,
        ];
        let values: Vec<(f64, u64)> = PERCENTILES.iter().copied().zip(ns).collect();
        assert_eq!(
            block("clat", &values),
            "    clat percentiles (nsec):
     |  1.00th=[    450],  5.00th=[    462], 10.00th=[    470],
     | 20.00th=[    470], 30.00th=[    470], 40.00th=[    482],
     | 50.00th=[    490], 60.00th=[    588], 70.00th=[    644],
     | 80.00th=[    684], 90.00th=[    804], 95.00th=[    972],
     | 99.00th=[ 207872], 99.50th=[ 264192], 99.90th=[2179072],
     | 99.95th=[2179072], 99.99th=[2179072]
"
        );
        // real fio: `percentile_list=50:99.999:1.5:10` (three decimals) and `50:99` (none)
        assert_eq!(
            block("clat", &[(1.5, 9), (10.0, 10), (50.0, 10), (99.999, 11072)]),
            "    clat percentiles (nsec):\n     |  1.500th=[    9], 10.000th=[   10], 50.000th=[   10], 99.999th=[11072]\n"
        );
        assert_eq!(
            block("clat", &[(50.0, 10), (99.0, 20)]),
            "    clat percentiles (nsec):\n     |  50th=[   10],  99th=[   20]\n"
        );
        // msec: the smallest above 2 ms and the largest above 99.999 ms; values rounded up
        assert_eq!(
            block("clat", &[(50.0, 5_200_000), (99.99, 175_112_000)]),
            "    clat percentiles (msec):\n     | 50.00th=[    6], 99.99th=[  176]\n"
        );
        assert_eq!(percentile_precision(PERCENTILES), 2);
    }

    #[test]
    fn latency_ranges_wrap_five_to_a_line() {
        // real fio: 68017 I/Os
        let mut ranges = [0; 32];
        for (i, c) in [
            (14, 190),
            (15, 14964),
            (16, 52349),
            (17, 109),
            (18, 14),
            (19, 3),
            (20, 41),
            (21, 150),
            (22, 197),
        ] {
            ranges[i] = c;
        }
        let mut s = String::new();
        latencies(&mut s, &lat_dist(&ranges, 68017));
        assert_eq!(
            s,
            "  lat (usec)   : 50=0.28%, 100=22.00%, 250=76.96%, 500=0.16%, 750=0.02%
  lat (usec)   : 1000=0.01%
  lat (msec)   : 2=0.06%, 4=0.22%, 10=0.29%
"
        );
        // fio's I/O depth floor: any count shows as at least 0.1%
        let d = depth_dist(&[1, 1, 1, 68014, 0, 0, 0], 68017);
        assert_eq!(d.map(|p| format!("{p:3.1}")), ["0.1", "0.1", "0.1", "100.0", "0.0", "0.0", "0.0"]);
    }

    #[test]
    fn the_sync_section_as_fio() {
        // real fio: fsync=4 on 1024 writes
        let list = [51, 62, 78, 86, 91, 95, 99, 111, 141, 253, 3556, 3621, 4359, 4555, 5080, 5080, 5080];
        let st = SyncStats {
            total_ios: 255,
            min: 47_120,
            max: 5_105_300,
            mean: 750_990.0,
            stddev: 1_343_400.0,
            percentiles: PERCENTILES.iter().copied().zip(list.map(|us| us * 1000 - 500)).collect(),
        };
        let mut s = String::new();
        sync(&mut s, &st);
        assert_eq!(
            s,
            "  fsync/fdatasync/sync_file_range:
    sync (usec): min=47, max=5105, avg=750.99, stdev=1343.40
    sync percentiles (usec):
     |  1.00th=[   51],  5.00th=[   62], 10.00th=[   78], 20.00th=[   86],
     | 30.00th=[   91], 40.00th=[   95], 50.00th=[   99], 60.00th=[  111],
     | 70.00th=[  141], 80.00th=[  253], 90.00th=[ 3556], 95.00th=[ 3621],
     | 99.00th=[ 4359], 99.50th=[ 4555], 99.90th=[ 5080], 99.95th=[ 5080],
     | 99.99th=[ 5080]
"
        );
    }

    #[test]
    fn bandwidth_lines() {
        let units = Units { pow2: true, bits: false };
        let line = |st: &SampleStat, group: u64, units: Units| {
            let mut s = String::new();
            bw_line(&mut s, st, group, units);
            s
        };
        // real fio: one sample, the group's 115555508 B/s
        assert_eq!(
            line(&stat(&[111_983]), 115_555_508, units),
            "   bw (  KiB/s): min=111983, max=111983, per=99.23%, avg=111983.00, stdev= 0.00, samples=1\n"
        );
        // MiB/s from a mean above 1 GiB/s (whole MiB for min and max)
        assert_eq!(
            line(&stat(&[1_247_232, 1_435_648]), 1_400_000_000, units),
            "   bw (  MiB/s): min= 1218, max= 1402, per=98.12%, avg=1310.00, stdev=130.11, samples=2\n"
        );
        // the share is of the mean in whole KiB/s (fio passes it as an int)
        assert_eq!(
            line(&stat(&[50, 51]), 102_400, units),
            "   bw (  KiB/s): min=   50, max=   51, per=50.00%, avg=50.50, stdev= 0.71, samples=2\n"
        );
        // bits
        assert_eq!(
            line(&stat(&[100, 300]), 0, Units { pow2: true, bits: true }),
            "   bw (Kibit/s): min=  800, max= 2400, per=100.00%, avg=1600.00, stdev=1131.37, samples=2\n"
        );
    }

    #[test]
    fn units_options_and_the_header() {
        // real fio: kb_base=1000 puts SI first; unit_base=1 shows bits
        let f = file("[global]\nkb_base=1000\n[a]\nrw=read\ndescription=hello world\nthread\n[b]\nrw=write\nunit_base=1\n");
        let (a, b) = (Units::of(&f, &f.jobs[0]), Units::of(&f, &f.jobs[1]));
        let d = DirStats { io_bytes: 245 * 4096, total_ios: 245, runtime_ms: 3, ..DirStats::default() };
        let mut s = String::new();
        dir(&mut s, "read", &d, None, PERCENTILES, a);
        assert_eq!(s, "  read: IOPS=81.7k, BW=335MB/s (319MiB/s)(1004kB/3msec)\n");
        let gd = GroupDir {
            io_bytes: 1_003_520,
            agg_bw: 334_506_666,
            min_bw: 334_506_666,
            max_bw: 334_506_666,
            min_run_ms: 3,
            max_run_ms: 3,
        };
        let mut s = String::new();
        group_line(&mut s, "   READ", &gd, a);
        assert_eq!(
            s,
            "   READ: bw=335MB/s (319MiB/s), 335MB/s-335MB/s (319MiB/s-319MiB/s), io=1004kB (980KiB), run=3-3msec\n"
        );
        let d = DirStats { io_bytes: 1 << 20, total_ios: 256, runtime_ms: 1, ..DirStats::default() };
        let mut s = String::new();
        dir(&mut s, "write", &d, None, PERCENTILES, Units { pow2: true, ..b });
        assert_eq!(s, "  write: IOPS=256k, BW=8000Mibit/s (8389Mbit/s)(1024KiB/1msec); 0 zone resets\n");

        let mut s = String::new();
        header(&mut s, &f);
        assert_eq!(
            s,
            "a: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1
b: (g=0): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1
fio-3.33
Starting 1 thread and 1 process
"
        );
        assert_eq!(description(&f, &f.jobs[0]), Some("hello world"));
        assert_eq!(description(&f, &f.jobs[1]), None);
    }

    #[test]
    fn job_lines_name_patterns_sizes_and_clones() {
        // real fio 3.33 printed a, b and c so (with `ioengine=null`); d as fio prints a
        // `bs=1536k` and a synchronous engine's `iodepth`, the stonewall starting group 1
        let f = file(
            "[global]\nsize=16m\n\
             [a]\nrw=readwrite\nbs=4k,8k\n\
             [b]\nrw=randwrite\nbsrange=4k-1m\nnumjobs=2\n\
             [c]\nstonewall\nrw=randrw\nbssplit=4k/50:64k/50,512/100\nioengine=libaio\niodepth=16\n\
             [d]\nrw=write\nbs=1536k\nioengine=psync\niodepth=8\n",
        );
        let mut s = String::new();
        header(&mut s, &f);
        assert_eq!(
            s,
            "a: (g=0): rw=rw, bs=(R) 4096B-4096B, (W) 8192B-8192B, (T) 8192B-8192B, ioengine=psync, iodepth=1
b: (g=0): rw=randwrite, bs=(R) 4096B-1024KiB, (W) 4096B-1024KiB, (T) 4096B-1024KiB, ioengine=psync, iodepth=1
...
c: (g=1): rw=randrw, bs=(R) 4096B-64.0KiB, (W) 512B-512B, (T) 512B-512B, ioengine=libaio, iodepth=16
d: (g=1): rw=write, bs=(R) 1536KiB-1536KiB, (W) 1536KiB-1536KiB, (T) 1536KiB-1536KiB, ioengine=psync, iodepth=8
fio-3.33
Starting 5 processes
"
        );
    }
}
