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
use super::spec::{Engine, JobSpec, Origin, Pattern, Strided};
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
            "io_size",
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

/// fio's per-direction lists (`bs`, `rate_iops`): up to three comma-separated values for
/// reads, writes and trims; an empty value keeps the current one, and the last value given
/// applies to the directions after it unless the list ends with a comma (`4k,` = reads only).
/// Returns `[read, write]`; a trim value is checked but has nowhere to go (no trims here).
fn per_direction<T: Copy>(
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
            *slot = v;
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
            Ok(())
        },
    },
    // ---- where and how much ------------------------------------------------------------
    FioOption {
        names: &["size"],
        doc: "Bytes of the region the job works in, from `offset` (default: to the end of \
              the device). Percentages are not supported.",
        no_effect: None,
        set: |d, v| {
            d.spec.size = Some(nonzero_size(d, v, "leave `size` out for the whole device")?);
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
        names: &["offset"],
        doc: "Start of the region, bytes from the start of the device (default 0).",
        no_effect: None,
        set: |d, v| {
            d.spec.offset = size(d, v)?;
            Ok(())
        },
    },
    FioOption {
        names: &["offset_increment"],
        doc: "Clone `i` of `numjobs` starts at `offset + i * offset_increment`, bytes \
              (default 0).",
        no_effect: None,
        set: |d, v| {
            d.spec.offset_increment = size(d, v)?;
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
        doc: "Pause after every `thinktime_blocks` completed I/Os; microseconds unless \
              suffixed (default 0).",
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
        set: |_, v| {
            let v = val(v)?;
            if v.replace("\\:", "").contains(':') {
                return Err(format!("`{v}`: several files per job are not supported"));
            }
            Ok(())
        },
    },
    FioOption {
        names: &["group_reporting"],
        doc: "0/1.",
        no_effect: Some("headway reports every job and the aggregate anyway"),
        set: |_, v| parse_flag(v).map(drop),
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
mod tests {
    //! One test per option, in table order, each with a valid and an invalid value; through
    //! the whole parser so that the error text (file, line, option) is checked too.

    use super::*;
    use crate::fio::{parse_str, JobFileError};
    use headway_sched::Duration;

    /// The one job of `[j]\n{body}`.
    fn job(body: &str) -> JobSpec {
        let mut f = parse_str(&format!("[j]\n{body}\n"), "t.fio").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.jobs.len(), 1);
        f.jobs.remove(0)
    }

    /// The error for `[j]\n{body}`, checked to name the file and the option.
    fn fails(body: &str) -> String {
        let e = parse_str(&format!("[j]\n{body}\n"), "t.fio").expect_err(body).to_string();
        assert!(e.starts_with("t.fio:"), "{e}");
        let option = body.lines().last().unwrap().split('=').next().unwrap().trim();
        assert!(e.contains(&format!("`{option}`")), "{e} (for {body})");
        e
    }

    #[test]
    fn table_is_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for o in OPTIONS {
            assert!(!o.doc.is_empty(), "{}", o.name());
            for n in o.names {
                assert!(seen.insert(*n), "`{n}` listed twice");
                assert_eq!(find(n).unwrap().0, o.name());
            }
        }
        assert!(find("ioscheduler").is_none());
    }

    #[test]
    fn every_no_effect_option_is_in_the_module_docs() {
        let docs = include_str!("mod.rs");
        for o in OPTIONS.iter().filter(|o| o.no_effect.is_some()) {
            assert!(docs.contains(&format!("`{}`", o.name())), "`{}` missing in mod.rs", o.name());
        }
    }

    #[test]
    fn kb_base() {
        assert_eq!(job("kb_base=1000\nbs=4KiB\nsize=8k").size, Some(8000));
        assert_eq!(job("kb_base=1000\nbs=4KiB").bs_read, 4096);
        assert_eq!(job("kb_base=1024\nsize=8k").size, Some(8192));
        assert!(fails("kb_base=1010").contains("not 1000 or 1024"));
    }

    #[test]
    fn rw() {
        assert_eq!(job("rw=randwrite").pattern, Pattern::RandWrite);
        assert_eq!(job("readwrite=randrw").pattern, Pattern::RandRw);
        assert_eq!(job("rw=rw").pattern, Pattern::ReadWrite);
        assert_eq!(job("rw=readwrite").pattern, Pattern::ReadWrite);
        assert_eq!(job("rw=randread").pattern, Pattern::RandRead);
        let j = job("rw=write:8k");
        assert_eq!((j.pattern, j.skip), (Pattern::Write, 8192));
        assert_eq!(job("rw=read:8k\nrw=read").skip, 0);
        assert!(fails("rw=sequential").contains("unknown pattern `sequential`"));
        assert!(fails("rw=trim").contains("trims are not supported"));
        assert!(fails("rw=randread:8").contains("random pattern"));
        assert!(fails("rw=read:4q").contains("malformed size `4q`"));
        assert!(fails("rw=").contains("needs a value"));
    }

    #[test]
    fn rwmixread_and_rwmixwrite() {
        assert_eq!(job("rwmixread=70").rwmixread, 70);
        assert_eq!(job("rwmixwrite=70").rwmixread, 30);
        assert_eq!(job("rwmixread=70\nrwmixwrite=40").rwmixread, 60);
        assert!(fails("rwmixread=101").contains("out of range"));
        assert!(fails("rwmixwrite=-1").contains("not a whole number"));
    }

    #[test]
    fn bs() {
        let j = job("bs=64k");
        assert_eq!((j.bs_read, j.bs_write), (65536, 65536));
        let j = job("blocksize=4k,16k");
        assert_eq!((j.bs_read, j.bs_write), (4096, 16384));
        let j = job("bs=8k,");
        assert_eq!((j.bs_read, j.bs_write), (8192, 4096));
        let j = job("bs=,8k");
        assert_eq!((j.bs_read, j.bs_write), (4096, 8192));
        let j = job("bs=8k,16k,32k");
        assert_eq!((j.bs_read, j.bs_write), (8192, 16384));
        let j = job("bs=16k\nbs=,8k");
        assert_eq!((j.bs_read, j.bs_write), (16384, 8192));
        let e = fails("bs=4q");
        assert_eq!(e, "t.fio:2: option `bs`: malformed size `4q` (expected e.g. 4k, 1M, 512)");
        assert!(fails("bs=0").contains("must be > 0"));
        assert!(fails("bs=1000").contains("not a multiple of 512"));
        assert!(fails("bs=4k,1000").contains("not a multiple of 512"));
        assert!(fails("bs=1k,2k,4k,8k").contains("at most three"));
        assert!(fails("bs=,").contains("needs a value"));
        assert!(fails("blocksize=").contains("option `blocksize`: needs a value"));
    }

    #[test]
    fn size() {
        assert_eq!(job("size=1g").size, Some(1 << 30));
        assert_eq!(job("").size, None);
        assert!(fails("size=10%").contains("percentages"));
        assert!(fails("size=0").contains("must be > 0"));
        assert!(fails("size=1GiB").contains("ambiguous"));
        assert!(fails("bs=8k\nsize=4k").contains("less than the block size"));
    }

    #[test]
    fn io_size() {
        assert_eq!(job("io_size=2g").io_size, Some(2 << 30));
        assert_eq!(job("io_limit=2m").io_size, Some(2 << 20));
        assert!(fails("io_size=x").contains("malformed size"));
        assert!(fails("io_limit=0").contains("must be > 0"));
    }

    #[test]
    fn offset_and_increment() {
        let j = job("offset=1m\noffset_increment=51g");
        assert_eq!((j.offset, j.offset_increment), (1 << 20, 51 << 30));
        assert!(fails("offset=5%").contains("percentages"));
        assert!(fails("offset_increment=-4k").contains("malformed size"));
    }

    #[test]
    fn numjobs() {
        assert_eq!(job("numjobs=4").numjobs, 4);
        assert!(fails("numjobs=0").contains("out of range"));
        assert!(fails("numjobs=four").contains("not a whole number"));
        assert!(fails("numjobs=99999999999").contains("out of range"));
    }

    #[test]
    fn ioengine_and_iodepth() {
        for e in ["psync", "sync", "pvsync", "pvsync2", "vsync"] {
            assert_eq!(job(&format!("ioengine={e}")).engine, Engine::Sync);
        }
        for e in ["libaio", "io_uring", "posixaio"] {
            assert_eq!(job(&format!("ioengine={e}")).engine, Engine::Async);
        }
        let j = job("ioengine=libaio\niodepth=32");
        assert_eq!((j.engine, j.iodepth), (Engine::Async, 32));
        // fio accepts a depth with a sync engine; it has no effect there.
        assert_eq!(job("iodepth=32\nioengine=psync").iodepth, 1);
        assert!(fails("ioengine=mmap").contains("engine `mmap` is not supported"));
        assert!(fails("iodepth=0").contains("out of range"));
        assert!(fails("iodepth=").contains("needs a value"));
    }

    #[test]
    fn direct_and_buffered() {
        assert!(!job("").direct);
        assert!(job("direct=1").direct);
        assert!(job("direct").direct);
        assert!(!job("direct=1\nbuffered=1").direct);
        assert!(job("buffered=0").direct);
        assert!(fails("direct=yes").contains("not a flag"));
        assert!(fails("buffered=2").contains("not a flag"));
    }

    #[test]
    fn thinktime() {
        assert_eq!(job("thinktime=250").thinktime, Duration::from_micros(250));
        assert_eq!(job("thinktime=5ms").thinktime, Duration::from_millis(5));
        assert_eq!(job("thinktime_blocks=8").thinktime_blocks, 8);
        assert!(fails("thinktime=1.5ms").contains("malformed time"));
        assert!(fails("thinktime_blocks=0").contains("out of range"));
    }

    #[test]
    fn rate_iops() {
        let j = job("rate_iops=100");
        assert_eq!((j.rate_iops, j.rate_iops_write), (Some(100), Some(100)));
        let j = job("rate_iops=100,50");
        assert_eq!((j.rate_iops, j.rate_iops_write), (Some(100), Some(50)));
        let j = job("rate_iops=,50");
        assert_eq!((j.rate_iops, j.rate_iops_write), (None, Some(50)));
        let j = job("rate_iops=100,");
        assert_eq!((j.rate_iops, j.rate_iops_write), (Some(100), None));
        assert_eq!(job("rate_iops=100\nrate_iops=0").rate_iops, None);
        assert!(fails("rate_iops=fast").contains("not a whole number"));
    }

    #[test]
    fn runtime_time_based_startdelay() {
        let j = job("runtime=30\ntime_based");
        assert_eq!((j.runtime, j.time_based), (Some(Duration::from_secs(30)), true));
        assert_eq!(job("runtime=2m").runtime, Some(Duration::from_secs(120)));
        assert_eq!(job("runtime=0").runtime, None);
        assert!(!job("runtime=1\ntime_based=0").time_based);
        assert_eq!(job("startdelay=500ms").startdelay, Duration::from_millis(500));
        assert_eq!(job("startdelay=2").startdelay, Duration::from_secs(2));
        assert!(fails("runtime=soon").contains("malformed time"));
        assert!(fails("time_based=2").contains("not a flag"));
        let e = fails("time_based");
        assert!(e.starts_with("t.fio:2:") && e.contains("needs a `runtime`"), "{e}");
        assert!(fails("startdelay=1-5").contains("ranges are not supported"));
    }

    #[test]
    fn stonewall_and_wait_for_previous() {
        assert!(job("stonewall").stonewall);
        assert!(job("wait_for_previous=1").stonewall);
        assert!(!job("").stonewall);
        assert!(fails("stonewall=on").contains("not a flag"));
    }

    #[test]
    fn randseed() {
        assert_eq!(job("randseed=1234").randseed, Some(1234));
        assert!(fails("randseed=abc").contains("not a whole number"));
    }

    #[test]
    fn zones() {
        let s = |body| job(body).strided;
        let z = |zonesize, zonerange, zoneskip| Some(Strided { zonesize, zonerange, zoneskip });
        assert_eq!(s("zonemode=strided\nzonesize=4k\nzonerange=16k"), z(4096, 16384, 0));
        assert_eq!(s("zonesize=4k\nzoneskip=1m"), z(4096, 4096, 1 << 20));
        assert_eq!(s("zonemode=none"), None);
        assert!(fails("zonemode=zbd").contains("not supported"));
        assert!(fails("zonemode=strided").contains("needs a `zonesize`"));
        assert!(fails("zonemode=none\nzonesize=4k").contains("has no effect"));
        assert!(fails("zonerange=16k").contains("has no effect"));
        assert!(fails("zonesize=0").contains("must be > 0"));
        assert!(fails("zoneskip=lots").contains("malformed size"));
    }

    #[test]
    fn headway_extensions() {
        let j = job("headway_process=db\nheadway_barrier=5\nheadway_vm=guest1\nheadway_weight=2");
        assert_eq!(j.headway_process.as_deref(), Some("db"));
        assert_eq!(j.headway_barrier, 5);
        assert_eq!(j.headway_vm.as_deref(), Some("guest1"));
        assert_eq!(j.headway_weight, 2);
        let d = job("rw=read");
        assert_eq!(
            (d.headway_process, d.headway_barrier, d.headway_vm, d.headway_weight),
            (None, 0, None, 1)
        );
        assert!(
            fails("headway_process=").contains("needs a value")
                || fails("headway_process=").contains("not a name")
        );
        assert!(fails("headway_barrier=five").contains("not a whole number"));
        assert!(fails("headway_weight=0").contains("between 1 and 1000"));
        assert!(fails("headway_vm=a b").contains("not a name"));
    }

    #[test]
    fn headway_qos_class() {
        use headway_sched::{Duration, Qos, Rate};
        let j = job("headway_rate=8800k\nheadway_delay=100\nheadway_burst=0");
        assert_eq!(j.headway_rate, Some(Rate::Bytes(8800 * 1024)));
        assert_eq!(j.headway_delay, Some(Duration::from_millis(100)));
        assert_eq!(
            j.qos(),
            Some(Qos { rate: Rate::Bytes(8800 * 1024), delay: Duration::from_millis(100), burst: 0 })
        );
        assert_eq!(job("headway_rate=200iops").headway_rate, Some(Rate::Iops(200)));
        assert_eq!(job("headway_rate=1M").headway_rate, Some(Rate::Bytes(1 << 20)));
        assert_eq!(job("headway_delay=2s").headway_delay, Some(Duration::from_secs(2)));
        // one option gives the job a class; the rest come from the default class
        assert_eq!(job("headway_delay=50ms").qos().unwrap().rate, headway_sched::qos::DEFAULT_RATE);
        assert_eq!(job("rw=read").qos(), None);
        assert!(fails("headway_rate=0").contains("must be > 0"));
        assert!(fails("headway_rate=0iops").contains("must be > 0"));
        assert!(fails("headway_rate=fast").contains("malformed size"));
        assert!(fails("headway_rate=12xiops").contains("not a whole number"));
        assert!(fails("headway_delay=soon").contains("malformed time"));
        assert!(fails("headway_burst=-1").contains("not a whole number"));
    }

    #[test]
    fn headway_workload_and_postmark_parameters() {
        use crate::postmark::PostmarkParams;
        assert_eq!(job("headway_workload=postmark").headway_postmark, Some(PostmarkParams::default()));
        assert_eq!(job("headway_workload=fio").headway_postmark, None);
        assert_eq!(job("headway_workload=postmark\nheadway_workload=fio").headway_postmark, None);
        let j = job("headway_pm_files=10000\nheadway_pm_size_min=512\nheadway_pm_size_max=10k\n\
             headway_pm_transactions=0\nheadway_pm_read_bias=-1\nheadway_pm_create_bias=10\n\
             headway_pm_block=4k,128k\nheadway_pm_create_phase=0\nheadway_workload=postmark\n\
             ioengine=psync\nruntime=10");
        let want = PostmarkParams {
            files: 10000,
            size_min: 512,
            size_max: 10240,
            transactions: 0,
            read_bias: -1,
            create_bias: 10,
            block_read: 4096,
            block_write: 131072,
            create_phase: false,
        };
        assert_eq!(j.headway_postmark, Some(want));
        let p = job("headway_workload=postmark\nheadway_pm_block=64k").headway_postmark.unwrap();
        assert_eq!((p.block_read, p.block_write), (65536, 65536));
        let f = parse_str("[global]\nheadway_pm_files=7\n[j]\nheadway_workload=postmark\n", "t.fio").unwrap();
        assert_eq!(f.jobs[0].headway_postmark.as_ref().map(|p| p.files), Some(7));
        // values, one option at a time
        let pm = |body: &str| fails(&format!("headway_workload=postmark\n{body}"));
        assert!(fails("headway_workload=filebench").contains("not fio or postmark"));
        assert!(pm("headway_pm_files=0").contains("out of range"));
        assert!(pm("headway_pm_size_min=0").contains("not between 1 and"));
        assert!(pm("headway_pm_size_max=2g").contains("not between 1 and"));
        assert!(pm("headway_pm_transactions=lots").contains("not a whole number"));
        assert!(pm("headway_pm_read_bias=11").contains("not -1 (off) or 0 to 10"));
        assert!(pm("headway_pm_create_bias=-2").contains("not -1 (off) or 0 to 10"));
        assert!(pm("headway_pm_block=1000").contains("not a multiple of 512"));
        assert!(pm("headway_pm_block=2g").contains("above"));
        assert!(pm("headway_pm_create_phase=yes").contains("not a flag"));
        // across options: the error names the line that set the offending option
        assert!(pm("headway_pm_size_min=20k").contains("smallest is above the largest"));
        let e = pm("headway_pm_size_min=4k\nheadway_pm_size_max=2k");
        assert!(e.starts_with("t.fio:4:") && e.contains("smallest is above"), "{e}");
        assert_eq!(
            fails("headway_pm_files=10"),
            "t.fio:2: option `headway_pm_files`: has no effect unless `headway_workload=postmark`"
        );
        for walk in ["rw=randread", "rwmixread=30", "bs=4k", "io_size=1m", "zonesize=4k"] {
            assert!(pm(walk).contains("has no effect with `headway_workload=postmark`"), "{walk}");
        }
        assert!(pm("ioengine=libaio").contains("one at a time"));
        assert!(pm("runtime=10\ntime_based").contains("ends after its transactions"));
    }

    #[test]
    fn name() {
        assert_eq!(job("name=reader").name, "reader");
        let e = parse_str("[global]\nname=x\n[j]\n", "t.fio").unwrap_err();
        assert!(e.to_string().contains("t.fio:2: option `name`: belongs in a job section"));
        assert!(fails("name=").contains("needs a value"));
    }

    #[test]
    fn accepted_without_effect() {
        job("description=four readers, 50 GiB apart\nfilename=/dev/sdb\ngroup_reporting\n\
             thread=1\ninvalidate=1\nrandrepeat=0\ngtod_reduce=1\nclocksource=cpu\n\
             fallocate=none\nunit_base=8");
        assert_eq!(job("filename=/dev/dsk/foo@3,0\\:c").name, "j");
        assert!(fails("filename=/dev/sdb:/dev/sdc").contains("several files"));
        assert!(fails("group_reporting=yes").contains("not a flag"));
        assert!(fails("clocksource=tsc").contains("not gettimeofday"));
        assert!(fails("fallocate=maybe").contains("not a fallocate mode"));
        assert!(fails("unit_base=2").contains("not 0, 1 or 8"));
        assert!(fails("description=").contains("needs a value"));
    }

    #[test]
    fn unknown_options_are_errors() {
        let e = parse_str("[j]\nbs=4k\nioscheduler=deadline\n", "jobs/x.fio").unwrap_err();
        assert!(matches!(e, JobFileError::UnknownOption { .. }));
        assert_eq!(
            e.to_string(),
            "jobs/x.fio:3: unknown option `ioscheduler` (headway does not implement it)"
        );
    }
}
