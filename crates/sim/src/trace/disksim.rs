//! DiskSim's ascii trace format: whitespace-separated `time devno blkno bcount flags`.
//!
//! `time` is milliseconds (decimal), `blkno` and `bcount` are 512-byte blocks, and bit 0 of
//! `flags` is set for a read (DiskSim's `B_READ`); `flags` may be written in hex (`0x1`).
//! The context key is `devN`, the trace's device number. Reads are synchronous, writes
//! asynchronous.
//!
//! Without a [`Routing`], every device addresses the one simulated disk. With one (a replay
//! on a DiskSim parameter file, `--disk FILE.parv`), each request is first re-addressed by
//! the file's `disksim_iosim` maps and time scale ([`headway_disk::parv::TraceMapping`]),
//! and then, when the file has several devices, goes to the device its device number
//! reaches: that device is in the request's address above [`crate::engine::DEVICE_SHIFT`],
//! as the engine's block layer takes it.

use std::fmt::Write as _;
use std::sync::Arc;

use headway_disk::parv::TraceMapping;
use headway_sched::Dir;

use super::{LineParser, Parsed, Record};
use crate::engine::DEVICE_SHIFT;

/// How the requests of a DiskSim trace reach the devices of a replay on a parameter file
/// ([`headway_disk::parv::import_trace_system`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Routing {
    /// The file's `disksim_iosim` block.
    pub mapping: Option<TraceMapping>,
    /// Per device number (after its map), the replay's device it reaches or why it reaches
    /// none. `None`: every request goes to the one device.
    pub reaches: Option<Vec<Result<u32, String>>>,
}

impl Routing {
    /// A request `(time ns, devno, blkno, bcount)` of the trace as the replay takes it:
    /// `(time ns, sector with its device above DEVICE_SHIFT, sectors)`, or why it cannot.
    pub fn route(&self, time: u64, devno: u64, blkno: u64, bcount: u64) -> Result<(u64, u64, u64), String> {
        let (time, (device, blkno, bcount)) = match &self.mapping {
            None => (time, (devno, blkno, bcount)),
            Some(m) => {
                let k = m.time_scale;
                let time = if k == 1.0 { time } else { (time as f64 * k).round() as u64 };
                (time, m.map_of(devno).map_or(Ok((devno, blkno, bcount)), |map| map.apply(blkno, bcount))?)
            }
        };
        let Some(reaches) = &self.reaches else { return Ok((time, blkno, bcount)) };
        let reached = match reaches.get(device as usize) {
            Some(Ok(d)) => *d as u64,
            Some(Err(why)) => return Err(format!("device number {device}: {why}")),
            None => {
                return Err(format!(
                    "device number {device}: the parameter file has {} devices (0-{})",
                    reaches.len(),
                    reaches.len().saturating_sub(1)
                ))
            }
        };
        if blkno >= 1 << DEVICE_SHIFT {
            return Err(format!("block {blkno} is past any device"));
        }
        Ok((time, reached << DEVICE_SHIFT | blkno, bcount))
    }
}

/// What a DiskSim trace replays on when `--disk` names a DiskSim parameter file
/// ([`on_parameter_file`]).
#[derive(Clone, Debug)]
pub struct ParameterFileSystem {
    /// The drive (the first device's, with several), and its array when the one device is
    /// one.
    pub disk: headway_disk::DiskSpec,
    pub array: Option<headway_disk::array::ArraySpec>,
    /// With several devices, all of them ([`crate::RunSpec::devices`]); else empty.
    pub devices: Vec<crate::Device>,
    /// `None` when there is nothing to re-address: one device, and no `disksim_iosim` maps.
    pub routing: Option<Arc<Routing>>,
    /// The file's driver queue as `disksim` settings ([`crate::RunSpec::take_driver_queue`]).
    pub driver_queue: Vec<(String, String)>,
}

