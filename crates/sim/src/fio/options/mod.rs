//! The option table: every job-file option headway understands, each in one entry (names,
//! doc, and the setter that parses its value into a [`Draft`]). An option not in [`OPTIONS`]
//! is an error. Adding an option (e.g. a `headway_*` extension) is one entry here plus, when
//! it needs a new field, that field in [`JobSpec`]; its test goes in the `tests` module at
//! the bottom, which follows the table's order.
//!
//! Setters see one option at a time. Checks that involve several options (a zone mode and
//! its sizes, `time_based` and `runtime`, the effective `iodepth` of a sync engine) run once
//! per job in [`Draft::finish`], and their errors point at the line that set the option.

use std::collections::BTreeMap;

use super::error::JobFileError;
use super::spec::{Engine, JobSpec, Origin, Pattern, RandomDistribution, Strided};
use super::units::{parse_count, parse_flag, parse_size, parse_time, KbBase, TimeUnit};
use crate::postmark::{PostmarkParams, SIZE_LIMIT};

/// Parses an option's value into the draft job. `None` is a bare key (`time_based`).
/// The error is the reason only; the caller adds file, line and option name.
pub(crate) type Setter = fn(&mut Draft, Option<&str>) -> Result<(), String>;

/// One job-file option.
#[derive(Clone, Copy)]
pub struct FioOption {
    /// fio's name first, then its aliases (`bs`, `blocksize`).
    pub names: &'static [&'static str],
    /// What it does in headway, with unit and default.
    pub doc: &'static str,
    /// `Some(reason)`: accepted (and its value checked) but it changes nothing in a
    /// simulation, for the reason given. Listed in the module docs.
    pub no_effect: Option<&'static str>,
    pub(crate) set: Setter,
}

impl FioOption {
    /// fio's name for the option.
    pub fn name(&self) -> &'static str {
        self.names[0]
    }
}

impl std::fmt::Debug for FioOption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FioOption").field("names", &self.names).finish_non_exhaustive()
    }
}

/// How `zonemode` was given; fio infers `strided` from a bare `zonesize`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ZoneMode {
    None,
    Strided,
}

/// A log option's file prefix: its value, or `""` for a bare key (the job's name, as fio,
/// resolved per job since a `[global]` bare key names each job's own).
fn log_prefix(_: &Draft, v: Option<&str>) -> String {
    v.map(str::trim).unwrap_or_default().to_string()
}

/// A window in ms, at least 1.
fn positive_ms(v: Option<&str>) -> Result<u64, String> {
    match parse_count(val(v)?)? {
        0 => Err("must be at least 1 ms".into()),
        n => Ok(n),
    }
}

/// A job (or the `[global]` defaults) while its section is being read.
#[derive(Clone, Debug)]
pub(crate) struct Draft {
    pub spec: JobSpec,
    pub kb: KbBase,
    /// Reading a `[global]` section (some options belong to jobs only).
    pub in_global: bool,
    /// `iodepth` as given; [`Draft::finish`] makes it 1 for a sync engine.
    pub iodepth: u32,
    pub zonemode: Option<ZoneMode>,
    pub zonesize: Option<u64>,
    pub zonerange: Option<u64>,
    pub zoneskip: Option<u64>,
    /// `headway_workload=postmark`, and the `headway_pm_*` values so far (PostMark's
    /// defaults until set); [`Draft::finish`] puts them in the spec.
    pub postmark: bool,
    pub pm: PostmarkParams,
    /// Where each option was last set, and the name it was written with, for errors found
    /// in [`Draft::finish`]. Keyed by fio's name.
    pub set_at: BTreeMap<&'static str, (Origin, String)>,
}

impl Draft {
    /// fio's defaults; `origin` is the first `[global]` or job header.
    pub fn new(origin: Origin) -> Self {
        let spec = JobSpec::defaults("global", origin);
        Draft {
            iodepth: spec.iodepth,
            spec,
            kb: KbBase::default(),
            in_global: true,
            zonemode: None,
            zonesize: None,
            zonerange: None,
            zoneskip: None,
            postmark: false,
            pm: PostmarkParams::default(),
            set_at: BTreeMap::new(),
        }
    }

