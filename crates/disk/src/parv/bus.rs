//! The bus a device hangs off in a `.parv`'s `topology`: its transfer times (every device
//! pays them) and, when the bus is exclusive and several devices share it, each one's seat
//! on it ([`BusSeat`]).
//!
//! DiskSim 4.0's buses (`disksim_bus.c`): an interleaved bus (`type = 2`) is never owned,
//! and transfers over it overlap; an exclusive one (`type = 1`) has one owner at a time and
//! a queue of those waiting, served by slot priority (`Arbitration type = 1`: the highest
//! slot first, a device's slot being its place under the bus, the controller above it 0)
//! or in order (`2`), each acquisition costing the `Arbitration time`. A device holds the
//! bus from the moment its command arrives through its command overhead, and again from
//! its reconnection through its data and completion (`disksim_diskctlr.c`). A bus with one
//! device has nobody to wait for: only a bus of several devices gives seats.

use super::devices::{self, Device};
use super::syntax::{Block, Document};
use super::{ctlr, err, ms, num, uint, Result};
use crate::spec::BusSeat;

/// The topology node of the bus `dev` hangs off (the nearest bus above it), its block,
/// and `dev`'s own node.
fn bus_of<'a>(doc: &'a Document, dev: &Device) -> Option<(usize, Option<&'a Block>, usize)> {
    let node = ctlr::device_node(doc, dev)?;
    let mut i = node;
    while let Some(p) = doc.topology[i].parent {
        i = p;
        if doc.topology[i].ty == "disksim_bus" {
            let block = ctlr::instance_block(doc, &doc.topology[i].name).filter(|b| b.ty == "disksim_bus");
            return Some((i, block, node));
        }
    }
    None
}

/// Number `key` of bus block `b`, 0 when absent.
fn field(b: &Block, key: &str) -> Result<f64> {
    match b.entries.iter().find(|e| e.key == key) {
        Some(e) => num(&e.value, key),
        None => Ok(0.0),
    }
}

/// The per-block read and write transfer times (ms) of the bus the device hangs off in the
/// `.parv`'s topology (`disksim_bus` "Read/Write block transfer time"), if it has one.
pub(super) fn attached_bus(doc: &Document, dev: &Device) -> Result<Option<(f64, f64)>> {
    let Some((_, Some(bus), _)) = bus_of(doc, dev) else { return Ok(None) };
    Ok(Some((field(bus, "Read block transfer time")?, field(bus, "Write block transfer time")?)))
}

/// `dev`'s seat on the exclusive bus it shares with other devices, if it does.
pub(super) fn seat(doc: &Document, dev: &Device) -> Result<Option<BusSeat>> {
    let Some((i, Some(bus), node)) = bus_of(doc, dev) else { return Ok(None) };
    let exclusive = match bus.entries.iter().find(|e| e.key == "type") {
        Some(e) => uint(&e.value, "type")? == 1,
        None => false,
    };
    let below: Vec<usize> = (0..doc.topology.len()).filter(|&k| doc.topology[k].parent == Some(i)).collect();
    let storage = below.iter().filter(|&&k| devices::STORAGE.contains(&doc.topology[k].ty.as_str())).count();
    if !exclusive || storage < 2 {
        return Ok(None);
    }
    let by_slot = match bus.entries.iter().find(|e| e.key == "Arbitration type") {
        None => true,
        Some(e) => match uint(&e.value, "Arbitration type")? {
            1 => true,
            2 => false,
            v => {
                return err(
                    e.value.pos(),
                    format!("`Arbitration type` = {v}: DiskSim takes 1 (slot priority) or 2 (FIFO)"),
                )
            }
        },
    };
    let slot = below.iter().position(|&k| k == node).map_or(0, |p| p as u32 + 1);
    Ok(Some(BusSeat {
        bus: doc.topology[i].name.clone(),
        slot,
        by_slot,
        arbitration: ms(field(bus, "Arbitration time")?),
    }))
}

/// The seats of an array's `members`, in order: empty when none shares a bus (a member on a
/// bus of its own then sits alone on it).
pub(super) fn member_seats(doc: &Document, members: &[Device]) -> Result<Vec<BusSeat>> {
    let seats = members.iter().map(|m| seat(doc, m)).collect::<Result<Vec<_>>>()?;
    if seats.iter().all(Option::is_none) {
        return Ok(Vec::new());
    }
    Ok(seats
        .into_iter()
        .zip(members)
        .map(|(s, m)| {
            s.unwrap_or_else(|| BusSeat {
                bus: format!("{}'s own bus", m.name),
                slot: 1,
                by_slot: true,
                arbitration: Default::default(),
            })
        })
        .collect())
}
