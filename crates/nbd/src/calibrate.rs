//! `headway calibrate`: measure service time against seek distance on a real device, and
//! the curve file `headway serve --estimator FILE` reads.
//!
//! Stream scheduling (seeds/000 Section 3.2) and anticipatory scheduling (seeds/001 Section
//! 3.6) price a head move with a curve of service time against LBN distance that a
//! user-level program measures once, at install time: it sends requests at various
//! distances from the previous one, times them and fits a curve through the points. This
//! module is that program for a file or block device; `headway_disk::calibration_samples`
//! is the same probing run against a drive model (what `serve` uses when no file is given).
//!
//! Method ([`probe`]):
//! * the target is opened read-only with `O_DIRECT` (no page cache: every probe reaches the
//!   device) and read through a buffer aligned to [`ALIGN`]; offsets and the probe size are
//!   multiples of [`ALIGN`] too, which every logical block size up to 4 KiB accepts;
//! * each sample reads `probe_bytes` at a start `a` (untimed: it puts the head at
//!   `a + probe_bytes`), then, as soon as that returns, reads `probe_bytes` at
//!   `a + probe_bytes + distance` and times that read alone with a monotonic clock. The
//!   distance is the gap between the end of one request and the start of the next, in
//!   512-byte sectors, the same "head" the scheduler's `DeviceView` reports;
//! * distances are spread on a logarithmic scale from 0 to the longest the target allows
//!   (short moves change fastest), on the [`ALIGN`] grid; starts are drawn uniformly from
//!   the room each distance leaves, so rotational position and zone averages out; the
//!   samples run in a shuffled order, so a burst of outside activity or a drift of the
//!   device over the run does not land on one range of distances. All of it comes from
//!   `seed`: the same seed probes the same offsets in the same order;
//! * only forward moves are probed: `ServiceCurve` derives backward cost from the forward
//!   curve (+50%, seeds/000 Section 3.2).
//!
//! [`Calibration::fit`] then fits the curve exactly as the server fits a model's samples:
//! `ServiceCurve::fit` with [`BINS_PER_DECADE`] (log-distance bins, bin means, made
//! non-decreasing).
//!
//! What is measured is what the scheduler will see: the drive's own read-ahead cache stays
//! on, so short forward moves are cheap if the drive's prefetch reaches them. On a regular
//! file the distances are file offsets, which the filesystem maps to LBNs (a freshly
//! written, unfragmented file maps nearly linearly); calibrate the block device itself for
//! true LBN distances. A sparse file's holes are read without any I/O, so the target
//! should be written in full first ([`Calibration::sparse`] warns). Filesystems without
//! `O_DIRECT` support refuse it ([`CalibrateError::DirectRefused`]); `buffered` mode then
//! measures without it, which times the page cache, not a disk.
//!
//! The curve file ([`CurveFile`]) is JSON:
//! `{"format": "headway-service-curve", "version": 1, "device": "/dev/sdb",
//! "device_bytes": N, "probe_bytes": 4096, "samples": 2000, "direct": true,
//! "knots": [[distance_sectors, time_ns], ...]}`. Only `format`, `version` and `knots` are
//! required; knot distances must strictly increase and times must not decrease (what
//! `ServiceCurve::fit` produces), so the file means exactly what it says.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use headway_sched::{Duration, ServiceCurve, SECTOR_BYTES};
use serde::Deserialize;

/// Bins per decade of distance of the fit. Must equal the server's own fit of a drive
/// model's samples (`CURVE_BINS_PER_DECADE` in `server.rs`), so a calibrated curve has the
/// resolution of the default one (checked by a test below).
pub const BINS_PER_DECADE: u32 = 8;
/// Probes per calibration unless told otherwise (`--samples`).
pub const DEFAULT_SAMPLES: usize = 2000;
/// Bytes per probe read unless told otherwise (`--probe-bytes`): 4 KiB, the papers' size.
pub const DEFAULT_PROBE_BYTES: u32 = 4096;
/// Seed of the probe plan unless told otherwise (`--seed`).
pub const DEFAULT_SEED: u64 = 1;
/// Alignment of the buffer, the offsets and the probe size, in bytes: `O_DIRECT` needs the
/// device's logical block size, and 4 KiB covers both 512-byte and 4Kn drives.
pub const ALIGN: u64 = 4096;
/// `format` tag of a curve file.
pub const FORMAT: &str = "headway-service-curve";
/// The curve file version this code writes and reads.
pub const VERSION: u64 = 1;
/// Default output of `headway calibrate`, in the current directory.
pub const DEFAULT_OUT: &str = "headway-curve.json";