    /// Cross-option checks and derived values; the finished job.
    pub fn finish(mut self) -> Result<JobSpec, JobFileError> {
        // Only options that were set can fail here, so `set_at` has them; the job header
        // is a fallback that keeps this from panicking if that ever changes.
        let err = |d: &Draft, option: &'static str, message: String| {
            let (at, written) = d.set_at.get(option).cloned().unwrap_or_else(|| {
                debug_assert!(false, "`{option}` failed a check but was never set");
                (d.spec.origin.clone(), option.to_string())
            });
            JobFileError::Value { at, option: written, message }
        };
        self.spec.iodepth = match self.spec.engine {
            Engine::Sync => 1,
            Engine::Async => self.iodepth,
        };
        if let Some(low) = self.spec.iodepth_low {
            if self.spec.engine == Engine::Async && low > self.spec.iodepth {
                let msg = format!("{low} is above `iodepth` ({})", self.spec.iodepth);
                return Err(err(&self, "iodepth_low", msg));
            }
        }
        if self.spec.osync && self.spec.engine == Engine::Async {
            let msg = "synchronous writes with an asynchronous engine are not supported: use psync".into();
            return Err(err(&self, "sync", msg));
        }
        if self.spec.engine == Engine::Sync {
            // one request at a time: nothing to batch (as fio)
            self.spec.iodepth_low = None;
            self.spec.iodepth_batch_complete_min = 1;
        }
        if self.spec.time_based && self.spec.runtime.is_none() {
            return Err(err(&self, "time_based", "needs a `runtime` to run for".into()));
        }
        if let Some(size) = self.spec.size {
            let min_bs = self.spec.bs_read.min(self.spec.bs_write);
            if size < min_bs {
                let msg = format!("{size} bytes is less than the block size ({min_bs} bytes)");
                return Err(err(&self, "size", msg));
            }
        }
        let mode =
            self.zonemode.unwrap_or(if self.zonesize.is_some() { ZoneMode::Strided } else { ZoneMode::None });
        match (mode, self.zonesize) {
            (ZoneMode::Strided, Some(zonesize)) => {
                self.spec.strided = Some(Strided {
                    zonesize,
                    // fio: an unset zonerange equals zonesize (backward compatibility).
                    zonerange: self.zonerange.unwrap_or(zonesize),
                    zoneskip: self.zoneskip.unwrap_or(0),
                })
            }
            (ZoneMode::Strided, None) => {
                return Err(err(&self, "zonemode", "`zonemode=strided` needs a `zonesize`".into()))
            }
            (ZoneMode::None, _) => {
                for option in ["zonesize", "zonerange", "zoneskip"] {
                    if self.set_at.contains_key(option) {
                        let msg = "has no effect unless `zonemode=strided` (or `zonesize` alone)";
                        return Err(err(&self, option, msg.into()));
                    }
                }
            }
        }
        let capped = [
            self.spec.rate_iops,
            self.spec.rate_iops_write,
            self.spec.rate_bytes[0],
            self.spec.rate_bytes[1],
        ]
        .iter()
        .any(|c| c.is_some());
        if self.spec.rate_poisson && !capped {
            let msg = "`poisson` spaces capped submissions: give `rate_iops` or `rate`";
            return Err(err(&self, "rate_process", msg.into()));
        }
        if !self.spec.pattern.is_random() {
            for option in ["random_distribution", "percentage_random"] {
                if self.set_at.contains_key(option) {
                    let msg = "has no effect on a sequential pattern (`rw=randread`, `randwrite`, `randrw`)";
                    return Err(err(&self, option, msg.into()));
                }
            }
        }
        self.finish_postmark(&err)?;
        Ok(self.spec)
    }

    /// `headway_pm_*` only with `headway_workload=postmark`; with it, none of the walk's
    /// options (they would be silently ignored) and a sync engine (PostMark waits for each
    /// request).
    fn finish_postmark(
        &mut self,
        err: &dyn Fn(&Draft, &'static str, String) -> JobFileError,
    ) -> Result<(), JobFileError> {
        if !self.postmark {
            if let Some(option) = PM_OPTIONS.into_iter().find(|o| self.set_at.contains_key(*o)) {
                return Err(err(self, option, "has no effect unless `headway_workload=postmark`".into()));
            }
            return Ok(());
        }
        let walk = [
            "rw",
            "rwmixread",
            "rwmixwrite",
            "bs",
            "bsrange",
            "bssplit",
            "random_distribution",
            "percentage_random",
            "io_size",
            "loops",
            "number_ios",
            "fsync",
            "end_fsync",
            "sync",
            "zonemode",
            "zonesize",
            "zonerange",
            "zoneskip",
        ];
        if let Some(option) = walk.into_iter().find(|o| self.set_at.contains_key(*o)) {
            let msg = "has no effect with `headway_workload=postmark` (PostMark decides what is \
                       read and written; its request size is `headway_pm_block`)";
            return Err(err(self, option, msg.into()));
        }
        if self.spec.time_based {
            let msg = "PostMark ends after its transactions; `runtime` alone can cut it short";
            return Err(err(self, "time_based", msg.into()));
        }
        if self.spec.engine == Engine::Async {
            let msg = "PostMark issues its requests one at a time: use a sync engine (psync)";
            return Err(err(self, "ioengine", msg.into()));
        }
        let pm = &self.pm;
        if pm.size_min > pm.size_max {
            let option = if self.set_at.contains_key("headway_pm_size_max") {
                "headway_pm_size_max"
            } else {
                "headway_pm_size_min"
            };
            let msg = format!(
                "file sizes {}..{} bytes: the smallest is above the largest",
                pm.size_min, pm.size_max
            );
            return Err(err(self, option, msg));
        }
        debug_assert!(pm.check().is_ok(), "setters check each value: {:?}", pm.check());
        self.spec.headway_postmark = Some(self.pm.clone());
        Ok(())
    }
}

/// The PostMark parameters, by fio name.
const PM_OPTIONS: [&str; 8] = [
    "headway_pm_files",
    "headway_pm_size_min",
    "headway_pm_size_max",
    "headway_pm_transactions",
    "headway_pm_read_bias",
    "headway_pm_create_bias",
    "headway_pm_block",
    "headway_pm_create_phase",
];

/// A PostMark bias: -1 (off) or 0-10 tenths.
fn bias(v: Option<&str>) -> Result<i8, String> {
    match val(v)? {
        "-1" => Ok(-1),
        v => match parse_count(v) {
            Ok(n @ 0..=10) => Ok(n as i8),
            _ => Err(format!("`{v}` is not -1 (off) or 0 to 10 (tenths)")),
        },
    }
}

/// A PostMark file size: 1 byte to 1 GiB.
fn pm_size(d: &Draft, v: Option<&str>) -> Result<u64, String> {
    match size(d, v)? {
        n @ 1..=SIZE_LIMIT => Ok(n),
        n => Err(format!("{n} bytes is not between 1 and {SIZE_LIMIT}")),
    }
}

/// A QoS rate: `N[k|m|g..]` bytes per second or `Niops` requests per second, > 0.
fn qos_rate(d: &Draft, v: &str) -> Result<headway_sched::Rate, String> {
    let lower = v.to_ascii_lowercase();
    let rate = match lower.strip_suffix("iops") {
        Some(n) => headway_sched::Rate::Iops(parse_count(n.trim_end())?),
        None => headway_sched::Rate::Bytes(parse_size(v, d.kb)?),
    };
    if rate.per_sec() == 0 {
        return Err("the rate must be > 0".into());
    }
    Ok(rate)
}

/// The value of an option that needs one.
/// A name for grouping jobs: non-empty, no whitespace.
fn ident(v: Option<&str>) -> Result<String, String> {
    let v = val(v)?;
    if v.is_empty() || v.chars().any(char::is_whitespace) {
        return Err(format!("`{v}` is not a name (non-empty, no spaces)"));
    }
    Ok(v.to_string())
}

fn val(v: Option<&str>) -> Result<&str, String> {
    match v {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err("needs a value".into()),
    }
}

fn size(d: &Draft, v: Option<&str>) -> Result<u64, String> {
    parse_size(val(v)?, d.kb)
}

fn nonzero_size(d: &Draft, v: Option<&str>, zero_means: &str) -> Result<u64, String> {
    match size(d, v)? {
        0 => Err(format!("must be > 0 ({zero_means})")),
        n => Ok(n),
    }
}

fn count_u32(v: Option<&str>, min: u32, max: u32) -> Result<u32, String> {
    let v = val(v)?;
    let n = parse_count(v)?;
    if n < min as u64 || n > max as u64 {
        return Err(format!("`{v}` is out of range ({min} to {max})"));
    }
    Ok(n as u32)
}

fn time(v: Option<&str>, unit: TimeUnit) -> Result<headway_sched::Duration, String> {
    let v = val(v)?;
    if v.get(1..).is_some_and(|rest| rest.contains(['-', ':'])) {
        return Err(format!("`{v}`: time ranges are not supported; give one value"));
    }
    parse_time(v, unit)
}

fn block_size(d: &Draft, text: &str) -> Result<u64, String> {
    match parse_size(text, d.kb)? {
        0 => Err("block size must be > 0".into()),
        n if n % 512 != 0 => {
            Err(format!("block size `{text}` ({n} bytes) is not a multiple of 512 (the sector)"))
        }
        n => Ok(n),
    }
}

/// `N%` as a percentage (at least `min`, at most 100); `None` for a value without `%`.
fn percent(v: Option<&str>, min: u64) -> Result<Option<u32>, String> {
    let v = val(v)?;
    let Some(n) = v.strip_suffix('%') else { return Ok(None) };
    match parse_count(n.trim_end()) {
        Ok(p) if (min..=100).contains(&p) => Ok(Some(p as u32)),
        _ => Err(format!("`{v}` is not a percentage ({min}% to 100%)")),
    }
}