/// [`ParameterFileSystem`] of `disk`, a `--disk` value, when it names a DiskSim parameter
/// file (`FILE` or `FILE#NAME`; [`headway_disk::parv::import_trace_system`]); `None` for a
/// built-in model.
pub fn on_parameter_file(disk: &str) -> Result<Option<ParameterFileSystem>, headway_disk::ResolveError> {
    use headway_disk::parv;
    if !parv::is_parameter_file(disk) {
        return Ok(None);
    }
    let (file, name) = parv::split_device(disk);
    let path = std::path::PathBuf::from(file);
    let sys = parv::import_trace_system(&path, name)
        .map_err(|err| headway_disk::ResolveError::Import { path: path.clone(), err })?;
    let mut devices: Vec<crate::Device> =
        sys.devices.into_iter().map(|(_, disk, array)| crate::Device { disk, array }).collect();
    // one device is the run's drive (or array); several are its devices, the first also
    // its drive
    let first = match sys.reaches {
        None => devices.remove(0),
        Some(_) => devices[0].clone(),
    };
    Ok(Some(ParameterFileSystem {
        disk: first.disk,
        array: first.array,
        devices,
        driver_queue: sys.driver_queue,
        routing: match (&sys.mapping, &sys.reaches) {
            (None, None) => None,
            _ => Some(Arc::new(Routing { mapping: sys.mapping, reaches: sys.reaches })),
        },
    }))
}

/// The parser of a DiskSim trace, each device number addressing the one disk.
#[derive(Default)]
pub struct Disksim;

/// The parser of a DiskSim trace replayed on a parameter file: each request re-addressed
/// as its [`Routing`] says.
pub struct RoutedDisksim {
    routing: Arc<Routing>,
}

impl RoutedDisksim {
    /// The parser of a trace replayed as `routing` says.
    pub fn new(routing: Arc<Routing>) -> RoutedDisksim {
        RoutedDisksim { routing }
    }
}

impl LineParser for Disksim {
    fn parse(&mut self, line: &str, key: &mut String) -> Result<Parsed, String> {
        parse_line(line.as_bytes(), key, None)
    }

    fn parse_bytes(&mut self, line: &[u8], key: &mut String) -> Result<Parsed, String> {
        parse_line(line, key, None)
    }
}

impl LineParser for RoutedDisksim {
    fn parse(&mut self, line: &str, key: &mut String) -> Result<Parsed, String> {
        parse_line(line.as_bytes(), key, Some(&self.routing))
    }

    fn parse_bytes(&mut self, line: &[u8], key: &mut String) -> Result<Parsed, String> {
        parse_line(line, key, Some(&self.routing))
    }
}

