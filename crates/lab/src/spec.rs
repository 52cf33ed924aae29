//! Lab specs: what to boot, what to serve, what to run (TOML).
//!
//! Every field has a default, so an empty file is a valid spec (one ext4 guest, guest
//! scheduler `none`, host `stream` on the emulated wd5000aaks, one dd reader). A spec is a
//! matrix: one *point* per host scheduler x guest scheduler x file system x repeat
//! ([`Spec::points`]).
//!
//! ```toml
//! name = "par-read"
//! repeat = 1
//! # pairs = [["noop", "bfq"], ["stream", "none"]]   # instead of the product of the lists
//!
//! [guest]
//! kernel = "cloud"              # Debian kernel flavour: cloud (6.1) | cloud-6.12 | generic (has reiserfs)
//! fs = ["ext4"]                 # ext2 ext3 ext4 xfs reiserfs, or raw (no file system)
//! mkfs_options = ""
//! mount_options = ""
//! guest_scheduler = ["bfq", "none"]   # none mq-deadline bfq kyber stream (kernel/, built for the guest)
//! memory_mb = 512               # sizes the guest's page cache
//! cpus = 1
//! queue_depth = 32              # requests the guest's virtio disk keeps in flight
//! disks = 1                     # headway disks per guest
//! guests = 1                    # guests per server, each on its own part of the disks
//! timeout_s = 900               # the whole point; a guest past it is killed
//! accel = "auto"                # auto (KVM when a probe boot works, else TCG) | kvm | tcg
//! modules = []                  # more kernel modules loaded at boot (["null_blk"])
//! [guest.tunables]              # sysfs names: the scheduler's (iosched/) or the queue's
//! low_latency = 0
//!
//! [headway]
//! disk = "wd5000aaks"           # what `--disk` takes (a .parv path relative to the spec)
//! schedulers = ["noop", "stream"]
//! context = "connection"        # connection | none
//! write_cache = "through"       # through | back
//! queue_depth = 1               # commands the emulated drive holds and reorders
//! size = "64G"                  # export size (default: the model's capacity)
//! [headway.set]                 # scheduler tunables, as `headway serve --set`
//!
//! [workload]                    # exactly one of fio, postmark, dd, steps
//! fio = "par-read.fio"          # relative to this file
//! tools = []                    # more host programs the guest gets (steps: ["as", "ld"])
//! ```
//!
//! Errors name the file, the line and the key (`lab.toml:7: guest.fs: unknown variant
//! `ntfs`, expected one of ...`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use headway_sched::units::{parse_size, SizeBase};
use serde::{Deserialize, Serialize};

/// A file system the guest makes on each headway disk.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fs {
    Ext2,
    Ext3,
    Ext4,
    Xfs,
    Reiserfs,
    /// No file system: the workload runs on the block device.
    Raw,
}

impl Fs {
    pub fn name(self) -> &'static str {
        match self {
            Fs::Ext2 => "ext2",
            Fs::Ext3 => "ext3",
            Fs::Ext4 => "ext4",
            Fs::Xfs => "xfs",
            Fs::Reiserfs => "reiserfs",
            Fs::Raw => "raw",
        }
    }

    /// The mkfs program the guest runs (`None` for raw).
    pub fn mkfs(self) -> Option<&'static str> {
        Some(match self {
            Fs::Ext2 => "mkfs.ext2",
            Fs::Ext3 => "mkfs.ext3",
            Fs::Ext4 => "mkfs.ext4",
            Fs::Xfs => "mkfs.xfs",
            Fs::Reiserfs => "mkfs.reiserfs",
            Fs::Raw => return None,
        })
    }

    /// Flags that make mkfs run without questions and, for ext*, write every inode table
    /// now: the kernel's lazy initialisation would otherwise write them during the workload.
    pub fn mkfs_quiet(self) -> &'static str {
        match self {
            // lazy_itable_init=1 with the mount option noinit_itable: nothing is written
            // in the background and mkfs stays quick on a 500 GB disk.
            Fs::Ext2 | Fs::Ext3 | Fs::Ext4 => "-q -F",
            Fs::Xfs => "-q -f",
            Fs::Reiserfs => "-q -f",
            Fs::Raw => "",
        }
    }

    /// Mount options always given (before the spec's own).
    pub fn mount_base(self) -> &'static str {
        match self {
            Fs::Ext4 => "noinit_itable",
            _ => "",
        }
    }
}

/// A Linux I/O scheduler in the guest.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
pub enum GuestScheduler {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "mq-deadline")]
    MqDeadline,
    #[serde(rename = "bfq")]
    Bfq,
    #[serde(rename = "kyber")]
    Kyber,
    /// headway's stream scheduling in the kernel: the out-of-tree module `stream-iosched`
    /// (kernel/), built for the guest's kernel (`kernel/build.sh`, `make kmod`) and loaded
    /// into the guest before the scheduler is selected.
    #[serde(rename = "stream")]
    Stream,
}

