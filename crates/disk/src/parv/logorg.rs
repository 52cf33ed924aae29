//! `disksim_logorg`: a DiskSim logical organisation as a headway array
//! (`--disk FILE#ORG`, in the front ends that take `--array`).
//!
//! | DiskSim (`Addressing mode = Array`, `Distribution scheme = Striped`) | headway |
//! |---|---|
//! | `Redundancy scheme = Noredun` (or `Shadowed` with one copy) | [`Level::Raid0`] |
//! | `Shadowed`, `Number of copies = C` (C divides N), `Copy choice on read` 1-6 | [`Level::Raid10`] over `N / C` data members, copy `c` of data member `d` on member `d + c N / C`; [`Level::Raid1`] when `C = N` |
//! | `Parity_disk` | [`Level::Raid4`], parity on the last listed device |
//! | `Parity_rotated`, `Parity rotation type = 1` (left-symmetric, the only type DiskSim 4.0's striped table builds), `Parity stripe unit` = k x `Stripe unit` | [`Level::Raid5`], the parity unit moving every k rows ([`ArraySpec::parity_rows`]) |
//! | `devices = [ disk0 .. disk4 ]` | the members: devices of the file, all of one template (headway's members are identical drives) |
//! | `Stripe unit` (sectors) | [`ArraySpec::unit`] |
//! | `RMW vs. reconstruct` = x, `Synch writes for safety` | [`Disksim`]`::rmw_point` = trunc(x N), `synch_writes` |
//!
//! Every imported array carries DiskSim's rules ([`crate::array::disksim`]): RAID 4 and 5
//! writes by DiskSim's parity-table procedure (read-modify-write or reconstruct-write by
//! the units a row touches, per-write dependencies without synchronous writes), and no
//! front-end queue.
//!
//! A `Parts` logorg over one device with `Asis` and `Noredun` (how DiskSim's single-disk
//! examples wrap their disk) is that device: `FILE#ORG` imports the device.
//!
//! What headway's array does not do DiskSim's way is refused, naming the parameter, rather
//! than simulated differently:
//! * `Parts` addressing, and the `Asis`, `Random` and `Ideal` distributions (a load
//!   balancer's toys mapping to no sector, and layouts no headway front end addresses);
//! * `Number of copies` that does not divide the devices, `Copy choice on read` outside
//!   1-6, a `Parity stripe unit` that is not a whole multiple of the stripe unit on RAID 5,
//!   `Parity rotation type` other than 1 (DiskSim itself stops on these), `RMW vs.
//!   reconstruct` outside 0-1 and `Synch writes for safety` other than 0 or 1.
//!
//! Accepted and without effect here: `Number of copies` and `Copy choice on read` without
//! mirrors, `Parity stripe unit` without RAID 5, `Components`, and the time-stamp
//! parameters (statistics only; DiskSim 4.0 never stamps).
//!
//! Sizes ([`fit_members`]): the members' sectors `P` (all members are the first's model)
//! give DiskSim's capacities; refused are a `Stripe unit` or `Parity stripe unit` above
//! `P` (DiskSim stops) and arrays of 2^31 sectors or more (DiskSim's 32-bit count
//! overflows). RAID 4 and 5 stop at their last whole row ([`crate::array::disksim`]).
//!
//! Known differences that remain: a request ending exactly at the array's end runs (DiskSim
//! aborts on it); mirrored reads draw from headway's stream, not DiskSim's; the order in
//! which member requests reach shared buses is headway's.

use super::devices::{self, Device};
use super::syntax::{Block, Document, Value};
use super::{err, num, uint, Fields, Result};
use crate::array::{ArraySpec, CopyChoice, Disksim, Level};

/// The one member of a logorg that maps requests onto it unchanged (`Addressing mode =
/// Parts`, `Distribution scheme = Asis`, `Redundancy scheme = Noredun`, one device: how
/// DiskSim's single-disk examples wrap their disk), if `b` is one.
pub(super) fn pass_through(b: &Block) -> Option<&str> {
    let devices = b.entries.iter().find(|e| e.key == "devices").map(|e| &e.value);
    match (word(b, "Addressing mode"), word(b, "Distribution scheme"), word(b, "Redundancy scheme"), devices)
    {
        (Some("Parts"), Some("Asis"), Some("Noredun"), Some(Value::List(items, _))) => match items.as_slice()
        {
            [Value::Word(one, _)] => Some(one),
            _ => None,
        },
        _ => None,
    }
}

/// The word `key` of block `b` has, if it has one.
fn word<'a>(b: &'a Block, key: &str) -> Option<&'a str> {
    b.entries.iter().find(|e| e.key == key).and_then(|e| match &e.value {
        Value::Word(w, _) => Some(w.as_str()),
        _ => None,
    })
}

