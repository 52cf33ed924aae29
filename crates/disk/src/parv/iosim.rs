//! A DiskSim trace on the system of a parameter file: `headway replay --format disksim
//! --disk FILE.parv`.
//!
//! ## `disksim_iosim`: how a trace's requests are re-addressed
//! `I/O Trace Time Scale` multiplies every request's time (default 1). `I/O Mappings` lists
//! `disksim_iomap { tracedev, simdev, locScale, sizeScale, offset }` blocks. A request whose
//! trace device number is a map's `tracedev` (the first such map, in list order; a hex
//! `0x0e` is 14) is re-addressed as DiskSim's `io_map_trace_request` does it:
//! * its device number becomes `simdev`'s, the device's place in instantiation order (a
//!   drive template nothing instantiates is a device under its own name, after them);
//! * `locScale` is the trace's block size in bytes: at 512 the block number stays; above, it
//!   is multiplied by `locScale / 512` (a whole division); below, it is divided by
//!   `512 / locScale` (whole too), and a block number that this does not divide is an error,
//!   as it stops DiskSim;
//! * the block count is multiplied by `sizeScale`;
//! * `offset` (0 if absent) is added to the block number.
//!
//! A device number no map names is kept as it is. `locScale`, `sizeScale` must be at least
//! 1, `tracedev` and `offset` whole numbers, and `simdev` one of the file's devices; any
//! other key, or a second `disksim_iosim` block, is an error at its line.
//!
//! ## Which device a request reaches ([`import_trace_system`])
//! Every device number of a file with several devices is a device of the replay. The
//! logorgs decide where its requests go, as for a synthetic generator
//! ([`super::request_destination`]): an `Array` logorg takes the device number of its
//! place, and a `Parts` logorg leaves each device its own requests. The run's devices are
//! those destinations, each a drive or an array, in device-number order. A device number
//! reaching a drive that is also a member of one of those arrays, or a drive of a `Parts`
//! logorg that distributes or copies its requests, is an error when a request comes for it.
//!
//! With one device, or with `FILE#NAME` naming one device or array, every request goes to
//! it (after its map), whatever its device number.

use std::path::Path;

use super::devices;
use super::logorg;
use super::syntax::{Document, Value};
use super::{err, num, Fields, Result};
use crate::array::ArraySpec;
use crate::spec::DiskSpec;

/// The `disksim_iosim` block of a file.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceMapping {
    /// `I/O Trace Time Scale`: every request's time is multiplied by it.
    pub time_scale: f64,
    /// `I/O Mappings`, in list order (the first whose `tracedev` matches applies).
    pub maps: Vec<IoMap>,
}

/// One `disksim_iomap`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoMap {
    /// The trace's device number it applies to.
    pub tracedev: u64,
    /// `simdev` and its device number (its place among the file's devices).
    pub simdev: String,
    pub device: u64,
    /// What `locScale` does to the block number.
    pub loc: LocScale,
    /// `sizeScale`: the block count is multiplied by it.
    pub size_scale: u64,
    /// `offset`: added to the block number (after `loc`).
    pub offset: i64,
}

/// `locScale` as DiskSim applies it to a block number (a whole division of 512 by it, or
/// of it by 512).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LocScale {
    /// `locScale` = 512: unchanged.
    Same,
    /// Above 512: multiplied by `locScale / 512`.
    Times(u64),
    /// Below 512: divided by `512 / locScale`; a block number it does not divide is refused.
    Divide(u64),
}

impl LocScale {
    fn of(loc_scale: u64) -> LocScale {
        match loc_scale {
            512 => LocScale::Same,
            l if l > 512 => LocScale::Times(l / 512),
            l => LocScale::Divide(512 / l),
        }
    }
}