/// One line, re-addressed by `routing` when there is one (inlined into each parser: the
/// plain one, which runs millions of times a trace, keeps no test of it).
#[inline(always)]
fn parse_line(line: &[u8], key: &mut String, routing: Option<&Routing>) -> Result<Parsed, String> {
    // ASCII fields split by hand, from the bytes read (a non-ASCII byte fails the number
    // it is in): this runs once per trace line, millions of times
    let mut f = super::Fields::new(line);
    let Some(ts) = f.next() else { return Ok(Parsed::Blank) };
    if ts[0] == b'#' {
        return Ok(Parsed::Ignored);
    }
    let text = |t: &[u8]| String::from_utf8_lossy(t).into_owned();
    let time = super::decimal_ns_bytes(ts, 1_000_000)
        .ok_or_else(|| format!("time `{}` is not a number of milliseconds", text(ts)))?;
    let mut int = |what: &str| -> Result<u64, String> {
        let t = f.next().ok_or_else(|| format!("missing {what}"))?;
        super::dec_u64(t).ok_or_else(|| format!("{what} `{}` is not a number", text(t)))
    };
    let devno = int("devno")?;
    let blkno = int("blkno")?;
    let bcount = int("bcount")?;
    let fl = f.next().ok_or("missing flags")?;
    let flags = match fl.strip_prefix(b"0x").or_else(|| fl.strip_prefix(b"0X")) {
        Some(h) => std::str::from_utf8(h).ok().and_then(|h| u64::from_str_radix(h, 16).ok()),
        None => super::dec_u64(fl),
    }
    .ok_or_else(|| format!("flags `{}` is not a number", text(fl)))?;
    if let Some(extra) = f.next() {
        return Err(format!("unexpected `{}` after the flags", text(extra)));
    }
    if bcount == 0 {
        return Ok(Parsed::Ignored);
    }
    let (time, sector, bcount) = match routing {
        None => (time, blkno, bcount),
        Some(r) => r.route(time, devno, blkno, bcount)?,
    };
    let bcount = u32::try_from(bcount).map_err(|_| "bcount is too large".to_string())?;
    let dir = if flags & 1 == 1 { Dir::Read } else { Dir::Write };
    key.push_str("dev");
    if devno < 10 {
        key.push((b'0' + devno as u8) as char);
    } else {
        let _ = write!(key, "{devno}");
    }
    Ok(Parsed::Io(Record { time, response: 0, sector, len: bcount, dir, sync: dir == Dir::Read }))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{read_all, rec};
    use super::super::Format;
    use super::*;

    #[test]
    fn milliseconds_blocks_and_the_read_bit() {
        let t = "0.000000 0 1000 16 1\n  2.5 1 64 8 0x0\n# comment\n3 0 0 0 1\n";
        let (recs, r) = read_all(t, Format::Disksim, false).unwrap();
        assert_eq!(
            recs,
            vec![
                (rec(0, 1000, 16, Dir::Read, true), "dev0".into()),
                (rec(2_500_000, 64, 8, Dir::Write, false), "dev1".into())
            ]
        );
        assert_eq!(r.ignored, 2);
    }

    #[test]
    fn a_routed_request_is_mapped_scaled_timed_and_sent_to_its_device() {
        use headway_disk::parv::{IoMap, LocScale};
        let map = IoMap {
            tracedev: 14,
            simdev: "disk1".into(),
            device: 1,
            loc: LocScale::Times(2),
            size_scale: 2,
            offset: 5,
        };
        let routing = Routing {
            mapping: Some(TraceMapping { time_scale: 0.5, maps: vec![map] }),
            reaches: Some(vec![Ok(0), Ok(1), Err("disk2 is a member of array a".into())]),
        };
        // mapped: device 1, block 2 x 100 + 5, twice the count, at half the time
        assert_eq!(routing.route(3_000_001, 14, 100, 8), Ok((1_500_001, 1 << DEVICE_SHIFT | 205, 16)));
        // no map names device 0: kept
        assert_eq!(routing.route(10, 0, 7, 1), Ok((5, 7, 1)));
        assert_eq!(routing.route(10, 2, 7, 1), Err("device number 2: disk2 is a member of array a".into()));
        let e = routing.route(10, 3, 7, 1).unwrap_err();
        assert_eq!(e, "device number 3: the parameter file has 3 devices (0-2)");
        // without devices (one device), the map alone
        let one = Routing { reaches: None, ..routing.clone() };
        assert_eq!(one.route(4, 14, 100, 8), Ok((2, 205, 16)));
        // through the parser: the context is the trace's device number
        let mut p = RoutedDisksim::new(Arc::new(routing));
        let mut key = String::new();
        let r = p.parse("2.0 14 100 8 1", &mut key).unwrap();
        assert_eq!(r, Parsed::Io(rec(1_000_000, 1 << DEVICE_SHIFT | 205, 16, Dir::Read, true)));
        assert_eq!(key, "dev14");
        key.clear();
        assert_eq!(
            p.parse("2.0 9 100 8 1", &mut key).unwrap_err(),
            "device number 9: the parameter file has 3 devices (0-2)"
        );
    }

    #[test]
    fn malformed() {
        let e = read_all("1 0 0 8\n", Format::Disksim, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:1: missing flags");
        let e = read_all("1 0 0 8 1 9\n", Format::Disksim, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:1: unexpected `9` after the flags");
    }
}