impl GuestScheduler {
    pub fn name(self) -> &'static str {
        match self {
            GuestScheduler::None => "none",
            GuestScheduler::MqDeadline => "mq-deadline",
            GuestScheduler::Bfq => "bfq",
            GuestScheduler::Kyber => "kyber",
            GuestScheduler::Stream => "stream",
        }
    }

    /// Is it built outside the kernel package (headway's own module)?
    pub fn out_of_tree(self) -> bool {
        self == GuestScheduler::Stream
    }

    /// Its sysfs tunables in Linux 6.1 (`/sys/block/DEV/queue/iosched/`).
    pub fn tunables(self) -> &'static [&'static str] {
        match self {
            GuestScheduler::None => &[],
            GuestScheduler::MqDeadline => &[
                "read_expire",
                "write_expire",
                "writes_starved",
                "front_merges",
                "fifo_batch",
                "async_depth",
                "prio_aging_expire",
            ],
            GuestScheduler::Bfq => &[
                "slice_idle",
                "slice_idle_us",
                "low_latency",
                "back_seek_max",
                "back_seek_penalty",
                "fifo_expire_sync",
                "fifo_expire_async",
                "timeout_sync",
                "max_budget",
                "strict_guarantees",
            ],
            GuestScheduler::Kyber => &["read_lat_nsec", "write_lat_nsec"],
            // headway's names and units (times in ms; tolerance_factor a decimal with three
            // digits, `0.500`); the module's read-only counters are not tunables
            GuestScheduler::Stream => STREAM_TUNABLES,
        }
    }
}

/// The `stream` elevator's sysfs tunables (`/sys/block/DEV/queue/iosched/`).
pub const STREAM_TUNABLES: &[&str] = &[
    "stream_threshold",
    "tolerance_factor",
    "stream_time_slice",
    "read_expire",
    "write_expire",
    "fifo_batch",
    "writes_starved",
    "front_merges",
    "device_depth",
    "estimator_table",
];

/// The `stream` elevator's read-only files (in `lab.guest_counters` after a run): its
/// counters, and `estimator` (`learned` or `table`).
pub const STREAM_COUNTERS: &[&str] = &[
    "inserted",
    "merged",
    "dispatched",
    "completed",
    "in_flight",
    "queued",
    "bypassed",
    "waits",
    "waits_caught",
    "waits_expired",
    "second_chances",
    "streams",
    "slice_expiries",
    "urgent_preemptions",
    "estimator",
];

/// Queue attributes a spec may set whatever the scheduler (`/sys/block/DEV/queue/`).
pub const QUEUE_TUNABLES: &[&str] = &[
    "read_ahead_kb",
    "nr_requests",
    "max_sectors_kb",
    "nomerges",
    "rotational",
    "rq_affinity",
    "add_random",
];

/// How QEMU runs the guest.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// KVM when a probe boot succeeds, else TCG.
    #[default]
    Auto,
    Kvm,
    Tcg,
}

/// Debian kernel flavour (`linux-image-cloud-amd64`, `linux-image-6.12-cloud-amd64` or
/// `linux-image-amd64`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum KernelFlavour {
    /// Small, boots fast; no reiserfs. Debian 12's 6.1.
    #[default]
    Cloud,
    /// The 6.12 backport of the cloud kernel (its modules are `.ko.xz`).
    #[serde(rename = "cloud-6.12")]
    Cloud612,
    /// Debian's generic kernel: every file system module, reiserfs included.
    Generic,
}

impl KernelFlavour {
    pub fn metapackage(self) -> &'static str {
        match self {
            KernelFlavour::Cloud => "linux-image-cloud-amd64",
            KernelFlavour::Cloud612 => "linux-image-6.12-cloud-amd64",
            KernelFlavour::Generic => "linux-image-amd64",
        }
    }

    /// The name a spec gives it (`guest.kernel`).
    pub fn name(self) -> &'static str {
        match self {
            KernelFlavour::Cloud => "cloud",
            KernelFlavour::Cloud612 => "cloud-6.12",
            KernelFlavour::Generic => "generic",
        }
    }
}

/// A single value or a list (`fs = "ext4"` or `fs = ["ext4", "xfs"]`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