/// Whether logorg `b` lists device `name` among its `devices`.
fn holds(b: &Block, name: &str) -> bool {
    b.entries.iter().find(|e| e.key == "devices").is_some_and(|e| match &e.value {
        Value::List(items, _) => items.iter().any(|v| matches!(v, Value::Word(w, _) if w == name)),
        _ => false,
    })
}

/// The `disksim_logorg` block named `name`, if the file has one.
pub(super) fn named<'a>(doc: &'a Document, name: &str) -> Option<&'a Block> {
    doc.blocks.iter().find(|b| b.ty == "disksim_logorg" && b.name.as_deref() == Some(name))
}

/// The `Parts` logorg holding device `name` that does more than leave each device its own
/// requests (a distribution other than `Asis`, or redundancy), if there is one.
pub(super) fn parts_spreading<'a>(doc: &'a Document, name: &str) -> Option<&'a Block> {
    doc.blocks.iter().filter(|b| b.ty == "disksim_logorg").find(|b| {
        word(b, "Addressing mode") == Some("Parts")
            && holds(b, name)
            && (word(b, "Distribution scheme") != Some("Asis")
                || word(b, "Redundancy scheme") != Some("Noredun"))
    })
}

/// What the requests a workload addresses to `name` reach, as DiskSim maps them
/// (`logorg_maprequest`): the logorgs are tried in the file's order, and the first that
/// takes them is theirs. A logorg with `Addressing mode = Array` takes device number `i`'s
/// requests when it is the `i`-th logorg (DiskSim numbers an array by its place among the
/// logorgs, and a device by its place in instantiation order); a `Parts` logorg takes its
/// own devices' requests. The array's name when an array takes them (so a synthetic
/// generator naming `disk1` drives the file's second logorg when that is an array, as
/// DiskSim's `syntharrays` does), else `name` itself — also when `name` is a logorg.
pub fn request_destination(doc: &Document, name: &str) -> String {
    let Some(devno) = devices::devices(doc).iter().position(|d| d.instance && d.name == name) else {
        return name.to_string();
    };
    for (i, b) in doc.blocks.iter().filter(|b| b.ty == "disksim_logorg").enumerate() {
        match word(b, "Addressing mode") {
            Some("Array") if i == devno => return b.name.clone().unwrap_or_else(|| name.to_string()),
            Some("Parts") if holds(b, name) => break,
            _ => {}
        }
    }
    name.to_string()
}

/// The member devices (in order; all of one model) and the array of logorg `b`.
pub(super) fn map_logorg<'a>(doc: &'a Document, b: &'a Block) -> Result<(Vec<Device<'a>>, ArraySpec)> {
    let mut f = Fields::new(b);
    let word = |f: &mut Fields<'a>, key: &str, allowed: &[&str]| -> Result<&'a str> {
        let (w, at) = f.word(key)?;
        if !allowed.contains(&w) {
            return err(at, format!("`{key}` = {w}: headway's arrays take {}", allowed.join(" or ")));
        }
        Ok(w)
    };
    let (mode, at) = f.word("Addressing mode")?;
    if mode == "Parts" {
        // each member keeps its own addresses: no array, its devices are named one by one
        let names: Vec<&str> = f
            .list("devices")
            .map(|l| {
                l.iter()
                    .filter_map(|v| if let Value::Word(w, _) = v { Some(w.as_str()) } else { None })
                    .collect()
            })
            .unwrap_or_default();
        return err(
            at,
            format!(
                "`Addressing mode` = Parts: the logorg is no array, each of its devices is addressed on its own; \
                 name one as FILE#DEVICE ({})",
                names.join(", ")
            ),
        );
    }
    if mode != "Array" {
        return err(at, format!("`Addressing mode` = {mode}: headway's arrays take Array"));
    }
    word(&mut f, "Distribution scheme", &["Striped"])?;
    let redundancy =
        word(&mut f, "Redundancy scheme", &["Noredun", "Shadowed", "Parity_disk", "Parity_rotated"])?;
    let members = members(doc, &mut f)?;
    let n = members.len() as u32;
    let parity = matches!(redundancy, "Parity_disk" | "Parity_rotated");
    let min = if parity { 3 } else { 2 };
    if !(min..=64).contains(&n) {
        let at = b.entries.iter().find(|e| e.key == "devices").map_or(&b.at, |e| &e.at);
        return err(at, format!("{n} members: headway's {redundancy} arrays take {min} to 64"));
    }
    let uv = f.need("Stripe unit")?;
    let unit = uint(uv, "Stripe unit")?;
    if unit == 0 {
        return err(uv.pos(), "`Stripe unit` must be at least 1 sector");
    }
    let copies_v = f.need("Number of copies")?;
    let copies = uint(copies_v, "Number of copies")?;
    let choice_v = f.need("Copy choice on read")?;
    let Some(copy_choice) = CopyChoice::from_disksim(uint(choice_v, "Copy choice on read")? as u64) else {
        return err(choice_v.pos(), "`Copy choice on read` must be 1 to 6");
    };
    let parity_unit_v = f.need("Parity stripe unit")?;
    let parity_unit = uint(parity_unit_v, "Parity stripe unit")?;
    if parity_unit == 0 {
        return err(parity_unit_v.pos(), "`Parity stripe unit` must be at least 1 sector");
    }
    let level = match redundancy {
        "Noredun" => Level::Raid0,
        "Shadowed" => {
            if copies == 0 || !n.is_multiple_of(copies) {
                return err(
                    copies_v.pos(),
                    format!(
                        "`Number of copies` = {copies}: the {n} devices are not a whole number of copies"
                    ),
                );
            }
            match n / copies {
                _ if copies == 1 => Level::Raid0,
                1 => Level::Raid1,
                _ => Level::Raid10,
            }
        }
        "Parity_disk" => Level::Raid4,
        _ => Level::Raid5,
    };
    let mut spec = ArraySpec { copy_choice, ..ArraySpec::new(level, n, unit as u64) };
    if level == Level::Raid10 {
        spec.copies = copies;
    }
    let synch = f.need("Synch writes for safety")?;
    let rmw = f.need("RMW vs. reconstruct")?;
    let rotation = f.need("Parity rotation type")?;
    if level == Level::Raid5 {
        if uint(rotation, "Parity rotation type")? != 1 {
            return err(rotation.pos(), "`Parity rotation type`: only 1 (left-symmetric) is modelled");
        }
        if parity_unit < unit || !parity_unit.is_multiple_of(unit) {
            return err(
                parity_unit_v.pos(),
                format!(
                    "`Parity stripe unit` = {parity_unit}: DiskSim's striped RAID 5 takes a whole multiple of \
                     the stripe unit ({unit})"
                ),
            );
        }
        spec.parity_rows = parity_unit / unit;
    }
    let r = num(rmw, "RMW vs. reconstruct")?;
    if !(0.0..=1.0).contains(&r) {
        return err(rmw.pos(), format!("`RMW vs. reconstruct` = {r}: DiskSim takes 0 to 1"));
    }
    let synch_writes = match uint(synch, "Synch writes for safety")? {
        0 => false,
        1 => true,
        v => return err(synch.pos(), format!("`Synch writes for safety` = {v}: DiskSim takes 0 or 1")),
    };
    // (DiskSim turns the fraction into a unit count at load, truncating)
    spec.disksim = Some(Disksim { rmw_point: (r * n as f64) as u32, synch_writes, member_sectors: 0 });
    f.ignore(&[
        "Components",
        "Time stamp interval",
        "Time stamp start time",
        "Time stamp stop time",
        "Time stamp file name",
    ]);
    f.finish()?;
    Ok((members, spec))
}