/// How to probe.
#[derive(Clone, Debug)]
pub struct ProbeConfig {
    /// Probe pairs to time (at least 1).
    pub samples: usize,
    /// Bytes per read: a positive multiple of [`ALIGN`].
    pub probe_bytes: u32,
    /// Seed of the start offsets and the order of the samples.
    pub seed: u64,
    /// Read through the page cache instead of `O_DIRECT` (measures the cache, not a disk).
    pub buffered: bool,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            samples: DEFAULT_SAMPLES,
            probe_bytes: DEFAULT_PROBE_BYTES,
            seed: DEFAULT_SEED,
            buffered: false,
        }
    }
}

/// Why a calibration could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    /// The probe size is zero or not a multiple of [`ALIGN`].
    #[error("probe size {0} bytes must be a positive multiple of {ALIGN}")]
    ProbeBytes(u32),
    /// Zero samples were asked for.
    #[error("at least one sample is needed")]
    NoSamples,
    /// The target could not be opened (missing, no permission, ...).
    #[error("cannot open {}", .path.display())]
    Open { path: PathBuf, source: io::Error },
    /// The filesystem (tmpfs on older kernels, some FUSE and network filesystems) does not
    /// do `O_DIRECT`.
    #[error(
        "{} does not support O_DIRECT (tmpfs and some other filesystems refuse it): calibrate \
         a file on a disk-backed filesystem or the block device itself, or measure with \
         --buffered (which times the page cache, not a disk)",
        .path.display()
    )]
    DirectRefused { path: PathBuf, source: io::Error },
    /// The size of the target could not be found.
    #[error("cannot find the size of {}", .path.display())]
    Size { path: PathBuf, source: io::Error },
    /// The target cannot hold two probes.
    #[error("{} is too small to calibrate: {size} bytes, at least {need} needed", .path.display())]
    TooSmall { path: PathBuf, size: u64, need: u64 },
    /// A probe read failed.
    #[error("reading {} at byte {offset}", .path.display())]
    Read { path: PathBuf, offset: u64, source: io::Error },
}

/// One planned sample: position with a read at `start`, then time a read `distance` bytes
/// past its end. Both in bytes, multiples of [`ALIGN`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub start: u64,
    pub distance: u64,
}

impl Probe {
    /// Byte offset of the timed read.
    pub fn target(&self, probe_bytes: u32) -> u64 {
        self.start + probe_bytes as u64 + self.distance
    }
}

/// The samples of a target `size` bytes long, in the order to run them (see the module
/// doc). Pure: the same arguments give the same plan. Needs `size >= 2 * probe_bytes`.
pub fn plan(size: u64, probe_bytes: u32, samples: usize, seed: u64) -> Vec<Probe> {
    let blocks = size / ALIGN;
    let len = (probe_bytes as u64).div_ceil(ALIGN);
    let max_d = blocks.saturating_sub(2 * len);
    let mut rng = SplitMix64(seed);
    let mut out: Vec<Probe> = (0..samples)
        .map(|i| {
            let d = if i == 0 || max_d <= 1 {
                0
            } else if i + 1 == samples {
                max_d
            } else {
                let u = i as f64 / (samples - 1) as f64;
                ((max_d as f64).powf(u).round() as u64).min(max_d)
            };
            let start = rng.below(max_d - d + 1);
            Probe { start: start * ALIGN, distance: d * ALIGN }
        })
        .collect();
    // Fisher-Yates: run distances in random order.
    for i in (1..out.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        out.swap(i, j);
    }
    out
}

/// Measured samples of one target.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// The target as named on the command line.
    pub device: PathBuf,
    /// Its size in bytes.
    pub device_bytes: u64,
    pub probe_bytes: u32,
    /// `O_DIRECT` was used (false: `buffered`, page cache timings).
    pub direct: bool,
    /// Bytes of a regular file not backed by storage (holes read without I/O); 0 for
    /// block devices and fully written files.
    pub sparse: u64,
    /// `(distance in sectors, service time)` per sample, in the order they ran.
    pub samples: Vec<(u64, Duration)>,
}