/// By hand rather than `untagged`, so that a bad element keeps its own message
/// (`unknown variant `ntfs`, expected one of ...`).
impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{value, IntoDeserializer, SeqAccess, Visitor};
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                T::deserialize(s.into_deserializer()).map(OneOrMany::One)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::<T>::deserialize(value::SeqAccessDeserializer::new(seq)).map(OneOrMany::Many)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<T: Clone> OneOrMany<T> {
    pub fn to_vec(&self) -> Vec<T> {
        match self {
            OneOrMany::One(t) => vec![t.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// A tunable's value: written to sysfs or given to `--set` as text.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Bool(b) => write!(f, "{}", u8::from(*b)),
            Value::Str(s) => f.write_str(s),
        }
    }
}

pub const DEFAULT_MEMORY_MB: u32 = 512;
pub const DEFAULT_CPUS: u32 = 1;
/// Requests the guest keeps in flight on a headway disk (a SATA drive's NCQ depth).
pub const DEFAULT_GUEST_QUEUE_DEPTH: u32 = 32;
/// Seconds a point may take, boot to power-off.
pub const DEFAULT_TIMEOUT_S: u64 = 900;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct GuestSpec {
    pub kernel: KernelFlavour,
    pub fs: OneOrMany<Fs>,
    pub mkfs_options: String,
    pub mount_options: String,
    pub guest_scheduler: OneOrMany<GuestScheduler>,
    pub tunables: BTreeMap<String, Value>,
    pub memory_mb: u32,
    pub cpus: u32,
    pub queue_depth: u32,
    pub disks: u32,
    pub guests: u32,
    pub timeout_s: u64,
    pub accel: Accel,
    /// More of the kernel package's modules the guest loads at boot, by name, with their
    /// prerequisites (`modules = ["null_blk"]`); a step may `rmmod` one and `insmod
    /// /lib/modules/FILE` it again with parameters.
    pub modules: Vec<String>,
}

impl Default for GuestSpec {
    fn default() -> Self {
        GuestSpec {
            kernel: KernelFlavour::Cloud,
            fs: OneOrMany::One(Fs::Ext4),
            mkfs_options: String::new(),
            mount_options: String::new(),
            guest_scheduler: OneOrMany::One(GuestScheduler::None),
            tunables: BTreeMap::new(),
            memory_mb: DEFAULT_MEMORY_MB,
            cpus: DEFAULT_CPUS,
            queue_depth: DEFAULT_GUEST_QUEUE_DEPTH,
            disks: 1,
            guests: 1,
            timeout_s: DEFAULT_TIMEOUT_S,
            accel: Accel::Auto,
            modules: Vec::new(),
        }
    }
}

/// What the scheduler on the server learns of the issuer (`headway serve --context`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Context {
    #[default]
    Connection,
    None,
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::Connection => "connection",
            Context::None => "none",
        }
    }
}

/// The emulated drive's write cache.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WriteCacheMode {
    #[default]
    Through,
    Back,
}

