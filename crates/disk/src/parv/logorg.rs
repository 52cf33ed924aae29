//! `disksim_logorg`: a DiskSim logical organisation as a headway array
//! (`--disk FILE#ORG`, in the front ends that take `--array`).
//!
//! | DiskSim | headway |
//! |---|---|
//! | `Addressing mode = Array`, `Distribution scheme = Striped`, `Redundancy scheme = Noredun` | [`Level::Raid0`] |
//! | the same with `Redundancy scheme = Parity_rotated`, `Parity rotation type = 1` (left-symmetric, the only type DiskSim 4.0's striped table builds) and `Parity stripe unit` = `Stripe unit` | [`Level::Raid5`] |
//! | `devices = [ disk0 .. disk4 ]` | the members: devices of the file, all of one template (headway's members are identical drives) |
//! | `Stripe unit` (sectors) | [`ArraySpec::unit`] |
//!
//! A `Parts` logorg over one device with `Asis` and `Noredun` (how DiskSim's single-disk
//! examples wrap their disk) is that device: `FILE#ORG` imports the device.
//!
//! What headway's array does not do DiskSim's way is refused, naming the parameter, rather
//! than simulated differently:
//! * `Parts` addressing, and the `Asis`, `Random` and `Ideal` distributions;
//! * `Shadowed` (mirrors) and `Parity_disk` (RAID 4);
//! * a `Parity stripe unit` other than the stripe unit;
//! * `RMW vs. reconstruct` below `(N - 1) / N`: DiskSim then writes partially written rows
//!   by reconstruct-write, where headway always reads the old data and parity
//!   (read-modify-write);
//! * `Synch writes for safety = 0`: DiskSim then starts each write once the reads on its own
//!   member are done; headway's writes wait for all of the request's reads (as with 1).
//!
//! Accepted and without effect here: `Number of copies` and `Copy choice on read` (mirrors
//! only), `Components`, and the time-stamp parameters (statistics only; DiskSim 4.0 never
//! stamps).
//!
//! Known differences that remain, in the array model rather than the import: DiskSim
//! sends each member one request per array request (the units it holds, coalesced) and
//! merges pieces on a member less than 32 sectors apart, where headway sends one piece per
//! unit and lets the member's scheduler merge them; DiskSim's capacities are
//! `P x N` (RAID 0) and `trunc(P (N - 1) / N) x N` (RAID 5) for members of `P` sectors,
//! headway's `floor(P / unit) x unit x data members`.

use super::devices::{self, Device};
use super::syntax::{Block, Document, Value};
use super::{err, num, uint, Fields, Result};
use crate::array::{ArraySpec, Level};

/// The one member of a logorg that maps requests onto it unchanged (`Addressing mode =
/// Parts`, `Distribution scheme = Asis`, `Redundancy scheme = Noredun`, one device: how
/// DiskSim's single-disk examples wrap their disk), if `b` is one.
pub(super) fn pass_through(b: &Block) -> Option<&str> {
    let word = |key: &str| {
        b.entries.iter().find(|e| e.key == key).and_then(|e| match &e.value {
            Value::Word(w, _) => Some(w.as_str()),
            _ => None,
        })
    };
    let devices = b.entries.iter().find(|e| e.key == "devices").map(|e| &e.value);
    match (word("Addressing mode"), word("Distribution scheme"), word("Redundancy scheme"), devices) {
        (Some("Parts"), Some("Asis"), Some("Noredun"), Some(Value::List(items, _))) => match items.as_slice()
        {
            [Value::Word(one, _)] => Some(one),
            _ => None,
        },
        _ => None,
    }
}

/// The member device and the array of logorg `b`.
pub(super) fn map_logorg<'a>(doc: &'a Document, b: &'a Block) -> Result<(Device<'a>, ArraySpec)> {
    let mut f = Fields::new(b);
    let word = |f: &mut Fields<'a>, key: &str, allowed: &[&str]| -> Result<&'a str> {
        let (w, at) = f.word(key)?;
        if !allowed.contains(&w) {
            return err(at, format!("`{key}` = {w}: headway's arrays take {}", allowed.join(" or ")));
        }
        Ok(w)
    };
    word(&mut f, "Addressing mode", &["Array"])?;
    word(&mut f, "Distribution scheme", &["Striped"])?;
    let level = match word(&mut f, "Redundancy scheme", &["Noredun", "Parity_rotated"])? {
        "Noredun" => Level::Raid0,
        _ => Level::Raid5,
    };
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
    let n = members.len() as u32;
    let min = if level == Level::Raid5 { 3 } else { 2 };
    if !(min..=64).contains(&n) {
        let at = b.entries.iter().find(|e| e.key == "devices").map_or(&b.at, |e| &e.at);
        return err(at, format!("{n} members: headway's {level:?} arrays take {min} to 64"));
    }
    let uv = f.need("Stripe unit")?;
    let unit = uint(uv, "Stripe unit")?;
    if unit == 0 {
        return err(uv.pos(), "`Stripe unit` must be at least 1 sector");
    }
    let synch = f.need("Synch writes for safety")?;
    let rmw = f.need("RMW vs. reconstruct")?;
    let parity_unit = f.need("Parity stripe unit")?;
    let rotation = f.need("Parity rotation type")?;
    if level == Level::Raid5 {
        if uint(rotation, "Parity rotation type")? != 1 {
            return err(rotation.pos(), "`Parity rotation type`: only 1 (left-symmetric) is modelled");
        }
        if uint(parity_unit, "Parity stripe unit")? != unit {
            return err(
                parity_unit.pos(),
                format!("`Parity stripe unit`: only the stripe unit ({unit}) is modelled"),
            );
        }
        let r = num(rmw, "RMW vs. reconstruct")?;
        if ((r * n as f64) as u32) < n - 1 {
            return err(
                rmw.pos(),
                format!(
                    "`RMW vs. reconstruct` = {r}: below {:.3} ({} of {n} members) DiskSim reconstructs partial \
                     rows; headway models read-modify-write only",
                    (n - 1) as f64 / n as f64,
                    n - 1
                ),
            );
        }
        if uint(synch, "Synch writes for safety")? != 1 {
            return err(
                synch.pos(),
                "`Synch writes for safety` = 0: headway's writes wait for all of the request's reads (1)",
            );
        }
    }
    f.ignore(&[
        "Number of copies",
        "Copy choice on read",
        "Components",
        "Time stamp interval",
        "Time stamp start time",
        "Time stamp stop time",
        "Time stamp file name",
    ]);
    f.finish()?;
    let first = members.swap_remove(0);
    Ok((first, ArraySpec { level, members: n, unit: unit as u64 }))
}