impl Calibration {
    /// The fitted curve, as the server would fit a model's samples.
    pub fn fit(&self) -> ServiceCurve {
        ServiceCurve::fit(&self.samples, BINS_PER_DECADE)
    }

    /// The fitted curve with this calibration's description, ready to save.
    pub fn curve_file(&self) -> CurveFile {
        CurveFile {
            device: self.device.display().to_string(),
            device_bytes: self.device_bytes,
            probe_bytes: self.probe_bytes,
            samples: self.samples.len() as u64,
            direct: self.direct,
            curve: self.fit(),
        }
    }
}

/// Probe `path` (a file or block device) as [`ProbeConfig`] says. `progress(done)` is
/// called after each sample. Reads only; the data is not looked at.
pub fn probe(
    path: &Path,
    cfg: &ProbeConfig,
    mut progress: impl FnMut(usize),
) -> Result<Calibration, CalibrateError> {
    if cfg.probe_bytes == 0 || cfg.probe_bytes as u64 & (ALIGN - 1) != 0 {
        // (ALIGN is a power of two)
        return Err(CalibrateError::ProbeBytes(cfg.probe_bytes));
    }
    if cfg.samples == 0 {
        return Err(CalibrateError::NoSamples);
    }
    let mut opts = OpenOptions::new();
    opts.read(true);
    if !cfg.buffered {
        opts.custom_flags(libc::O_DIRECT);
    }
    let mut file = opts.open(path).map_err(|source| {
        if !cfg.buffered && source.raw_os_error() == Some(libc::EINVAL) {
            CalibrateError::DirectRefused { path: path.into(), source }
        } else {
            CalibrateError::Open { path: path.into(), source }
        }
    })?;
    let (size, sparse) =
        size_of(&mut file).map_err(|source| CalibrateError::Size { path: path.into(), source })?;
    let need = 2 * cfg.probe_bytes as u64;
    if size / ALIGN * ALIGN < need {
        return Err(CalibrateError::TooSmall { path: path.into(), size, need });
    }

    let mut buf = AlignedBuf::new(cfg.probe_bytes as usize);
    let read = |file: &File, buf: &mut [u8], offset: u64| {
        file.read_exact_at(buf, offset).map_err(|source| {
            // Some filesystems accept the O_DIRECT open and refuse the read.
            if !cfg.buffered && source.raw_os_error() == Some(libc::EINVAL) {
                CalibrateError::DirectRefused { path: path.into(), source }
            } else {
                CalibrateError::Read { path: path.into(), offset, source }
            }
        })
    };
    let plan = plan(size, cfg.probe_bytes, cfg.samples, cfg.seed);
    let mut samples = Vec::with_capacity(plan.len());
    for (i, p) in plan.iter().enumerate() {
        read(&file, buf.as_mut_slice(), p.start)?;
        let t0 = Instant::now();
        read(&file, buf.as_mut_slice(), p.target(cfg.probe_bytes))?;
        let took = t0.elapsed();
        samples.push((p.distance / SECTOR_BYTES, Duration(took.as_nanos() as u64)));
        progress(i + 1);
    }
    Ok(Calibration {
        device: path.into(),
        device_bytes: size,
        probe_bytes: cfg.probe_bytes,
        direct: !cfg.buffered,
        sparse,
        samples,
    })
}

/// Size in bytes, and for a regular file the bytes not backed by allocated blocks.
/// Seeking to the end works for regular files and block devices alike (it is what
/// `BLKGETSIZE64` reports for a block device).
fn size_of(file: &mut File) -> io::Result<(u64, u64)> {
    let meta = file.metadata()?;
    if meta.is_file() {
        let allocated = meta.blocks() * 512; // st_blocks is in 512-byte units on Linux
        return Ok((meta.len(), meta.len().saturating_sub(allocated)));
    }
    let size = file.seek(SeekFrom::End(0))?;
    file.seek(SeekFrom::Start(0))?;
    Ok((size, 0))
}

/// A zeroed byte buffer whose slice starts on an [`ALIGN`] boundary: a `Vec` over-allocated
/// by `ALIGN` and sliced from the first aligned byte (no unsafe code; the `Vec` frees it).
struct AlignedBuf {
    raw: Vec<u8>,
    off: usize,
    len: usize,
}