/// An offset as bytes, `(bytes, None)`, or as `N%` of the device (0-99), `(0, Some(N))`.
fn bytes_or_share(d: &Draft, v: Option<&str>) -> Result<(u64, Option<u32>), String> {
    match percent(v, 0)? {
        Some(p) if p >= 100 => Err(format!("`{p}%` leaves no room: 0% to 99%")),
        Some(p) => Ok((0, Some(p))),
        None => Ok((size(d, v)?, None)),
    }
}

/// One direction's `bssplit` list: `SIZE/PCT:SIZE:...` → (size, percent) adding up to 100.
fn bssplit(d: &Draft, text: &str) -> Result<Vec<(u64, u32)>, String> {
    let mut given = Vec::new();
    for entry in text.split(':') {
        let (size, pct) = match entry.split_once('/') {
            Some((b, p)) => (b, Some(p)),
            None => (entry, None),
        };
        let pct = match pct {
            None => None,
            Some(p) => match parse_count(p) {
                Ok(n @ 0..=100) => Some(n as u32),
                _ => return Err(format!("`{entry}`: `{p}` is not a percentage (0 to 100)")),
            },
        };
        given.push((block_size(d, size)?, pct));
    }
    let fixed: u32 = given.iter().filter_map(|g| g.1).sum();
    if fixed > 100 {
        return Err(format!("`{text}`: the percentages add up to {fixed}, over 100"));
    }
    let open = given.iter().filter(|g| g.1.is_none()).count() as u32;
    if open == 0 && fixed != 100 {
        return Err(format!("`{text}`: the percentages add up to {fixed}, not 100"));
    }
    // what the given shares leave goes to the sizes without one, evenly; the first of them
    // takes the remainder of the division
    let left = 100 - fixed;
    let (each, mut extra) = left.checked_div(open).map_or((0, 0), |e| (e, left % open));
    let mut out = Vec::with_capacity(given.len());
    for (size, pct) in given {
        let p = pct.unwrap_or_else(|| each + std::mem::take(&mut extra));
        if p > 0 {
            out.push((size, p));
        }
    }
    debug_assert!(!out.is_empty(), "shares add up to 100");
    Ok(out)
}

/// fio's per-direction lists (`bs`, `rate_iops`): up to three comma-separated values for
/// reads, writes and trims; an empty value keeps the current one, and the last value given
/// applies to the directions after it unless the list ends with a comma (`4k,` = reads only).
/// Returns `[read, write]`; a trim value is checked but has nowhere to go (no trims here).
fn per_direction<T: Clone>(
    text: &str,
    current: [T; 2],
    mut parse: impl FnMut(&str) -> Result<T, String>,
) -> Result<[T; 2], String> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() > 3 {
        return Err(format!("`{text}`: at most three values (read,write,trim)"));
    }
    if parts.iter().all(|p| p.is_empty()) {
        return Err("needs a value".into());
    }
    let mut out = current;
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        let v = parse(part)?;
        let last = i + 1 == parts.len();
        for slot in out.iter_mut().skip(i).take(if last { 2 } else { 1 }) {
            *slot = v.clone();
        }
    }
    Ok(out)
}