/// The devices `devices` lists, all of one model.
fn members<'a>(doc: &'a Document, f: &mut Fields<'a>) -> Result<Vec<Device<'a>>> {
    let list = f.list("devices")?;
    let all = devices::devices(doc);
    let mut members: Vec<Device> = Vec::new();
    for v in list {
        let Value::Word(n, at) = v else { return err(v.pos(), "`devices` lists device names") };
        let Some(d) = all.iter().find(|d| &d.name == n) else {
            return err(at, format!("logorg member `{n}` is not a device of the file"));
        };
        if let Some(first) = members.first() {
            if !std::ptr::eq(first.block, d.block) {
                return err(
                    at,
                    format!(
                        "logorg member `{n}` is a `{}`, `{}` a `{}`: headway's array members are one model",
                        d.block.name.as_deref().unwrap_or("?"),
                        first.name,
                        first.block.name.as_deref().unwrap_or("?")
                    ),
                );
            }
        }
        members.push(d.clone());
    }
    Ok(members)
}

/// `array` of logorg `b` over members of `sectors` each: DiskSim's sizes set, and what
/// DiskSim stops on or headway does not reproduce refused at its parameter's line.
pub(super) fn fit_members(b: &Block, mut array: ArraySpec, sectors: u64) -> Result<ArraySpec> {
    let at = |key: &str| b.entries.iter().find(|e| e.key == key).map_or(&b.at, |e| e.value.pos());
    let Some(rules) = array.disksim.as_mut() else { return Ok(array) };
    rules.member_sectors = sectors;
    // (the file's units, also where the array does not stripe: DiskSim checks them all)
    for key in ["Stripe unit", "Parity stripe unit"] {
        let value = b.entries.iter().find(|e| e.key == key).map(|e| &e.value);
        if let Some(v) = value.filter(|v| num(v, key).is_ok_and(|x| x > sectors as f64)) {
            return err(v.pos(), format!("`{key}` is more than a member's {sectors} sectors"));
        }
    }
    let capacity = array.capacity(sectors);
    if capacity >= 1 << 31 {
        return err(
            at("devices"),
            format!(
                "an array of {capacity} sectors: DiskSim counts an array's sectors in a 32-bit int, which \
                 overflows from 2^31"
            ),
        );
    }
    Ok(array)
}