impl AlignedBuf {
    fn new(len: usize) -> Self {
        let raw = vec![0u8; len + ALIGN as usize];
        let a = ALIGN as usize;
        let off = (a - raw.as_ptr() as usize % a) % a;
        AlignedBuf { raw, off, len }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.raw[self.off..self.off + self.len]
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): a small, seedable, well-mixed generator; the
/// plan needs reproducibility, not cryptographic quality.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by a 128-bit multiply (bias below 2^-64 * n).
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
}

// ---------------------------------------------------------------------------------------
// Curve file

/// A fitted curve and where it was measured: the contents of a curve file.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveFile {
    /// The calibrated target as it was named (informational).
    pub device: String,
    pub device_bytes: u64,
    pub probe_bytes: u32,
    /// Samples the fit used.
    pub samples: u64,
    /// Measured with `O_DIRECT` (false: through the page cache).
    pub direct: bool,
    pub curve: ServiceCurve,
}

/// Why a curve file could not be read or written. Every variant names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CurveFileError {
    /// The file could not be read.
    #[error("cannot read curve file {}", .path.display())]
    Read { path: PathBuf, source: io::Error },
    /// The file could not be written.
    #[error("cannot write curve file {}", .path.display())]
    Write { path: PathBuf, source: io::Error },
    /// Not JSON, or a field missing or of the wrong type; `line` and `column` are 1-based
    /// (`error` says them too).
    #[error("curve file {}: {error}", .path.display())]
    Json { path: PathBuf, line: usize, column: usize, error: serde_json::Error },
    /// The `format` tag is missing or not [`FORMAT`].
    #[error(
        "curve file {}: not a headway service curve (format {}, expected \"{FORMAT}\"; \
         `headway calibrate` writes these)",
        .path.display(), .found.as_deref().map_or("missing".to_string(), |f| format!("\"{f}\""))
    )]
    Format { path: PathBuf, found: Option<String> },
    /// A `version` this code does not read.
    #[error("curve file {}: version {found} is not supported (this headway reads version {VERSION})", .path.display())]
    Version { path: PathBuf, found: u64 },
    /// `knots` is empty.
    #[error("curve file {}: no knots (a curve needs at least one [distance_sectors, time_ns] pair)", .path.display())]
    Empty { path: PathBuf },
    /// Knot `index`'s distance is not above the previous knot's.
    #[error(
        "curve file {}: knot {index}: distance {distance} sectors does not increase (previous knot: {previous})",
        .path.display()
    )]
    DistanceOrder { path: PathBuf, index: usize, distance: u64, previous: u64 },
    /// Knot `index`'s time is below the previous knot's: a longer move cannot cost less.
    #[error(
        "curve file {}: knot {index}: time {time} ns is below the previous knot's {previous} ns \
         (the curve must not decrease with distance)",
        .path.display()
    )]
    TimeOrder { path: PathBuf, index: usize, time: u64, previous: u64 },
}

/// The first look at a file: enough to tell a curve file from other JSON before reading
/// the rest, so a wrong file gets "not a curve file" rather than a missing-field error.
#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u64>,
}

#[derive(Deserialize)]
struct Repr {
    /// Checked through [`Header`]; required here so that its absence is reported.
    #[allow(dead_code)]
    version: u64,
    #[serde(default)]
    device: String,
    #[serde(default)]
    device_bytes: u64,
    #[serde(default)]
    probe_bytes: u32,
    #[serde(default)]
    samples: u64,
    #[serde(default = "yes")]
    direct: bool,
    knots: Vec<(u64, u64)>,
}

fn yes() -> bool {
    true
}

impl CurveFile {
    /// The file's JSON text: a header, then one knot per line.
    pub fn to_json(&self) -> String {
        let mut s = String::from("{\n");
        s += &format!("  \"format\": \"{FORMAT}\",\n  \"version\": {VERSION},\n");
        s += &format!("  \"device\": {},\n", serde_json::Value::from(self.device.as_str()));
        s += &format!("  \"device_bytes\": {},\n", self.device_bytes);
        s += &format!("  \"probe_bytes\": {},\n", self.probe_bytes);
        s += &format!("  \"samples\": {},\n", self.samples);
        s += &format!("  \"direct\": {},\n", self.direct);
        s += "  \"knots\": [\n";
        let knots = self.curve.knots();
        for (i, (d, t)) in knots.iter().enumerate() {
            let sep = if i + 1 < knots.len() { "," } else { "" };
            s += &format!("    [{d}, {t}]{sep}\n");
        }
        s += "  ]\n}\n";
        s
    }

