//! `disksim_simpledisk`: DiskSim's fixed-time device, as a [`FixedService`].
//!
//! Every request costs `Command overhead` + `Access time` + its sectors at the slower of the
//! device's `Bulk sector transfer time` and its bus's block transfer time (in the
//! request's direction), whatever its address; one request at a time, in arrival order.
//! This is DiskSim's service sequence when `Bus transaction latency` is 0 (each message
//! the device sends up, a disconnect, reconnect or completion, costs that latency, and
//! they overlap the access differently for reads and writes): any other latency is refused,
//! naming the parameter. `Constant access time` is a synonym of `Access time` (the later
//! of the two in the block wins, as in DiskSim). `Never disconnect` changes nothing without
//! a message latency.
//!
//! The device has no geometry, so its [`DiskSpec`] gets a nominal one (one surface of
//! 1,000-sector tracks, enough cylinders for `Block count`) that no request's time uses.

use super::syntax::Block;
use super::{command_queue, err, ms, Fields, Result};
use crate::spec::{BusProtocol, CacheSpec, DiskSpec, FixedService, Overheads, SeekModel, Zone};
use headway_sched::Duration;
use std::path::Path;

/// Sectors per track of the nominal geometry.
const NOMINAL_SPT: u32 = 1000;

pub(super) fn map_simpledisk(b: &Block, bus: (f64, f64), name: &str, path: &Path) -> Result<DiskSpec> {
    let mut f = Fields::new(b);
    let bv = f.need("Block count")?;
    let blocks = super::num(bv, "Block count")?;
    if blocks < 1.0 || blocks.fract() != 0.0 {
        return err(bv.pos(), format!("`Block count` must be a whole number >= 1, not {blocks}"));
    }
    let blocks = blocks as u64;
    // the later of the two synonyms wins
    let access_key = match (f.index("Access time"), f.index("Constant access time")) {
        (Some(a), Some(c)) if c > a => "Constant access time",
        (Some(_), _) => "Access time",
        (None, Some(_)) => "Constant access time",
        (None, None) => return err(&b.at, "`disksim_simpledisk` block lacks `Access time`"),
    };
    let access = f.num(access_key)?;
    f.ignore(&["Access time", "Constant access time"]);
    let overhead = f.num("Command overhead")?;
    let bulk = f.num("Bulk sector transfer time")?;
    for (key, v) in
        [("Access time", access), ("Command overhead", overhead), ("Bulk sector transfer time", bulk)]
    {
        if v.is_nan() || v < 0.0 {
            let at = b.entries.iter().find(|e| e.key == key).map_or(&b.at, |e| &e.at);
            return err(at, format!("`{key}` must be >= 0, not {v}"));
        }
    }
    f.zero_only(&["Bus transaction latency"])?;
    f.flag_or("Never disconnect", false)?;
    f.flag_or("Print stats", false)?;
    let queue = command_queue(&mut f)?;
    f.finish()?;

    let fixed = FixedService {
        overhead: ms(overhead),
        access: ms(access),
        read_per_sector: ms(bulk.max(bus.0)),
        write_per_sector: ms(bulk.max(bus.1)),
    };
    let cylinders = u32::try_from(blocks.div_ceil(NOMINAL_SPT as u64))
        .or_else(|_| err(bv.pos(), format!("`Block count` {blocks} is too large")))?;
    Ok(DiskSpec {
        name: name.to_string(),
        description: format!(
            "{} (DiskSim 4.0 simpledisk, {}): {} ms a request + {} ms a sector",
            b.name.as_deref().unwrap_or("?"),
            path.display(),
            overhead + access,
            bulk.max(bus.0)
        ),
        sources: format!("imported from {}: every parameter as the file gives it", path.display()),
        rpm: 10_000,
        surfaces: 1,
        zones: vec![Zone::new(cylinders, NOMINAL_SPT)],
        capacity_sectors: blocks,
        seek: SeekModel::Table(vec![(1, Duration::ZERO)]),
        head_switch: Duration::ZERO,
        write_settle: Duration::ZERO,
        write_settle_off: Duration::ZERO,
        overheads: Overheads::uniform(Duration::ZERO, Duration::ZERO, Duration::ZERO),
        bus_per_sector: fixed.read_per_sector,
        cache: CacheSpec::DISABLED,
        layout: None,
        min_seek: Duration::ZERO,
        bus_protocol: BusProtocol::default(),
        queue: Some(queue),
        disksim: false,
        fixed: Some(fixed),
        controller: None,
        bus_seats: Vec::new(),
    })
}