impl IoMap {
    /// The request `(blkno, bcount)` re-addressed: `(device number, blkno, bcount)`, or why
    /// it cannot be.
    pub fn apply(&self, blkno: u64, bcount: u64) -> std::result::Result<(u64, u64, u64), String> {
        let scaled = match self.loc {
            LocScale::Same => Some(blkno),
            LocScale::Times(k) => blkno.checked_mul(k),
            LocScale::Divide(k) if !blkno.is_multiple_of(k) => {
                return Err(format!(
                    "block {blkno} of trace device {} is not a multiple of {k} (its `locScale` divides it by {k})",
                    self.tracedev
                ))
            }
            LocScale::Divide(k) => Some(blkno / k),
        };
        let blkno = scaled.and_then(|b| b.checked_add_signed(self.offset)).ok_or_else(|| {
            format!("block {blkno} of trace device {} leaves the range after its map", self.tracedev)
        })?;
        let bcount = bcount
            .checked_mul(self.size_scale)
            .ok_or_else(|| format!("block count {bcount} times `sizeScale` {} overflows", self.size_scale))?;
        Ok((self.device, blkno, bcount))
    }
}

impl TraceMapping {
    /// The map of trace device `tracedev`, if one names it.
    pub fn map_of(&self, tracedev: u64) -> Option<&IoMap> {
        self.maps.iter().find(|m| m.tracedev == tracedev)
    }
}

/// The file's `disksim_iosim` block, if it has one.
pub fn trace_mapping(doc: &Document) -> Result<Option<TraceMapping>> {
    let mut blocks = doc.blocks.iter().filter(|b| b.ty == "disksim_iosim");
    let Some(b) = blocks.next() else { return Ok(None) };
    if let Some(second) = blocks.next() {
        return err(&second.at, "a second `disksim_iosim` block: DiskSim takes one");
    }
    let mut f = Fields::new(b);
    let time_scale = f.num_or("I/O Trace Time Scale", 1.0)?;
    if !(time_scale > 0.0 && time_scale.is_finite()) {
        let at = f.block.entries.iter().find(|e| e.key == "I/O Trace Time Scale").map_or(&b.at, |e| &e.at);
        return err(at, format!("`I/O Trace Time Scale` = {time_scale}: must be above 0"));
    }
    let maps = match f.take("I/O Mappings") {
        None => Vec::new(),
        Some(Value::List(items, _)) => items.iter().map(|v| iomap(doc, v)).collect::<Result<_>>()?,
        Some(v) => return err(v.pos(), "`I/O Mappings` must be a [ list ] of disksim_iomap blocks"),
    };
    f.finish()?;
    Ok(Some(TraceMapping { time_scale, maps }))
}

fn iomap(doc: &Document, v: &Value) -> Result<IoMap> {
    let Value::Block(b) = v else {
        return err(v.pos(), "`I/O Mappings` lists disksim_iomap blocks");
    };
    if b.ty != "disksim_iomap" {
        return err(&b.at, format!("`{}` in `I/O Mappings`: DiskSim takes disksim_iomap blocks", b.ty));
    }
    let mut f = Fields::new(b);
    let tracedev = whole(f.need("tracedev")?, "tracedev")?;
    let (simdev, at) = f.word("simdev")?;
    let all = devices::devices(doc);
    let Some(device) = all.iter().position(|d| d.name == simdev) else {
        let names: Vec<&str> = all.iter().map(|d| d.name.as_str()).collect();
        return err(at, format!("`simdev` = {simdev}: not a device of the file ({})", names.join(", ")));
    };
    let mut at_least_one = |key: &str| -> Result<u64> {
        let v = f.need(key)?;
        match whole(v, key)? {
            0 => err(v.pos(), format!("`{key}` must be at least 1")),
            n => Ok(n),
        }
    };
    let loc = LocScale::of(at_least_one("locScale")?);
    let size_scale = at_least_one("sizeScale")?;
    let offset = match f.take("offset") {
        None => 0,
        Some(v) => {
            let x = num(v, "offset")?;
            if x.fract() != 0.0 || x.abs() >= 2f64.powi(62) {
                return err(v.pos(), format!("`offset` must be a whole number, not {x}"));
            }
            x as i64
        }
    };
    f.finish()?;
    Ok(IoMap { tracedev, simdev: simdev.to_string(), device: device as u64, loc, size_scale, offset })
}