    /// Write the file (replacing it).
    pub fn save(&self, path: &Path) -> Result<(), CurveFileError> {
        std::fs::write(path, self.to_json())
            .map_err(|source| CurveFileError::Write { path: path.into(), source })
    }

    /// Parse a curve file's text; `path` only names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<CurveFile, CurveFileError> {
        let json = |error: serde_json::Error| CurveFileError::Json {
            path: path.into(),
            line: error.line(),
            column: error.column(),
            error,
        };
        let h: Header = serde_json::from_str(text).map_err(json)?;
        if h.format.as_deref() != Some(FORMAT) {
            return Err(CurveFileError::Format { path: path.into(), found: h.format });
        }
        if let Some(found) = h.version.filter(|&v| v != VERSION) {
            return Err(CurveFileError::Version { path: path.into(), found });
        }
        let r: Repr = serde_json::from_str(text).map_err(json)?;
        if r.knots.is_empty() {
            return Err(CurveFileError::Empty { path: path.into() });
        }
        for (i, w) in r.knots.windows(2).enumerate() {
            let ((d0, t0), (d1, t1)) = (w[0], w[1]);
            if d1 <= d0 {
                return Err(CurveFileError::DistanceOrder {
                    path: path.into(),
                    index: i + 1,
                    distance: d1,
                    previous: d0,
                });
            }
            if t1 < t0 {
                return Err(CurveFileError::TimeOrder {
                    path: path.into(),
                    index: i + 1,
                    time: t1,
                    previous: t0,
                });
            }
        }
        Ok(CurveFile {
            device: r.device,
            device_bytes: r.device_bytes,
            probe_bytes: r.probe_bytes,
            samples: r.samples,
            direct: r.direct,
            curve: ServiceCurve::from_knots(r.knots),
        })
    }

    /// Read and check a curve file.
    pub fn load(path: &Path) -> Result<CurveFile, CurveFileError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| CurveFileError::Read { path: path.into(), source })?;
        Self::parse(&text, path)
    }
}