/// Every option headway accepts, in the order of the module docs.
pub static OPTIONS: &[FioOption] = &[
    // ---- units -------------------------------------------------------------------------
    FioOption {
        names: &["kb_base"],
        doc: "1024 (default): `k` = 1024; 1000: `k` = 1000 and `KiB` = 1024. Applies to the \
              whole section it is in, wherever it appears, and is inherited from [global].",
        no_effect: None,
        set: |d, v| {
            d.kb = match val(v)? {
                "1024" => KbBase::Binary,
                "1000" => KbBase::Decimal,
                other => return Err(format!("`{other}` is not 1000 or 1024")),
            };
            Ok(())
        },
    },
    // ---- what the job does ---------------------------------------------------------------
    FioOption {
        names: &["rw", "readwrite"],
        doc: "Pattern: read, write, randread, randwrite, rw/readwrite, randrw (default read). \
              A sequential pattern may end in `:SIZE` (`read:8k`): a gap after every I/O.",
        no_effect: None,
        set: |d, v| {
            let v = val(v)?;
            let (name, modifier) = match v.split_once(':') {
                Some((name, m)) => (name, Some(m)),
                None => (v, None),
            };
            let pattern = match name {
                "read" => Pattern::Read,
                "write" => Pattern::Write,
                "randread" => Pattern::RandRead,
                "randwrite" => Pattern::RandWrite,
                "rw" | "readwrite" => Pattern::ReadWrite,
                "randrw" => Pattern::RandRw,
                "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
                    return Err(format!("`{name}`: trims are not supported"))
                }
                _ => {
                    return Err(format!(
                        "unknown pattern `{name}` (expected read, write, randread, randwrite, \
                         rw, readwrite or randrw)"
                    ))
                }
            };
            let skip = match modifier {
                None => 0,
                Some(_) if pattern.is_random() => {
                    return Err(format!(
                        "`{v}`: `:N` on a random pattern (a new random offset every N I/Os) \
                         is not supported"
                    ))
                }
                Some(m) => parse_size(m, d.kb)?,
            };
            d.spec.pattern = pattern;
            d.spec.skip = skip;
            Ok(())
        },
    },
    FioOption {
        names: &["rwmixread"],
        doc: "Percentage of reads in a mixed pattern, 0-100 (default 50).",
        no_effect: None,
        set: |d, v| {
            d.spec.rwmixread = count_u32(v, 0, 100)?;
            Ok(())
        },
    },
    FioOption {
        names: &["rwmixwrite"],
        doc: "Percentage of writes in a mixed pattern: sets rwmixread to 100 minus it. \
              Whichever of the two comes last wins (fio).",
        no_effect: None,
        set: |d, v| {
            d.spec.rwmixread = 100 - count_u32(v, 0, 100)?;
            Ok(())
        },
    },
    FioOption {
        names: &["random_distribution"],
        doc: "Where a random pattern's offsets fall: `random` (uniform, default), \
              `zipf:THETA` (THETA > 0), `pareto:H` (0 < H < 1), `normal:DEV` (DEV percent of \
              the region, > 0). Hot spots are scattered over the region (see \
              `RandomDistribution`).",
        no_effect: None,
        set: |d, v| {
            let v = val(v)?;
            let (name, arg) = match v.split_once(':') {
                Some((n, a)) => (n, Some(a)),
                None => (v, None),
            };
            let num = |lo: f64, hi: f64, what: &str| -> Result<f64, String> {
                let a = arg.ok_or_else(|| format!("`{name}` needs its {what}: `{name}:X`"))?;
                match a.parse::<f64>() {
                    Ok(x) if x > lo && x < hi => Ok(x),
                    _ => Err(format!("`{v}`: the {what} must be a number above {lo} and below {hi}")),
                }
            };
            d.spec.random_distribution = match name {
                "random" if arg.is_none() => RandomDistribution::Uniform,
                "zipf" => RandomDistribution::Zipf(num(0.0, 1e6, "theta")?),
                "pareto" => RandomDistribution::Pareto(num(0.0, 1.0, "h")?),
                "normal" => RandomDistribution::Normal(num(0.0, 1e6, "deviation (percent)")?),
                "zoned" | "zoned_abs" => return Err(format!("`{name}` distributions are not supported")),
                _ => return Err(format!("`{v}` is not random, zipf:THETA, pareto:H or normal:DEV")),
            };
            Ok(())
        },
    },
    FioOption {
        names: &["percentage_random"],
        doc: "Share of a random pattern's I/Os that go to a random offset, 0-100 (default \
              100); the rest continue sequentially after the previous I/O.",
        no_effect: None,
        set: |d, v| {
            if val(v)?.contains(',') {
                return Err("one value for both directions (per-direction values are not supported)".into());
            }
            d.spec.percentage_random = count_u32(v, 0, 100)?;
            Ok(())
        },
    },
    FioOption {
        names: &["bs", "blocksize"],
        doc: "Block size, bytes, > 0 and a multiple of 512 (default 4k). `R,W` sets reads and \
              writes apart; `4k,` reads only; `,8k` writes only; a third (trim) value is \
              checked and unused.",
        no_effect: None,
        set: |d, v| {
            let current = [d.spec.bs_read, d.spec.bs_write];
            let [r, w] = per_direction(val(v)?, current, |p| block_size(d, p))?;
            d.spec.bs_read = r;
            d.spec.bs_write = w;
            d.spec.bsrange = [None, None];
            Ok(())
        },
    },
    FioOption {
        names: &["bsrange", "blocksize_range"],
        doc: "Block sizes `MIN-MAX` (`R,W` lists as for `bs`): each I/O's size is drawn \
              uniformly from the multiples of MIN up to MAX; random offsets are aligned to \
              MIN. Replaces `bs` (whichever comes last); `bssplit` takes precedence.",
        no_effect: None,
        set: |d, v| {
            let current = d.spec.bsrange.map(|r| r.unwrap_or((d.spec.bs_read, d.spec.bs_read)));
            let [r, w] = per_direction(val(v)?, current, |p| {
                let (lo, hi) = p.split_once('-').ok_or_else(|| format!("`{p}` is not MIN-MAX"))?;
                let (lo, hi) = (block_size(d, lo)?, block_size(d, hi)?);
                if lo > hi {
                    return Err(format!("`{p}`: MIN is above MAX"));
                }
                Ok((lo, hi))
            })?;
            d.spec.bsrange = [Some(r), Some(w)];
            Ok(())
        },
    },
    FioOption {
        names: &["bssplit"],
        doc: "Block sizes by share of the I/Os: `SIZE/PCT:SIZE/PCT:...` (`4k/80:64k/20`); \
              sizes without a percentage share what the others leave, evenly; the shares \
              add up to 100. `R,W` lists as for `bs`. Random offsets are aligned to the \
              smallest size. Takes precedence over `bs` and `bsrange`, as in fio.",
        no_effect: None,
        set: |d, v| {
            let current = d.spec.bssplit.clone();
            d.spec.bssplit = per_direction(val(v)?, current, |p| bssplit(d, p).map(Some))?;
            Ok(())
        },
    },
    // ---- where and how much ------------------------------------------------------------
    FioOption {
        names: &["size"],
        doc: "Bytes of the region the job works in, from `offset` (default: to the end of \
              the device); `N%` (1-100): that share of the device.",
        no_effect: None,
        set: |d, v| {
            match percent(v, 1)? {
                Some(p) => (d.spec.size, d.spec.size_percent) = (None, Some(p)),
                None => {
                    d.spec.size = Some(nonzero_size(d, v, "leave `size` out for the whole device")?);
                    d.spec.size_percent = None;
                }
            }
            Ok(())
        },
    },
    FioOption {
        names: &["io_size", "io_limit"],
        doc: "Bytes to transfer in total (default: `size`); may be more than `size` (the \
              region is then covered again) or less.",
        no_effect: None,
        set: |d, v| {
            d.spec.io_size = Some(nonzero_size(d, v, "leave `io_size` out to transfer `size`")?);
            Ok(())
        },
    },
    FioOption {
        names: &["loops"],
        doc: "Do the job's I/O this many times over, >= 1 (default 1): `loops` x the bytes \
              of `io_size` (or of one pass over the region).",
        no_effect: None,
        set: |d, v| {
            d.spec.loops = count_u32(v, 1, u32::MAX)?;
            Ok(())
        },
    },
    FioOption {
        names: &["number_ios"],
        doc: "Stop after this many I/Os, >= 1 (or when the bytes are done, if sooner).",
        no_effect: None,
        set: |d, v| {
            d.spec.number_ios = Some(count_u32(v, 1, u32::MAX)? as u64);
            Ok(())
        },
    },
    FioOption {
        names: &["offset"],
        doc: "Start of the region, bytes from the start of the device (default 0); `N%` \
              (0-99): that share of the device, rounded up to the largest block size.",
        no_effect: None,
        set: |d, v| {
            (d.spec.offset, d.spec.offset_percent) = bytes_or_share(d, v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["offset_increment"],
        doc: "Clone `i` of `numjobs` starts at `offset + i * offset_increment`, bytes \
              (default 0); `N%` (0-99): that share of the device, rounded up to the largest \
              block size.",
        no_effect: None,
        set: |d, v| {
            (d.spec.offset_increment, d.spec.offset_increment_percent) = bytes_or_share(d, v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["numjobs"],
        doc: "Number of identical clones of the job, >= 1 (default 1).",
        no_effect: None,
        set: |d, v| {
            d.spec.numjobs = count_u32(v, 1, u32::MAX)?;
            Ok(())
        },
    },
    // ---- how I/O is issued -------------------------------------------------------------
    FioOption {
        names: &["ioengine"],
        doc: "psync (default), sync, pvsync, pvsync2, vsync: one synchronous request at a \
              time; libaio, io_uring, posixaio: asynchronous, up to `iodepth`.",
        no_effect: None,
        set: |d, v| {
            d.spec.engine = match val(v)? {
                "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => Engine::Sync,
                "libaio" | "io_uring" | "posixaio" => Engine::Async,
                other => {
                    return Err(format!(
                        "engine `{other}` is not supported (expected psync, sync, pvsync, \
                         pvsync2, vsync, libaio, io_uring or posixaio)"
                    ))
                }
            };
            Ok(())
        },
    },
    FioOption {
        names: &["iodepth"],
        doc: "Requests in flight for an asynchronous engine, >= 1 (default 1). Accepted but \
              without effect for a sync engine, as in fio.",
        no_effect: None,
        set: |d, v| {
            d.iodepth = count_u32(v, 1, u32::MAX)?;
            Ok(())
        },
    },
    FioOption {
        names: &["iodepth_low"],
        doc: "Asynchronous engines: once `iodepth` requests are in flight, refill only when \
              they have drained to this many, 0 to `iodepth` (default `iodepth`: keep the \
              queue full).",
        no_effect: None,
        set: |d, v| {
            d.spec.iodepth_low = Some(count_u32(v, 0, u32::MAX)?);
            Ok(())
        },
    },
    FioOption {
        names: &["iodepth_batch_complete_min", "iodepth_batch_complete"],
        doc: "Asynchronous engines: once the queue is full, refill only after at least this \
              many completions (default 1; 0 counts as 1).",
        no_effect: None,
        set: |d, v| {
            d.spec.iodepth_batch_complete_min = count_u32(v, 0, u32::MAX)?.max(1);
            Ok(())
        },
    },
    FioOption {
        names: &["iodepth_batch_submit", "iodepth_batch", "iodepth_batch_complete_max"],
        doc: "How many requests fio hands the kernel, or reaps, per system call.",
        no_effect: Some(
            "requests prepared at one simulated instant are submitted at that instant either way",
        ),
        set: |_, v| count_u32(v, 0, u32::MAX).map(drop),
    },
    FioOption {
        names: &["direct"],
        doc: "1: O_DIRECT, bypass the page cache; 0: buffered (default 0).",
        no_effect: None,
        set: |d, v| {
            d.spec.direct = parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["buffered"],
        doc: "The inverse of `direct` (default 1).",
        no_effect: None,
        set: |d, v| {
            d.spec.direct = !parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["thinktime"],
        doc: "Pause after every `thinktime_blocks` completed I/Os (an asynchronous job first \
              waits for its I/Os in flight, as fio does); microseconds unless suffixed (default 0).",
        no_effect: None,
        set: |d, v| {
            d.spec.thinktime = time(v, TimeUnit::Us)?;
            Ok(())
        },
    },
    FioOption {
        names: &["thinktime_blocks"],
        doc: "I/Os between two thinktime pauses, >= 1 (default 1).",
        no_effect: None,
        set: |d, v| {
            d.spec.thinktime_blocks = count_u32(v, 1, u32::MAX)?;
            Ok(())
        },
    },
    FioOption {
        names: &["rate_iops"],
        doc: "Cap on I/Os per second, per direction: `N` caps reads and writes, `R,W` each \
              apart, `R,` reads only, `,W` writes only; 0 = no cap (default).",
        no_effect: None,
        set: |d, v| {
            let current = [d.spec.rate_iops, d.spec.rate_iops_write];
            let [r, w] = per_direction(val(v)?, current, |p| Ok(Some(parse_count(p)?).filter(|&n| n > 0)))?;
            d.spec.rate_iops = r;
            d.spec.rate_iops_write = w;
            Ok(())
        },
    },
    FioOption {
        names: &["rate"],
        doc: "Cap on bytes per second, per direction as `rate_iops` (`1m`, `R,W`, `R,`, \
              `,W`); 0 = no cap (default). With `rate_iops` too, the tighter cap holds.",
        no_effect: None,
        set: |d, v| {
            let [r, w] = per_direction(val(v)?, d.spec.rate_bytes, |p| {
                Ok(Some(parse_size(p, d.kb)?).filter(|&n| n > 0))
            })?;
            d.spec.rate_bytes = [r, w];
            Ok(())
        },
    },
    // ---- when ------------------------------------------------------------------------------
    FioOption {
        names: &["runtime"],
        doc: "Stop the job after this long; seconds unless suffixed; 0 = no limit (default).",
        no_effect: None,
        set: |d, v| {
            let t = time(v, TimeUnit::S)?;
            d.spec.runtime = Some(t).filter(|t| t.as_nanos() > 0);
            Ok(())
        },
    },
    FioOption {
        names: &["time_based"],
        doc: "Run for the whole `runtime`, covering the region again as often as needed \
              (needs `runtime`).",
        no_effect: None,
        set: |d, v| {
            d.spec.time_based = parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["rate_process"],
        doc: "linear (default): a capped job's submissions come at fixed gaps; poisson: the \
              gaps are exponentially distributed with the same mean (Poisson arrivals at \
              the `rate_iops`/`rate` cap). Needs a cap.",
        no_effect: None,
        set: |d, v| {
            d.spec.rate_poisson = match val(v)? {
                "linear" => false,
                "poisson" => true,
                other => return Err(format!("`{other}` is not linear or poisson")),
            };
            Ok(())
        },
    },
    FioOption {
        names: &["ramp_time"],
        doc: "Run this long before measuring; seconds unless suffixed (default 0). I/O \
              completed in it counts in no figure of the job, and `runtime` starts after it.",
        no_effect: None,
        set: |d, v| {
            d.spec.ramp_time = time(v, TimeUnit::S)?;
            Ok(())
        },
    },
    FioOption {
        names: &["startdelay"],
        doc: "Delay before the job starts; seconds unless suffixed (default 0). Ranges are \
              not supported.",
        no_effect: None,
        set: |d, v| {
            d.spec.startdelay = time(v, TimeUnit::S)?;
            Ok(())
        },
    },
    FioOption {
        names: &["stonewall", "wait_for_previous"],
        doc: "Start only after every earlier job in the file has finished.",
        no_effect: None,
        set: |d, v| {
            d.spec.stonewall = parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["fsync", "fdatasync"],
        doc: "After every N writes the job syncs (0 = never, default): it stops submitting, \
              waits for its requests in flight, writes back its dirty page-cache data and \
              has the drive flush its write cache (FLUSH CACHE), then goes on. A block \
              device has no metadata, so `fdatasync` is the same.",
        no_effect: None,
        set: |d, v| {
            d.spec.fsync = count_u32(v, 0, u32::MAX)?;
            Ok(())
        },
    },
    FioOption {
        names: &["sync"],
        doc: "0/none (default), or 1/sync/dsync: open the target O_SYNC (O_DSYNC): a write \
              returns only once it is durable — the job's dirty page-cache data written back \
              and the drives' caches flushed, all within the write's latency. Sync engines \
              only.",
        no_effect: None,
        set: |d, v| {
            d.spec.osync = match v.unwrap_or("1") {
                "0" | "none" => false,
                "1" | "sync" | "dsync" => true,
                other => return Err(format!("`{other}` is not 0, 1, none, sync or dsync")),
            };
            Ok(())
        },
    },
    FioOption {
        names: &["end_fsync"],
        doc: "Sync once more (as `fsync`) when the job has done its I/O; the job ends when \
              that sync completes.",
        no_effect: None,
        set: |d, v| {
            d.spec.end_fsync = parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["exitall"],
        doc: "When this job finishes, stop the other jobs of its group (what is in flight \
              completes; nothing more is submitted).",
        no_effect: None,
        set: |d, v| {
            d.spec.exitall = parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["percentile_list"],
        doc: "The completion-latency percentiles the job reports instead of fio's default \
              list: `P:P:...`, each above 0 and at most 100, at most 64 (`99:99.9:99.99`).",
        no_effect: None,
        set: |d, v| {
            let v = val(v)?;
            let mut list = Vec::new();
            for p in v.split(':') {
                match p.parse::<f64>() {
                    Ok(x) if x > 0.0 && x <= 100.0 => list.push(x),
                    _ => return Err(format!("`{p}` is not a percentile (above 0, at most 100)")),
                }
            }
            if list.len() > 64 {
                return Err(format!("{} percentiles: at most 64", list.len()));
            }
            list.sort_by(f64::total_cmp);
            list.dedup();
            d.spec.percentile_list = Some(list);
            Ok(())
        },
    },
    FioOption {
        names: &["randseed"],
        doc: "Seed for the job's random offsets, mixed with the simulator's seed.",
        no_effect: None,
        set: |d, v| {
            d.spec.randseed = Some(parse_count(val(v)?)?);
            Ok(())
        },
    },
    // ---- strided zones -------------------------------------------------------------------
    FioOption {
        names: &["zonemode"],
        doc: "none or strided (the default is strided when `zonesize` is given, else none).",
        no_effect: None,
        set: |d, v| {
            d.zonemode = Some(match val(v)? {
                "none" => ZoneMode::None,
                "strided" => ZoneMode::Strided,
                "zbd" => return Err("`zbd` (zoned block devices) is not supported".into()),
                other => return Err(format!("`{other}` is not none or strided")),
            });
            Ok(())
        },
    },
    FioOption {
        names: &["zonesize"],
        doc: "Strided zones: bytes transferred in a zone before moving to the next, > 0.",
        no_effect: None,
        set: |d, v| {
            d.zonesize = Some(nonzero_size(d, v, "leave `zonesize` out for no zones")?);
            Ok(())
        },
    },
    FioOption {
        names: &["zonerange"],
        doc: "Strided zones: size of a zone, bytes, > 0 (default `zonesize`).",
        no_effect: None,
        set: |d, v| {
            d.zonerange = Some(nonzero_size(d, v, "the size of a zone")?);
            Ok(())
        },
    },
    FioOption {
        names: &["zoneskip"],
        doc: "Strided zones: extra bytes skipped after each zone (default 0).",
        no_effect: None,
        set: |d, v| {
            d.zoneskip = Some(size(d, v)?);
            Ok(())
        },
    },
    FioOption {
        names: &["write_iolog"],
        doc: "Write what the job submits to FILE as a fio iolog version 3, which fio replays with \
              `read_iolog` (one per scheduler run: `FILE.SCHEDULER` when several run).",
        no_effect: None,
        set: |d, v| {
            let v = val(v)?.trim();
            if v.is_empty() {
                return Err("needs a file name".into());
            }
            d.spec.write_iolog = Some(v.to_string());
            Ok(())
        },
    },
    FioOption {
        names: &["ioscheduler"],
        doc: "The scheduler to run when the command line gives no `--scheduler` (fio switches the \
              device's scheduler to it). Every job that sets it must name the same one.",
        no_effect: None,
        set: |d, v| {
            let name = val(v)?.trim();
            // Linux's name for no scheduler
            let name = if name == "none" { "noop" } else { name };
            if !headway_sched::scheduler_names().iter().any(|n| n == name) {
                return Err(format!("unknown scheduler `{name}` (see `headway schedulers`)"));
            }
            d.spec.ioscheduler = Some(name.to_string());
            Ok(())
        },
    },
    // ---- headway extensions: what fio cannot say -----------------------------------------
    FioOption {
        names: &["headway_process"],
        doc: "Jobs (and clones) sharing this name are threads of one process: with \
              `--context process` the scheduler sees one issuer for all of them. Default: each \
              clone is its own process.",
        no_effect: None,
        set: |d, v| {
            d.spec.headway_process = Some(ident(v)?);
            Ok(())
        },
    },
    FioOption {
        names: &["prioclass"],
        doc: "The job's I/O priority class: 1 real time, 2 best effort, 3 idle (schedulers \
              with classes — mq-deadline, bfq — serve them; others ignore it).",
        no_effect: None,
        set: |d, v| {
            let n = parse_count(val(v)?)?;
            let c = u8::try_from(n).ok().filter(|c| (1..=3).contains(c));
            d.spec.prioclass =
                Some(c.ok_or_else(|| format!("{n} is not 1 (real time), 2 (best effort) or 3 (idle)"))?);
            Ok(())
        },
    },
    FioOption {
        names: &["prio"],
        doc: "The job's I/O priority level within its class: 0 (highest) to 7.",
        no_effect: None,
        set: |d, v| {
            let n = parse_count(val(v)?)?;
            let p = u8::try_from(n).ok().filter(|p| *p <= 7);
            d.spec.prio = Some(p.ok_or_else(|| format!("{n} is not between 0 and 7"))?);
            Ok(())
        },
    },
    FioOption {
        names: &["headway_barrier"],
        doc: "Threads of one process (`headway_process`) wait for each other after every N \
              requests each (the multi-threads benchmark of 000 Section 3.4). 0 = no barrier.",
        no_effect: None,
        set: |d, v| {
            let n = parse_count(val(v)?)?;
            d.spec.headway_barrier = u32::try_from(n).map_err(|_| format!("{n} is too large"))?;
            Ok(())
        },
    },
    FioOption {
        names: &["headway_vm"],
        doc: "The virtual machine the job runs in: with `--context vm` the scheduler sees only \
              this. Default: one VM for all jobs without the option.",
        no_effect: None,
        set: |d, v| {
            d.spec.headway_vm = Some(ident(v)?);
            Ok(())
        },
    },
    FioOption {
        names: &["headway_weight"],
        doc: "Proportional-share weight of the job's issuer (default 1, at most 1000).",
        no_effect: None,
        set: |d, v| {
            let n = parse_count(val(v)?)?;
            if !(1..=1000).contains(&n) {
                return Err(format!("{n} is not between 1 and 1000"));
            }
            d.spec.headway_weight = n as u32;
            Ok(())
        },
    },
    // ---- headway extensions: QoS classes (seeds/004, `pclock`, `htbs`) ------------------
    FioOption {
        names: &["headway_rate"],
        doc: "QoS: the rate guaranteed to the job's issuer (pClock/HTBS `rho`): bytes per \
              second with fio's size suffixes (`8800k` = 8800 KiB/s under the default \
              `kb_base`), or requests per second with an `iops` suffix (`200iops`); > 0. \
              Default: the default class (100 IOPS) when another `headway_` QoS option is given.",
        no_effect: None,
        set: |d, v| {
            d.spec.headway_rate = Some(qos_rate(d, val(v)?)?);
            Ok(())
        },
    },
    FioOption {
        names: &["headway_delay"],
        doc: "QoS: the delay bound of a request within the job's rate (pClock/HTBS `delta`: \
              finish tag minus start tag); milliseconds unless suffixed (default 100 ms).",
        no_effect: None,
        set: |d, v| {
            let v = val(v)?;
            let ms;
            let v = if v.bytes().all(|b| b.is_ascii_digit()) {
                ms = format!("{v}ms");
                ms.as_str()
            } else {
                v
            };
            d.spec.headway_delay = Some(time(Some(v), TimeUnit::S)?);
            Ok(())
        },
    },
    FioOption {
        names: &["headway_burst"],
        doc: "QoS: the burst the job's issuer may send above its rate, requests (pClock/HTBS \
              `sigma`, the token bucket's size); 1 = no bursts (default), 0 = every request \
              spaced 1/rate apart.",
        no_effect: None,
        set: |d, v| {
            d.spec.headway_burst = Some(count_u32(v, 0, 1 << 20)?);
            Ok(())
        },
    },
    // ---- headway extension: PostMark (see headway_sim::postmark) ---------------
    FioOption {
        names: &["headway_workload"],
        doc: "What the job does: `fio` (default), the `rw` walk over its region; `postmark`, \
              PostMark (create, read, append, delete small files) on a file pool laid out in \
              its region, set by the `headway_pm_*` options. Needs a sync engine; `rw`, `bs`, \
              `io_size`, zones and `time_based` do not apply.",
        no_effect: None,
        set: |d, v| {
            d.postmark = match val(v)? {
                "fio" => false,
                "postmark" => true,
                other => return Err(format!("`{other}` is not fio or postmark")),
            };
            Ok(())
        },
    },
    FioOption {
        names: &["headway_pm_files"],
        doc: "PostMark: files in the initial pool, >= 1 (default 500, PostMark's `set number`).",
        no_effect: None,
        set: |d, v| {
            d.pm.files = count_u32(v, 1, u32::MAX)?;
            Ok(())
        },
    },
    FioOption {
        names: &["headway_pm_size_min"],
        doc: "PostMark: smallest file created, bytes, rounded up to a sector (default 500, \
              PostMark's `set size` low bound).",
        no_effect: None,
        set: |d, v| {
            d.pm.size_min = pm_size(d, v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["headway_pm_size_max"],
        doc: "PostMark: largest file created, and the size appends grow a file to, bytes, at \
              most 1 GiB (default 10000, PostMark's `set size` high bound).",
        no_effect: None,
        set: |d, v| {
            d.pm.size_max = pm_size(d, v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["headway_pm_transactions"],
        doc: "PostMark: transactions after the creation phase; 0 = creation only (default \
              500, PostMark's `set transactions`).",
        no_effect: None,
        set: |d, v| {
            d.pm.transactions = parse_count(val(v)?)?;
            Ok(())
        },
    },
    FioOption {
        names: &["headway_pm_read_bias"],
        doc: "PostMark: chance of a read over an append, in tenths, 0-10; -1 = neither \
              (default 5, i.e. 50 %, PostMark's `set bias read`).",
        no_effect: None,
        set: |d, v| {
            d.pm.read_bias = bias(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["headway_pm_create_bias"],
        doc: "PostMark: chance of a create over a delete, in tenths, 0-10; -1 = neither \
              (default 5, PostMark's `set bias create`).",
        no_effect: None,
        set: |d, v| {
            d.pm.create_bias = bias(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["headway_pm_block"],
        doc: "PostMark: largest request, bytes, a multiple of 512 up to 1 GiB; `R,W` sets \
              reads and writes apart (default 512, PostMark's `set read` / `set write`: one \
              request per read()/write() call). A file's extents are cut into requests of \
              this size; for PostMark's buffered mode use the kernel's request size (128k).",
        no_effect: None,
        set: |d, v| {
            let current = [d.pm.block_read, d.pm.block_write];
            let [r, w] = per_direction(val(v)?, current, |p| match block_size(d, p)? {
                n if n > SIZE_LIMIT => Err(format!("block size `{p}` is above {SIZE_LIMIT} bytes")),
                n => Ok(n),
            })?;
            d.pm.block_read = r;
            d.pm.block_write = w;
            Ok(())
        },
    },
    FioOption {
        names: &["headway_pm_create_phase"],
        doc: "PostMark: 1 (default) = the creation phase's writes are part of the run (PostMark \
              times it too); 0 = the pool is laid out without I/O and only transactions run.",
        no_effect: None,
        set: |d, v| {
            d.pm.create_phase = parse_flag(v)?;
            Ok(())
        },
    },
    // ---- naming --------------------------------------------------------------------------
    FioOption {
        names: &["name"],
        doc: "Name the job in reports instead of its section header (job sections only).",
        no_effect: None,
        set: |d, v| {
            if d.in_global {
                return Err("belongs in a job section (jobs are named by their header)".into());
            }
            d.spec.name = val(v)?.to_string();
            Ok(())
        },
    },
    // ---- accepted, no effect in a simulation -------------------------------------------------
    FioOption {
        names: &["description"],
        doc: "Free text.",
        no_effect: Some("free text that fio only prints"),
        set: |_, v| val(v).map(drop),
    },
    FioOption {
        names: &["filename"],
        doc: "The file or device fio would use (one; `a:b` lists are refused).",
        no_effect: Some("the simulated disk is the target; offsets are device offsets"),
        set: |d, v| {
            let v = val(v)?;
            if v.replace("\\:", "").contains(':') {
                return Err(format!("`{v}`: several files per job are not supported"));
            }
            d.spec.filename = Some(v.to_string());
            Ok(())
        },
    },
    FioOption {
        names: &["group_reporting"],
        doc: "0/1: fio's output formats (`--output-format`) report each reporting group's jobs as \
              one; headway's own JSON lists every job either way.",
        no_effect: None,
        set: |d, v| {
            d.spec.report.group_reporting = parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["new_group"],
        doc: "0/1: the job starts a new reporting group (as `stonewall` does).",
        no_effect: None,
        set: |d, v| {
            d.spec.report.new_group = parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["thread"],
        doc: "0/1.",
        no_effect: Some(
            "a job is a simulated issuer either way; what the scheduler learns about issuers \
             is chosen with --context",
        ),
        set: |_, v| parse_flag(v).map(drop),
    },
    FioOption {
        names: &["invalidate"],
        doc: "0/1.",
        no_effect: Some("every simulation starts with a cold cache"),
        set: |_, v| parse_flag(v).map(drop),
    },
    FioOption {
        names: &["randrepeat"],
        doc: "0/1.",
        no_effect: Some("simulations are always repeatable: seeds come from --seed and randseed"),
        set: |_, v| parse_flag(v).map(drop),
    },
    FioOption {
        names: &["gtod_reduce"],
        doc: "0/1.",
        no_effect: Some("simulated time costs nothing to read; latencies are always reported"),
        set: |_, v| parse_flag(v).map(drop),
    },
    FioOption {
        names: &["clocksource"],
        doc: "gettimeofday, clock_gettime or cpu.",
        no_effect: Some("the simulator has one exact clock"),
        set: |_, v| match val(v)? {
            "gettimeofday" | "clock_gettime" | "cpu" => Ok(()),
            other => Err(format!("`{other}` is not gettimeofday, clock_gettime or cpu")),
        },
    },
    FioOption {
        names: &["fallocate"],
        doc: "none, native, posix, keep, truncate, 0 or 1.",
        no_effect: Some("no files are laid out on the simulated disk"),
        set: |_, v| match val(v)? {
            "none" | "native" | "posix" | "keep" | "truncate" | "0" | "1" => Ok(()),
            other => Err(format!("`{other}` is not a fallocate mode")),
        },
    },
    FioOption {
        names: &["norandommap"],
        doc: "0/1.",
        no_effect: Some(
            "headway draws random offsets with replacement whether or not it is set (fio's \
             random map, which visits each block once a pass, is not modelled)",
        ),
        set: |_, v| parse_flag(v).map(drop),
    },
    FioOption {
        names: &["random_generator"],
        doc: "tausworthe, lfsr or tausworthe64.",
        no_effect: Some("offsets come from headway's own seeded generator (--seed, randseed)"),
        set: |_, v| match val(v)? {
            "tausworthe" | "lfsr" | "tausworthe64" => Ok(()),
            other => Err(format!("`{other}` is not tausworthe, lfsr or tausworthe64")),
        },
    },
    FioOption {
        names: &["thinktime_spin"],
        doc: "Part of `thinktime` fio spends spinning; microseconds unless suffixed.",
        no_effect: Some("spinning or sleeping, the think time is the same simulated time"),
        set: |_, v| time(v, TimeUnit::Us).map(drop),
    },
    FioOption {
        names: &["cpus_allowed", "cpumask", "cpus_allowed_policy"],
        doc: "CPU affinity.",
        no_effect: Some("simulated issuers run on no CPU"),
        set: |_, v| val(v).map(drop),
    },
    FioOption {
        names: &["allow_mounted_write"],
        doc: "0/1.",
        no_effect: Some("nothing is written to a real device"),
        set: |_, v| parse_flag(v).map(drop),
    },
    FioOption {
        names: &["overwrite", "create_on_open"],
        doc: "0/1.",
        no_effect: Some("no files are laid out on the simulated disk"),
        set: |_, v| parse_flag(v).map(drop),
    },
    FioOption {
        names: &["refill_buffers", "scramble_buffers", "zero_buffers"],
        doc: "0/1.",
        no_effect: Some("what the data is does not matter to a disk model"),
        set: |_, v| parse_flag(v).map(drop),
    },
    FioOption {
        names: &["buffer_compress_percentage"],
        doc: "0-100.",
        no_effect: Some("what the data is does not matter to a disk model"),
        set: |_, v| count_u32(v, 0, 100).map(drop),
    },
    FioOption {
        names: &["disable_lat", "disable_clat", "disable_slat", "disable_bw_measurement"],
        doc: "0/1.",
        no_effect: Some("simulated measurements cost nothing; they are always reported"),
        set: |_, v| parse_flag(v).map(drop),
    },
    FioOption {
        names: &["write_bw_log"],
        doc: "Log bandwidth to `PREFIX_bw.N.log` (KiB/s; bare: the job's name is the prefix), in \
              fio's format ([`crate::fio_out`]).",
        no_effect: None,
        set: |d, v| {
            d.spec.report.logs.bw = Some(log_prefix(d, v));
            Ok(())
        },
    },
    FioOption {
        names: &["write_lat_log"],
        doc: "Log latencies to `PREFIX_slat.N.log`, `PREFIX_clat.N.log` and `PREFIX_lat.N.log` (ns).",
        no_effect: None,
        set: |d, v| {
            d.spec.report.logs.lat = Some(log_prefix(d, v));
            Ok(())
        },
    },
    FioOption {
        names: &["write_iops_log"],
        doc: "Log IOPS to `PREFIX_iops.N.log`.",
        no_effect: None,
        set: |d, v| {
            d.spec.report.logs.iops = Some(log_prefix(d, v));
            Ok(())
        },
    },
    FioOption {
        names: &["write_hist_log"],
        doc: "Log completion-latency histograms to `PREFIX_clat_hist.N.log`, one line every \
              `log_hist_msec` (none without it, as fio).",
        no_effect: None,
        set: |d, v| {
            d.spec.report.logs.hist = Some(log_prefix(d, v));
            Ok(())
        },
    },
    FioOption {
        names: &["per_job_logs"],
        doc: "1 (default): a log file per job, `PREFIX_bw.N.log`; 0: `PREFIX_bw.log` shared by the \
              jobs naming the prefix.",
        no_effect: None,
        set: |d, v| {
            d.spec.report.logs.per_job = parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["log_avg_msec"],
        doc: "Average the logs' values over windows of this many ms (0, default: every request).",
        no_effect: None,
        set: |d, v| {
            d.spec.report.logs.avg_msec = parse_count(val(v)?)?;
            Ok(())
        },
    },
    FioOption {
        names: &["log_hist_msec"],
        doc: "Window of the histogram log, ms (0, default: no histogram lines).",
        no_effect: None,
        set: |d, v| {
            d.spec.report.logs.hist_msec = parse_count(val(v)?)?;
            Ok(())
        },
    },
    FioOption {
        names: &["log_offset"],
        doc: "0/1: the logs carry each request's offset (per-request entries only).",
        no_effect: None,
        set: |d, v| {
            d.spec.report.logs.offset = parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["log_max_value"],
        doc: "0/1: a windowed log entry holds the window's largest value instead of its mean.",
        no_effect: None,
        set: |d, v| {
            d.spec.report.logs.max_value = parse_flag(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["bw_avg_time"],
        doc: "Window of the bandwidth samples behind `bw_min`/`bw_max`/`bw_mean`, ms (default 500).",
        no_effect: None,
        set: |d, v| {
            d.spec.report.bw_avg_ms = positive_ms(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["iops_avg_time"],
        doc: "Window of the IOPS samples behind `iops_min`/`iops_max`/`iops_mean`, ms (default 500).",
        no_effect: None,
        set: |d, v| {
            d.spec.report.iops_avg_ms = positive_ms(v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["unit_base"],
        doc: "0, 1 or 8.",
        no_effect: Some("results are JSON in bytes"),
        set: |_, v| match val(v)? {
            "0" | "1" | "8" => Ok(()),
            other => Err(format!("`{other}` is not 0, 1 or 8")),
        },
    },
];

/// The entry for `name` (fio's name or an alias).
pub(crate) fn find(name: &str) -> Option<(&'static str, &'static FioOption)> {
    OPTIONS.iter().find(|o| o.names.contains(&name)).map(|o| (o.names[0], o))
}

#[cfg(test)]
mod tests;