impl WriteCacheMode {
    /// The drive model's setting.
    pub fn model(self) -> headway_disk::WriteCache {
        match self {
            WriteCacheMode::Through => headway_disk::WriteCache::Through,
            WriteCacheMode::Back => headway_disk::WriteCache::Back,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeadwaySpec {
    pub disk: String,
    pub schedulers: OneOrMany<String>,
    pub context: Context,
    pub write_cache: WriteCacheMode,
    pub queue_depth: u32,
    /// Export size (`64G`); `None`: the drive model's capacity.
    pub size: Option<String>,
    pub set: BTreeMap<String, Value>,
}

impl HeadwaySpec {
    /// `set` as the schedulers' settings (what `--set NAME=VALUE` gives).
    pub fn settings(&self) -> headway_sched::Settings {
        let mut s = headway_sched::Settings::new();
        for (k, v) in &self.set {
            s.set(k, &v.to_string());
        }
        s
    }
}

impl Default for HeadwaySpec {
    fn default() -> Self {
        HeadwaySpec {
            disk: headway_disk::DEFAULT.to_string(),
            schedulers: OneOrMany::One("stream".into()),
            context: Context::Connection,
            write_cache: WriteCacheMode::Through,
            queue_depth: headway_nbd::DEFAULT_QUEUE_DEPTH,
            size: None,
            set: BTreeMap::new(),
        }
    }
}

/// dd readers: `readers` processes each reading its own file (or, on a raw disk, its own
/// region `size` apart) sequentially with `bs` blocks.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DdSpec {
    pub readers: u32,
    pub size: String,
    pub bs: String,
    /// Drop the guest's page cache between writing the files and reading them.
    pub drop_caches: bool,
}

impl Default for DdSpec {
    fn default() -> Self {
        DdSpec { readers: 1, size: "64M".into(), bs: "1M".into(), drop_caches: true }
    }
}

/// A PostMark configuration (the `set` commands of postmark 1.5x; defaults PostMark's own).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PostmarkSpec {
    pub number: u32,
    pub transactions: u32,
    pub size_min: u64,
    pub size_max: u64,
    pub read: u64,
    pub write: u64,
    pub bias_read: i32,
    pub bias_create: i32,
    pub buffering: bool,
    pub subdirectories: u32,
    pub seed: u32,
}

impl Default for PostmarkSpec {
    fn default() -> Self {
        PostmarkSpec {
            number: 500,
            transactions: 500,
            size_min: 500,
            size_max: 10_000,
            read: 512,
            write: 512,
            bias_read: 5,
            bias_create: 5,
            buffering: true,
            subdirectories: 0,
            seed: 42,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// A fio job file (relative paths are relative to the spec).
    pub fio: Option<PathBuf>,
    pub postmark: Option<PostmarkSpec>,
    pub dd: Option<DdSpec>,
    /// Shell commands run in order in the mounted file system (`$HEADWAY_DIR`) or, raw,
    /// with `$HEADWAY_DISK` the block device.
    pub steps: Option<Vec<String>>,
    /// More host programs for the guest (with their shared libraries), on `PATH` there:
    /// what the steps run beyond busybox, fio and dd (`tools = ["as", "ld"]`).
    #[serde(default)]
    pub tools: Vec<String>,
}

/// The one workload a spec runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    Fio { path: PathBuf, text: String },
    Postmark(PostmarkSpec),
    Dd(DdSpec),
    Steps(Vec<String>),
}

impl Workload {
    pub fn kind(&self) -> &'static str {
        match self {
            Workload::Fio { .. } => "fio",
            Workload::Postmark(_) => "postmark",
            Workload::Dd(_) => "dd",
            Workload::Steps(_) => "steps",
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
struct RawSpec {
    name: Option<String>,
    repeat: u32,
    pairs: Option<Vec<Pair>>,
    guest: GuestSpec,
    headway: HeadwaySpec,
    workload: WorkloadSpec,
}

impl Default for RawSpec {
    fn default() -> Self {
        RawSpec {
            name: None,
            repeat: 1,
            pairs: None,
            guest: GuestSpec::default(),
            headway: HeadwaySpec::default(),
            workload: WorkloadSpec::default(),
        }
    }
}

/// A checked spec.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    pub path: PathBuf,
    pub repeat: u32,
    pub guest: GuestSpec,
    pub headway: HeadwaySpec,
    pub workload: Workload,
    /// Export size in bytes, `None` for the model's capacity.
    pub size: Option<u64>,
    /// `pairs`: the (host, guest) scheduler pairs to run instead of every combination of
    /// `headway.schedulers` and `guest.guest_scheduler`.
    pub pairs: Option<Vec<Pair>>,
    /// `workload.tools`: more host programs for the guest.
    pub tools: Vec<String>,
}

/// A host scheduler with a guest scheduler (`pairs = [["noop", "bfq"], ["stream", "none"]]`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Pair(pub String, pub GuestScheduler);

/// One run: a host scheduler, a guest scheduler, a file system, a repeat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Point {
    pub scheduler: String,
    pub guest_scheduler: GuestScheduler,
    pub fs: Fs,
    pub repeat: u32,
}

impl Point {
    /// A file-name-safe label: `stream.bfq.ext4.r0`.
    pub fn label(&self) -> String {
        let s: String = self
            .scheduler
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
            .collect();
        format!("{s}.{}.{}.r{}", self.guest_scheduler.name(), self.fs.name(), self.repeat)
    }
}

/// A spec that cannot be used: the file, the line (0 when the file as a whole is at fault)
/// and the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {}{msg}", file.display(), if key.is_empty() { String::new() } else { format!("{key}: ") })]
pub struct SpecError {
    pub file: PathBuf,
    pub line: usize,
    pub key: String,
    pub msg: String,
}

impl Spec {
    /// Read and check the spec at `path`.
    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| SpecError {
            file: path.to_path_buf(),
            line: 0,
            key: String::new(),
            msg: format!("cannot read: {e}"),
        })?;
        Spec::parse(path, &text)
    }