/// The curve of a curve file (`headway serve --estimator FILE`).
pub fn load(path: &Path) -> Result<ServiceCurve, CurveFileError> {
    CurveFile::load(path).map(|f| f.curve)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn sample_file() -> CurveFile {
        CurveFile {
            device: "/dev/sd\"b\"".into(),
            device_bytes: 1 << 30,
            probe_bytes: 4096,
            samples: 2000,
            direct: true,
            curve: ServiceCurve::from_knots(vec![
                (0, 150_000),
                (8, 900_000),
                (2_000, 4_000_000),
                (2_000_000, 9_000_000),
            ]),
        }
    }

    fn parse(text: &str) -> Result<CurveFile, CurveFileError> {
        CurveFile::parse(text, Path::new("dir/curve.json"))
    }

    fn header(knots: &str) -> String {
        format!("{{\"format\": \"{FORMAT}\", \"version\": 1, \"knots\": {knots}}}")
    }

    #[test]
    fn save_load_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        let f = sample_file();
        f.save(&p).unwrap();
        assert_eq!(CurveFile::load(&p).unwrap(), f);
        assert_eq!(load(&p).unwrap(), f.curve);
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["format"], FORMAT);
        assert_eq!(v["version"], 1);
        assert_eq!(v["knots"][1], serde_json::json!([8, 900_000]));
    }

    #[test]
    fn minimal_file_has_defaults() {
        let f = parse(&header("[[0, 100], [1000, 2000]]")).unwrap();
        assert_eq!(f.curve.knots(), &[(0, 100), (1000, 2000)]);
        assert!(f.direct);
        assert_eq!(f.device, "");
    }

    #[test]
    fn missing_file_is_named() {
        let e = load(Path::new("/nonexistent/headway/curve.json")).unwrap_err();
        assert!(matches!(e, CurveFileError::Read { .. }));
        assert!(e.to_string().contains("/nonexistent/headway/curve.json"), "{e}");
    }

    #[test]
    fn bad_json_gives_line_and_column() {
        let e = parse("{\n  \"format\": \"headway-service-curve\",\n  \"version\": 1,,\n}").unwrap_err();
        let CurveFileError::Json { line, column, .. } = &e else { panic!("{e:?}") };
        assert_eq!((*line, *column), (3, 16));
        let msg = e.to_string();
        assert!(msg.contains("dir/curve.json") && msg.contains("line 3 column 16"), "{msg}");
        // a knot of the wrong type is located too
        let e = parse(&header("[[0, 100],\n [5, -3]]")).unwrap_err();
        assert!(matches!(e, CurveFileError::Json { line: 2, .. }), "{e:?}");
    }

    #[test]
    fn wrong_or_missing_format_tag() {
        let e = parse("{\"format\": \"fio\", \"version\": 1, \"knots\": [[0, 1]]}").unwrap_err();
        assert!(matches!(&e, CurveFileError::Format { found: Some(f), .. } if f == "fio"), "{e:?}");
        assert!(e.to_string().contains("dir/curve.json") && e.to_string().contains("\"fio\""), "{e}");
        let e = parse("{\"runs\": []}").unwrap_err();
        assert!(matches!(e, CurveFileError::Format { found: None, .. }), "{e:?}");
        assert!(e.to_string().contains("format missing"), "{e}");
    }

    #[test]
    fn unsupported_or_missing_version() {
        let e =
            parse(&format!("{{\"format\": \"{FORMAT}\", \"version\": 2, \"knots\": [[0, 1]]}}")).unwrap_err();
        assert!(matches!(e, CurveFileError::Version { found: 2, .. }), "{e:?}");
        let e = parse(&format!("{{\"format\": \"{FORMAT}\", \"knots\": [[0, 1]]}}")).unwrap_err();
        assert!(matches!(&e, CurveFileError::Json { .. }) && e.to_string().contains("version"), "{e}");
    }

    #[test]
    fn empty_or_missing_knots() {
        let e = parse(&header("[]")).unwrap_err();
        assert!(matches!(e, CurveFileError::Empty { .. }), "{e:?}");
        assert!(e.to_string().contains("dir/curve.json"), "{e}");
        let e = parse(&format!("{{\"format\": \"{FORMAT}\", \"version\": 1}}")).unwrap_err();
        assert!(matches!(&e, CurveFileError::Json { .. }) && e.to_string().contains("knots"), "{e}");
    }

    #[test]
    fn distances_must_increase() {
        let e = parse(&header("[[0, 100], [500, 200], [500, 300]]")).unwrap_err();
        assert!(
            matches!(e, CurveFileError::DistanceOrder { index: 2, distance: 500, previous: 500, .. }),
            "{e:?}"
        );
        let e = parse(&header("[[0, 100], [500, 200], [40, 300]]")).unwrap_err();
        assert!(matches!(e, CurveFileError::DistanceOrder { index: 2, distance: 40, .. }), "{e:?}");
        assert!(e.to_string().contains("knot 2"), "{e}");
    }

    #[test]
    fn times_must_not_decrease() {
        let e = parse(&header("[[0, 100], [500, 200], [900, 150]]")).unwrap_err();
        assert!(matches!(e, CurveFileError::TimeOrder { index: 2, time: 150, previous: 200, .. }), "{e:?}");
        assert!(parse(&header("[[0, 100], [500, 100]]")).is_ok(), "a flat stretch is fine");
    }

    #[test]
    fn bins_per_decade_match_the_servers_fit() {
        // The server fits the default model's 4000 samples with its own constant: the same
        // samples fitted with ours must give the same curve. (4000 is the server's
        // CALIBRATION_SAMPLES; if either constant moves, this fails.)
        let spec = headway_disk::builtin(crate::server::DEFAULT_CURVE_MODEL).unwrap();
        let ours = ServiceCurve::fit(&headway_disk::calibration_samples(&spec, 4000), BINS_PER_DECADE);
        assert_eq!(ours, crate::server::default_curve());
    }

    #[test]
    fn plan_spans_log_distances_deterministically() {
        let size = 64 << 20;
        let p = plan(size, 4096, 500, 7);
        assert_eq!(p, plan(size, 4096, 500, 7), "same seed, same plan");
        assert_ne!(p, plan(size, 4096, 500, 8), "seed changes the plan");
        assert_eq!(p.len(), 500);
        let max_d = size - 2 * 4096;
        let mut d: Vec<u64> = p.iter().map(|x| x.distance).collect();
        assert_ne!(d.windows(2).filter(|w| w[0] <= w[1]).count(), d.len() - 1, "shuffled");
        d.sort_unstable();
        assert_eq!((d[0], d[d.len() - 1]), (0, max_d));
        // log spacing: the share of distances below x is log(x) / log(max), here below 64 KiB
        let small = d.iter().filter(|&&x| x < 64 << 10).count() as f64 / 500.0;
        let want = (16f64).ln() / ((max_d / ALIGN) as f64).ln();
        assert!((small - want).abs() < 0.01, "{small} vs {want}");
        for x in &p {
            assert_eq!(x.start % ALIGN, 0);
            assert_eq!(x.distance % ALIGN, 0);
            assert!(x.target(4096) + 4096 <= size, "{x:?} reads past the end");
        }
        // an odd size is rounded down to the grid
        for x in plan(3 * ALIGN + 100, 4096, 50, 1) {
            assert!(x.target(4096) + 4096 <= 3 * ALIGN);
        }
    }

    #[test]
    fn buffer_is_aligned() {
        for len in [4096, 8192, 65536] {
            let mut b = AlignedBuf::new(len);
            let s = b.as_mut_slice();
            assert_eq!(s.len(), len);
            assert_eq!(s.as_ptr() as usize % ALIGN as usize, 0);
        }
    }

    /// A written (not sparse) file of `bytes`.
    fn data_file(bytes: usize) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![0x5a; bytes]).unwrap();
        f.as_file().sync_all().unwrap();
        f
    }

    /// O_DIRECT where the filesystem does it, else the page cache (the refusal is checked
    /// to say so).
    fn probe_somehow(path: &Path, cfg: &ProbeConfig, progress: &mut dyn FnMut(usize)) -> Calibration {
        match probe(path, cfg, &mut *progress) {
            Ok(c) => c,
            Err(e @ CalibrateError::DirectRefused { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("O_DIRECT") && msg.contains("--buffered"), "{msg}");
                probe(path, &ProbeConfig { buffered: true, ..cfg.clone() }, progress).unwrap()
            }
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn probes_a_file_and_fits() {
        let f = data_file(4 << 20);
        let cfg = ProbeConfig { samples: 150, ..ProbeConfig::default() };
        let mut last = 0;
        let c = probe_somehow(f.path(), &cfg, &mut |done| last = done);
        assert_eq!(last, 150);
        assert_eq!(c.samples.len(), 150);
        assert_eq!(c.device_bytes, 4 << 20);
        assert_eq!(c.sparse, 0);
        let max_sectors = ((4 << 20) - 2 * 4096) / 512;
        assert!(c.samples.iter().any(|s| s.0 == 0) && c.samples.iter().any(|s| s.0 == max_sectors));
        assert!(c.samples.iter().all(|s| s.1 .0 > 0));
        let cf = c.curve_file();
        assert_eq!(cf.samples, 150);
        assert!(cf.curve.knots().windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        // what is written reads back
        let out = tempfile::NamedTempFile::new().unwrap();
        cf.save(out.path()).unwrap();
        assert_eq!(CurveFile::load(out.path()).unwrap(), cf);
    }

    #[test]
    fn sparse_file_is_reported() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(8 << 20).unwrap();
        let c = probe_somehow(f.path(), &ProbeConfig { samples: 5, ..ProbeConfig::default() }, &mut |_| {});
        assert!(c.sparse > 0, "a file of holes is sparse");
    }

    #[test]
    fn bad_arguments_and_targets() {
        let f = data_file(8192);
        let e = probe(f.path(), &ProbeConfig { probe_bytes: 1000, ..ProbeConfig::default() }, |_| {})
            .unwrap_err();
        assert!(matches!(e, CalibrateError::ProbeBytes(1000)), "{e:?}");
        let e = probe(f.path(), &ProbeConfig { samples: 0, ..ProbeConfig::default() }, |_| {}).unwrap_err();
        assert!(matches!(e, CalibrateError::NoSamples), "{e:?}");
        let small = ProbeConfig { probe_bytes: 8192, buffered: true, ..ProbeConfig::default() };
        let e = probe(f.path(), &small, |_| {}).unwrap_err();
        assert!(matches!(e, CalibrateError::TooSmall { size: 8192, need: 16384, .. }), "{e:?}");
        let e = probe(Path::new("/nonexistent/disk"), &ProbeConfig::default(), |_| {}).unwrap_err();
        assert!(
            matches!(e, CalibrateError::Open { .. }) && e.to_string().contains("/nonexistent/disk"),
            "{e}"
        );
    }
}