/// A whole number >= 0, written in decimal or (as DiskSim reads it) in hex, `0x0e`.
fn whole(v: &Value, key: &str) -> Result<u64> {
    let bad = || err(v.pos(), format!("`{key}` must be a whole number >= 0"));
    match v {
        Value::Num(x, _) if *x >= 0.0 && x.fract() == 0.0 && *x < 2f64.powi(63) => Ok(*x as u64),
        Value::Word(w, _) => match w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16).or_else(|_| bad()),
            None => bad(),
        },
        _ => bad(),
    }
}

/// What a DiskSim trace replays on ([`import_trace_system`]).
#[derive(Clone, Debug)]
pub struct TraceSystem {
    /// The run's devices: the name each has in the file (a device or a logorg), the drive,
    /// and the array when it is one.
    pub devices: Vec<(String, DiskSpec, Option<ArraySpec>)>,
    /// Per device number (the file's devices in instantiation order), the index in
    /// `devices` its requests reach, or why they cannot reach one. `None`: every request
    /// reaches the one device.
    pub reaches: Option<Vec<std::result::Result<u32, String>>>,
    /// The file's `disksim_iosim` block.
    pub mapping: Option<TraceMapping>,
    /// The settings the file's driver queue gives the `disksim` scheduler
    /// ([`super::driver_queue_settings`]).
    pub driver_queue: Vec<(String, String)>,
}

/// The system of `path` a DiskSim trace replays on: the device `device` names (`FILE#NAME`,
/// a device or a logorg), or, without a name, the file's one device, or all its devices
/// with the logorgs' routing (see the module's documentation).
pub fn import_trace_system(path: &Path, device: Option<&str>) -> Result<TraceSystem> {
    let doc = super::parse_checked(path)?;
    let mapping = trace_mapping(&doc)?;
    let driver_queue = super::driver_queue_settings(&doc)?;
    let numbered: Vec<String> = devices::devices(&doc).into_iter().map(|d| d.name).collect();
    if device.is_some() || numbered.len() < 2 {
        let (disk, array) = super::system_of(&doc, path, device)?;
        let name = device.map_or_else(|| disk.name.clone(), str::to_string);
        return Ok(TraceSystem { devices: vec![(name, disk, array)], reaches: None, mapping, driver_queue });
    }
    // where each device number's requests go, and the run's devices in that order
    let destination: Vec<String> = numbered.iter().map(|n| super::request_destination(&doc, n)).collect();
    let mut names: Vec<String> = Vec::new();
    for d in &destination {
        if !names.contains(d) {
            names.push(d.clone());
        }
    }
    let mut member_of: Vec<(String, String)> = Vec::new();
    for n in &names {
        if let Some(b) = logorg::named(&doc, n).filter(|b| logorg::pass_through(b).is_none()) {
            let (members, _) = logorg::map_logorg(&doc, b)?;
            member_of.extend(members.into_iter().map(|m| (m.name, n.clone())));
        }
    }
    // why a destination cannot take requests, if it cannot
    let why: Vec<Option<String>> = names
        .iter()
        .map(|d| match member_of.iter().find(|(m, _)| m == d) {
            Some((_, array)) => Some(format!(
                "{d} is a member of array {array}, which takes the requests of its own device number"
            )),
            None => logorg::parts_spreading(&doc, d).map(|org| {
                let org = org.name.as_deref().unwrap_or_default();
                format!("{d} is in logorg {org}, which spreads or copies its devices' requests: not modelled")
            }),
        })
        .collect();
    let kept: Vec<&String> = names.iter().zip(&why).filter(|(_, w)| w.is_none()).map(|(n, _)| n).collect();
    let reaches = destination
        .iter()
        .map(|d| {
            let i = names.iter().position(|n| n == d).expect("every destination is named");
            match &why[i] {
                Some(why) => Err(why.clone()),
                None => Ok(kept.iter().position(|k| *k == d).expect("a kept destination") as u32),
            }
        })
        .collect();
    let devices = kept
        .into_iter()
        .map(|n| super::system_of(&doc, path, Some(n)).map(|(disk, array)| (n.clone(), disk, array)))
        .collect::<Result<Vec<_>>>()?;
    Ok(TraceSystem { devices, reaches: Some(reaches), mapping, driver_queue })
}