    /// Check `text` as the spec `path` (relative workload files are read beside it).
    pub fn parse(path: &Path, text: &str) -> Result<Spec, SpecError> {
        let err = |key: &str, msg: String| {
            let line = key_line(text, key);
            SpecError { file: path.to_path_buf(), line, key: key.to_string(), msg }
        };
        let raw: RawSpec = toml::from_str(text).map_err(|e| {
            let (line, key) = match e.span() {
                Some(span) => locate(text, span.start),
                None => (0, String::new()),
            };
            SpecError { file: path.to_path_buf(), line, key, msg: e.message().to_string() }
        })?;
        let mut raw = raw;
        if let Some(pairs) = &raw.pairs {
            if pairs.is_empty() {
                return Err(err("pairs", "names no pair".into()));
            }
            // the lists the rest of the spec reads (modules, tunables, servers) are the pairs'
            let mut hosts: Vec<String> = Vec::new();
            let mut guests: Vec<GuestScheduler> = Vec::new();
            for Pair(h, g) in pairs {
                if !hosts.contains(h) {
                    hosts.push(h.clone());
                }
                if !guests.contains(g) {
                    guests.push(*g);
                }
            }
            for key in ["headway.schedulers", "guest.guest_scheduler"] {
                if key_line(text, key) > 0 {
                    return Err(err(key, "give `pairs` or the scheduler lists, not both".into()));
                }
            }
            raw.headway.schedulers = OneOrMany::Many(hosts);
            raw.guest.guest_scheduler = OneOrMany::Many(guests);
        }
        let g = &raw.guest;
        if raw.repeat == 0 {
            return Err(err("repeat", "must be at least 1".into()));
        }
        for (key, v, lo, hi) in [
            ("guest.memory_mb", g.memory_mb as u64, 128, 65_536),
            ("guest.cpus", g.cpus as u64, 1, 64),
            ("guest.queue_depth", g.queue_depth as u64, 1, 1024),
            ("guest.disks", g.disks as u64, 1, 16),
            ("guest.guests", g.guests as u64, 1, 16),
            ("guest.timeout_s", g.timeout_s, 10, 86_400),
            ("headway.queue_depth", raw.headway.queue_depth as u64, 1, 256),
        ] {
            if !(lo..=hi).contains(&v) {
                return Err(err(key, format!("{v} is out of range {lo}..={hi}")));
            }
        }
        let fss = g.fs.to_vec();
        if fss.is_empty() {
            return Err(err("guest.fs", "names no file system".into()));
        }
        let scheds = g.guest_scheduler.to_vec();
        if scheds.is_empty() {
            return Err(err("guest.guest_scheduler", "names no scheduler".into()));
        }
        for name in g.tunables.keys() {
            let known = QUEUE_TUNABLES.contains(&name.as_str())
                || scheds.iter().any(|s| s.tunables().contains(&name.as_str()));
            if !known {
                let mut all: Vec<&str> = QUEUE_TUNABLES.to_vec();
                for s in &scheds {
                    all.extend(s.tunables());
                }
                return Err(err(
                    &format!("guest.tunables.{name}"),
                    format!(
                        "not a tunable of the queue or of guest scheduler(s) {} (known: {})",
                        scheds.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "),
                        all.join(", ")
                    ),
                ));
            }
        }
        // what `--disk` takes; a parameter file relative to the spec, kept as that path
        let base = path.parent().unwrap_or(Path::new(""));
        if let Err(e) = headway_disk::resolve_from(base, &raw.headway.disk) {
            let cause = std::error::Error::source(&e).map(|c| format!(": {c}")).unwrap_or_default();
            return Err(err("headway.disk", format!("{e}{cause}")));
        }
        if headway_disk::is_parameter_file(&raw.headway.disk) {
            raw.headway.disk = base.join(&raw.headway.disk).display().to_string();
        }
        let hw = &raw.headway;
        if hw.schedulers.to_vec().is_empty() {
            return Err(err("headway.schedulers", "names no scheduler".into()));
        }
        let size = match &hw.size {
            None => None,
            Some(s) => Some(parse_size(s, SizeBase::Binary).map_err(|m| err("headway.size", m.to_string()))?),
        };
        let w = &raw.workload;
        let given = [w.fio.is_some(), w.postmark.is_some(), w.dd.is_some(), w.steps.is_some()];
        let workload = match given.iter().filter(|&&b| b).count() {
            0 => Workload::Dd(DdSpec::default()),
            1 => {
                if let Some(f) = &w.fio {
                    let full = match path.parent() {
                        Some(dir) if f.is_relative() => dir.join(f),
                        _ => f.clone(),
                    };
                    let text = std::fs::read_to_string(&full)
                        .map_err(|e| err("workload.fio", format!("cannot read {}: {e}", full.display())))?;
                    Workload::Fio { path: full, text }
                } else if let Some(p) = &w.postmark {
                    if p.size_min == 0 || p.size_min > p.size_max {
                        return Err(err("workload.postmark.size_min", "must be 1..=size_max".into()));
                    }
                    Workload::Postmark(p.clone())
                } else if let Some(d) = &w.dd {
                    for (k, v) in [("size", &d.size), ("bs", &d.bs)] {
                        parse_size(v, SizeBase::Binary)
                            .map_err(|m| err(&format!("workload.dd.{k}"), m.to_string()))?;
                    }
                    if d.readers == 0 {
                        return Err(err("workload.dd.readers", "must be at least 1".into()));
                    }
                    Workload::Dd(d.clone())
                } else {
                    let steps = w.steps.clone().unwrap_or_default();
                    if steps.is_empty() {
                        return Err(err("workload.steps", "is empty".into()));
                    }
                    Workload::Steps(steps)
                }
            }
            _ => return Err(err("workload", "give exactly one of fio, postmark, dd, steps".into())),
        };
        for t in &w.tools {
            if t.is_empty() || t.contains('/') || t.starts_with('.') {
                return Err(err("workload.tools", format!("`{t}`: give a program name found on PATH")));
            }
        }
        if matches!(workload, Workload::Postmark(_)) && fss.contains(&Fs::Raw) {
            return Err(err("guest.fs", "postmark needs a file system (not raw)".into()));
        }
        let name = raw.name.clone().unwrap_or_else(|| {
            path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "lab".into())
        });
        Ok(Spec {
            name,
            path: path.to_path_buf(),
            repeat: raw.repeat,
            guest: raw.guest,
            headway: raw.headway,
            tools: w.tools.clone(),
            workload,
            size,
            pairs: raw.pairs,
        })
    }

    /// Every point of the matrix, host scheduler outermost (or the `pairs` in their order),
    /// repeat innermost.
    pub fn points(&self) -> Vec<Point> {
        let pairs: Vec<(String, GuestScheduler)> = match &self.pairs {
            Some(p) => p.iter().map(|Pair(h, g)| (h.clone(), *g)).collect(),
            None => self
                .headway
                .schedulers
                .to_vec()
                .into_iter()
                .flat_map(|h| self.guest.guest_scheduler.to_vec().into_iter().map(move |g| (h.clone(), g)))
                .collect(),
        };
        let mut out = Vec::new();
        for (scheduler, guest_scheduler) in pairs {
            for fs in self.guest.fs.to_vec() {
                for repeat in 0..self.repeat {
                    out.push(Point { scheduler: scheduler.clone(), guest_scheduler, fs, repeat });
                }
            }
        }
        out
    }
}

/// 1-based line of byte `offset`, and the dotted key of the assignment or table there.
fn locate(text: &str, offset: usize) -> (usize, String) {
    let offset = offset.min(text.len());
    let line = text[..offset].matches('\n').count() + 1;
    let mut table = String::new();
    for l in text.lines().take(line) {
        let t = l.trim();
        if t.starts_with('[') && !t.starts_with("[[") {
            table = t.trim_matches(|c| c == '[' || c == ']').trim().to_string();
        }
    }
    let this = text.lines().nth(line - 1).unwrap_or("").trim();
    let key = if this.starts_with('[') {
        this.trim_matches(|c| c == '[' || c == ']').trim().to_string()
    } else {
        let k = this.split('=').next().unwrap_or("").trim().trim_matches('"');
        match (table.is_empty(), k.is_empty()) {
            (_, true) => table,
            (true, false) => k.to_string(),
            (false, false) => format!("{table}.{k}"),
        }
    };
    (line, key)
}

/// The line where the dotted `key` is assigned (or its table starts); 0 when absent
/// (the default was at fault).
fn key_line(text: &str, key: &str) -> usize {
    let mut table = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            table = t.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            if table == key {
                return i + 1;
            }
            continue;
        }
        if let Some((k, _)) = t.split_once('=') {
            let k = k.trim().trim_matches('"');
            let full = if table.is_empty() { k.to_string() } else { format!("{table}.{k}") };
            if full == key || key.starts_with(&format!("{full}.")) {
                return i + 1;
            }
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Spec, SpecError> {
        Spec::parse(Path::new("lab.toml"), text)
    }

    #[test]
    fn an_empty_spec_has_every_default() {
        let s = parse("").unwrap();
        assert_eq!(s.guest.memory_mb, DEFAULT_MEMORY_MB);
        assert_eq!(s.guest.fs.to_vec(), vec![Fs::Ext4]);
        assert_eq!(s.guest.guest_scheduler.to_vec(), vec![GuestScheduler::None]);
        assert_eq!(s.headway.disk, headway_disk::DEFAULT);
        assert_eq!(s.headway.schedulers.to_vec(), vec!["stream".to_string()]);
        assert_eq!(s.workload, Workload::Dd(DdSpec::default()));
        assert_eq!(s.points().len(), 1);
        assert_eq!(s.name, "lab");
    }

    #[test]
    fn points_are_the_product_of_the_axes() {
        let s = parse(
            "repeat = 2\n[guest]\nfs = [\"ext4\", \"xfs\"]\nguest_scheduler = [\"bfq\", \"none\"]\n\
             [headway]\nschedulers = [\"noop\", \"stream\", \"cfq\"]\n",
        )
        .unwrap();
        let p = s.points();
        assert_eq!(p.len(), 3 * 2 * 2 * 2);
        assert_eq!(p[0].label(), "noop.bfq.ext4.r0");
        assert_eq!(p[1].label(), "noop.bfq.ext4.r1");
        assert_eq!(p.last().unwrap().label(), "cfq.none.xfs.r1");
        let labels: std::collections::HashSet<_> = p.iter().map(|p| p.label()).collect();
        assert_eq!(labels.len(), p.len());
    }

    #[test]
    fn pairs_replace_the_product() {
        let s = parse(
            "pairs = [[\"noop\", \"bfq\"], [\"stream\", \"none\"], [\"noop\", \"kyber\"]]\n\
             [guest]\nguest_scheduler = \"mq-deadline\"\n",
        );
        let e = s.unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (3, "guest.guest_scheduler"), "{e}");
        let s =
            parse("pairs = [[\"noop\", \"bfq\"], [\"stream\", \"none\"], [\"noop\", \"kyber\"]]\n").unwrap();
        let labels: Vec<String> = s.points().iter().map(|p| p.label()).collect();
        assert_eq!(labels, ["noop.bfq.ext4.r0", "stream.none.ext4.r0", "noop.kyber.ext4.r0"]);
        assert_eq!(s.headway.schedulers.to_vec(), ["noop", "stream"]);
        assert_eq!(
            s.guest.guest_scheduler.to_vec(),
            [GuestScheduler::Bfq, GuestScheduler::None, GuestScheduler::Kyber]
        );
        let e = parse("pairs = [[\"noop\", \"cfq\"]]\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (1, "pairs"), "{e}");
        // tunables are checked against the pairs' guest schedulers
        assert!(parse("pairs = [[\"noop\", \"bfq\"]]\n[guest.tunables]\nlow_latency = 0\n").is_ok());
    }

    #[test]
    fn unknown_keys_name_line_and_key() {
        let e = parse("[guest]\ncpus = 2\nmemroy_mb = 1024\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert_eq!(e.key, "guest.memroy_mb", "{e}");
        assert!(e.msg.contains("unknown field"), "{e}");
        assert!(e.to_string().starts_with("lab.toml:3: guest.memroy_mb: "), "{e}");
    }

    #[test]
    fn bad_values_name_line_and_key() {
        let e = parse("[guest]\n\nfs = [\"ext4\", \"ntfs\"]\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (3, "guest.fs"), "{e}");
        assert!(e.msg.contains("ntfs"), "{e}");
        let e = parse("[headway]\nqueue_depth = \"deep\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (2, "headway.queue_depth"), "{e}");
        let e = parse("[guest]\nmemory_mb = 64\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (2, "guest.memory_mb"), "{e}");
        assert!(e.msg.contains("out of range"), "{e}");
        let e = parse("[headway]\ndisk = \"floppy\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (2, "headway.disk"), "{e}");
        assert_eq!(e.msg, headway_disk::resolve("floppy").unwrap_err().to_string());
        let e = parse("[headway]\nsize = \"12Q\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (2, "headway.size"), "{e}");
    }

    /// `headway.disk` takes what `--disk` takes; a parameter file is read beside the spec.
    #[test]
    fn disk_may_be_a_parameter_file_beside_the_spec() {
        let valid = headway_disk::reference_data().join("disksim-valid");
        let s = Spec::parse(&valid.join("lab.toml"), "[headway]\ndisk = \"cheetah9LP.parv\"\n").unwrap();
        assert_eq!(s.headway.disk, valid.join("cheetah9LP.parv").display().to_string());
        assert_eq!(headway_disk::resolve(&s.headway.disk).unwrap().name, "cheetah9LP");
        let e = parse("[headway]\ndisk = \"gone.parv\"\n").unwrap_err();
        assert!(e.msg.starts_with("importing gone.parv: "), "{e}");
    }

    #[test]
    fn tunables_must_belong_to_a_chosen_scheduler_or_the_queue() {
        let ok = parse(
            "[guest]\nguest_scheduler = \"bfq\"\n[guest.tunables]\nlow_latency = 0\nread_ahead_kb = 512\n",
        );
        assert!(ok.is_ok(), "{ok:?}");
        let e = parse("[guest]\nguest_scheduler = \"mq-deadline\"\n[guest.tunables]\nlow_latency = 0\n")
            .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (4, "guest.tunables.low_latency"), "{e}");
        assert!(e.msg.contains("fifo_batch"), "lists what is known: {e}");
    }

    #[test]
    fn stream_is_a_guest_scheduler_with_its_tunables() {
        let s = parse(
            "[guest]\nkernel = \"cloud-6.12\"\nguest_scheduler = [\"stream\", \"mq-deadline\"]\n\
             [guest.tunables]\nstream_threshold = 4\ntolerance_factor = \"0.500\"\nstream_time_slice = 124\n\
             fifo_batch = 16\n",
        )
        .unwrap();
        assert_eq!(s.guest.kernel, KernelFlavour::Cloud612);
        assert_eq!(s.guest.kernel.metapackage(), "linux-image-6.12-cloud-amd64");
        assert_eq!(s.guest.guest_scheduler.to_vec(), [GuestScheduler::Stream, GuestScheduler::MqDeadline]);
        assert_eq!(s.guest.tunables["tolerance_factor"], Value::Str("0.500".into()));
        assert_eq!(s.guest.tunables["tolerance_factor"].to_string(), "0.500");
        let labels: Vec<String> = s.points().iter().map(|p| p.label()).collect();
        assert_eq!(labels, ["stream.stream.ext4.r0", "stream.mq-deadline.ext4.r0"]);
        assert!(GuestScheduler::Stream.out_of_tree() && !GuestScheduler::Bfq.out_of_tree());
        for t in STREAM_TUNABLES {
            let spec = format!("[guest]\nguest_scheduler = \"stream\"\n[guest.tunables]\n{t} = 1\n");
            assert!(parse(&spec).is_ok(), "{t}");
        }
        // a counter is read, not set; a tunable of another scheduler is refused
        for t in ["inserted", "low_latency"] {
            let spec = format!("[guest]\nguest_scheduler = \"stream\"\n[guest.tunables]\n{t} = 1\n");
            let e = parse(&spec).unwrap_err();
            assert_eq!((e.line, e.key.clone()), (4, format!("guest.tunables.{t}")), "{e}");
            assert!(e.msg.contains("stream_time_slice") && e.msg.contains("estimator_table"), "{e}");
        }
        // in pairs too
        let s = parse(
            "pairs = [[\"noop\", \"stream\"], [\"noop\", \"bfq\"]]\n[guest.tunables]\nwrites_starved = 2\n",
        )
        .unwrap();
        assert_eq!(s.points()[0].label(), "noop.stream.ext4.r0");
    }

    #[test]
    fn kernel_flavours_by_name() {
        for (name, flavour, meta) in [
            ("cloud", KernelFlavour::Cloud, "linux-image-cloud-amd64"),
            ("cloud-6.12", KernelFlavour::Cloud612, "linux-image-6.12-cloud-amd64"),
            ("generic", KernelFlavour::Generic, "linux-image-amd64"),
        ] {
            let s = parse(&format!("[guest]\nkernel = \"{name}\"\n")).unwrap();
            assert_eq!(s.guest.kernel, flavour);
            assert_eq!((flavour.name(), flavour.metapackage()), (name, meta));
        }
        let e = parse("[guest]\nkernel = \"cloud-6.13\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (2, "guest.kernel"), "{e}");
        assert!(e.msg.contains("cloud-6.12"), "{e}");
    }

    #[test]
    fn exactly_one_workload() {
        let e = parse("[workload]\nsteps = [\"true\"]\ndd = { readers = 2 }\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (1, "workload"), "{e}");
        let e = parse("[workload]\nfio = \"missing.fio\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (2, "workload.fio"), "{e}");
        let e = parse("[guest]\nfs = \"raw\"\n[workload.postmark]\nnumber = 10\n").unwrap_err();
        assert_eq!(e.key, "guest.fs", "{e}");
        let s = parse("[workload.postmark]\nnumber = 10\ntransactions = 20\n").unwrap();
        match s.workload {
            Workload::Postmark(p) => assert_eq!((p.number, p.transactions, p.size_max), (10, 20, 10_000)),
            w => panic!("{w:?}"),
        }
    }

    #[test]
    fn a_guest_may_load_more_kernel_modules() {
        let s = parse("[guest]\nmodules = [\"null_blk\"]\n[workload]\nsteps = [\"true\"]\n").unwrap();
        assert_eq!(s.guest.modules, vec!["null_blk".to_string()]);
        assert!(parse("").unwrap().guest.modules.is_empty());
    }

    #[test]
    fn steps_take_more_tools_by_program_name() {
        let s = parse("[workload]\nsteps = [\"ld -r -o /tmp/x *.o\"]\ntools = [\"as\", \"ld\"]\n").unwrap();
        assert_eq!(s.tools, vec!["as".to_string(), "ld".to_string()]);
        assert!(parse("[workload]\nsteps = [\"true\"]\n").unwrap().tools.is_empty());
        let e = parse("[workload]\nsteps = [\"true\"]\ntools = [\"../ld\"]\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (3, "workload.tools"), "{e}");
    }

    #[test]
    fn fio_workloads_are_read_beside_the_spec() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("j.fio"), "[a]\nrw=read\n").unwrap();
        let spec = dir.path().join("s.toml");
        std::fs::write(&spec, "name = \"x\"\n[workload]\nfio = \"j.fio\"\n").unwrap();
        let s = Spec::load(&spec).unwrap();
        assert_eq!(s.name, "x");
        match s.workload {
            Workload::Fio { path, text } => {
                assert_eq!(path, dir.path().join("j.fio"));
                assert!(text.contains("rw=read"));
            }
            w => panic!("{w:?}"),
        }
        let e = Spec::load(&dir.path().join("absent.toml")).unwrap_err();
        assert_eq!(e.line, 0);
        assert!(e.to_string().contains("absent.toml:0: cannot read"), "{e}");
    }
}

#[cfg(test)]
mod shipped {
    use super::*;

    /// Every spec in `experiments/lab/` loads (its workload files found, its keys known).
    #[test]
    fn every_shipped_spec_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/lab");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).expect("experiments/lab exists") {
            let p = e.expect("a directory entry").path();
            if p.extension().is_some_and(|x| x == "toml") {
                let s = Spec::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                assert!(!s.points().is_empty(), "{}: no points", p.display());
                n += 1;
            }
        }
        assert!(n >= 3, "only {n} specs in {}", dir.display());
    }
}
