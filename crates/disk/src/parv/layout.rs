//! The `dm_layout_g1` block of a `dm_disk` model, read as DiskSim 4.0 reads it: zones in
//! list order, each `[First cylinder number, Last cylinder number]` inclusive and never
//! compared with the drive's `Number of cylinders`; every mapping scheme (0-2) and sparing
//! scheme (1-10, and 0 as headway's "no spares"); slips and defects in file order; skews
//! and the first block's offset truncated to whole sectors, or given in revolutions under
//! `Skew units = revolutions` (see [`angle`]). What headway cannot model, or where DiskSim
//! itself would divide by zero or abort while loading, is an error at the parameter's line.

use super::syntax::{Block, Pos, Value};
use super::{err, uint, Fields, Result};
use crate::disksim_tables::ZoneRow;
use crate::spec::{Layout, Mapping, Sparing, Zone, ZoneLayout};

/// Unit of the angle parameters (`Skew units`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Units {
    Sectors,
    Revolutions,
}

/// How far (in revolutions) an angle given in revolutions may lie from a whole sector:
/// DiskSim files print six decimals.
const REVOLUTION_TOLERANCE: f64 = 1e-6;

/// The layout and the zone rows (first, last, sectors per track, track skew, cylinder
/// skew) of a `dm_layout_g1` block, on a drive of `surfaces` surfaces and `cylinders`
/// ("Number of cylinders") cylinders.
pub(super) fn map_layout(b: &Block, surfaces: u32, cylinders: u32) -> Result<(Layout, Vec<ZoneRow>)> {
    let mut l = Fields::new(b);
    let mv = l.need("LBN-to-PBN mapping scheme")?;
    let mapping = match uint(mv, "LBN-to-PBN mapping scheme")? {
        0 => Mapping::Conventional,
        1 => Mapping::ReverseOddCylindersInZone,
        2 => Mapping::ReverseOddCylinders,
        n => {
            return err(
                mv.pos(),
                format!("`LBN-to-PBN mapping scheme` = {n}: DiskSim 4.0 has only 0, 1 and 2"),
            )
        }
    };
    let sv = l.need("Sparing scheme used")?;
    let scheme = uint(sv, "Sparing scheme used")?;
    let range = match l.take("Rangesize for sparing") {
        Some(v) => Some((uint(v, "Rangesize for sparing")?, v.pos())),
        None => None,
    };
    if scheme == 8 && range.is_none_or(|r| r.0 == 0) {
        let at = range.map_or(&b.at, |r| r.1);
        return err(at, "sparing scheme 8 needs `Rangesize for sparing` >= 1 (DiskSim divides by it)");
    }
    let Some(sparing) = Sparing::from_disksim(scheme, range.map_or(0, |r| r.0)) else {
        return err(sv.pos(), format!("`Sparing scheme used` = {scheme}: DiskSim 4.0 has only 0-10"));
    };
    // the layout's unit reaches only the zones loaded after it
    let zones_at = l.index("Zones");
    let mut units = Units::Sectors;
    if let Some(i) = l.index("Skew units") {
        let u = skew_units(&mut l)?;
        if zones_at.is_some_and(|z| i < z) {
            units = u;
        }
    }
    let mut rows: Vec<ZoneRow> = Vec::new();
    let mut zones = Vec::new();
    let mut firsts: Vec<(u32, u32, Pos)> = Vec::new();
    for zv in l.list("Zones")? {
        let Value::Block(zb) = zv else { return err(zv.pos(), "`Zones` must list dm_layout_g1_zone blocks") };
        if zb.ty != "dm_layout_g1_zone" {
            return err(&zb.at, format!("unexpected `{}` in `Zones`", zb.ty));
        }
        let (row, zl, first_at) = map_zone(zb, units, sparing, surfaces)?;
        firsts.push((row.0, row.1, first_at));
        rows.push(row);
        zones.push(zl);
    }
    l.finish()?;
    if rows.is_empty() {
        return err(&b.at, "no zones");
    }
    // zones may be listed in any cylinder order, but not share a cylinder
    let mut order: Vec<usize> = (0..firsts.len()).collect();
    order.sort_by_key(|&i| firsts[i].0);
    for w in order.windows(2) {
        let (a, z) = (&firsts[w[0]], &firsts[w[1]]);
        if z.0 <= a.1 {
            let (later, earlier) = if w[0] < w[1] { (z, a) } else { (a, z) };
            return err(
                &later.2,
                format!(
                    "`First cylinder number` = {}: zone cylinders {}..{} overlap the zone of cylinders {}..{} \
                     (line {})",
                    later.0, later.0, later.1, earlier.0, earlier.1, earlier.2.line
                ),
            );
        }
    }
    // DiskSim never compares the zones with `Number of cylinders`: cover both
    let span = rows.iter().map(|r| r.1 + 1).max().unwrap_or(0).max(cylinders);
    Ok((Layout { sparing, mapping, zones, cylinders: span }, rows))
}

/// One `dm_layout_g1_zone` (`units`: the layout's skew unit when the zone is loaded), and
/// where its `First cylinder number` is.
fn map_zone(zb: &Block, units: Units, sparing: Sparing, surfaces: u32) -> Result<(ZoneRow, ZoneLayout, Pos)> {
    let mut z = Fields::new(zb);
    let fv = z.need("First cylinder number")?;
    let (first, first_at) = (uint(fv, "First cylinder number")?, fv.pos().clone());
    let lv = z.need("Last cylinder number")?;
    let last = uint(lv, "Last cylinder number")?;
    if last < first {
        return err(
            lv.pos(),
            format!("`Last cylinder number` = {last} is below `First cylinder number` = {first}"),
        );
    }
    let tv = z.need("Blocks per track")?;
    let spt = uint(tv, "Blocks per track")?;
    if spt == 0 {
        return err(tv.pos(), "`Blocks per track` must be at least 1 (DiskSim divides by it)");
    }
    // a zone's own `Skew units` reaches only the angles after it
    let own_units = match z.index("Skew units") {
        Some(i) => Some((i, skew_units(&mut z)?)),
        None => None,
    };
    let angle_of = |z: &mut Fields, key: &str| -> Result<u32> {
        let Some(i) = z.index(key) else { return Ok(0) };
        let u = own_units.filter(|o| o.0 < i).map_or(units, |o| o.1);
        let v = z.need(key)?;
        angle(super::num(v, key)?, u, spt, key, v.pos())
    };
    let offset = angle_of(&mut z, "Offset of first block")?;
    let ts = angle_of(&mut z, "Skew for track switch")?;
    let cs = angle_of(&mut z, "Skew for cylinder switch")?;
    let empty = z.uint_or("Empty space at zone front", 0)?;
    let spares_at = z.index("Number of spares").map(|i| zb.entries[i].at.clone()).unwrap_or(zb.at.clone());
    let spares = z.uint_or("Number of spares", 0)?;
    let slips = match z.take("slips") {
        Some(Value::List(items, _)) => {
            items.iter().map(|it| uint(it, "slips")).collect::<Result<Vec<_>>>()?
        }
        Some(v) => return err(v.pos(), "`slips` must be a [ list ]"),
        None => Vec::new(),
    };
    let defects = match z.take("defects") {
        Some(Value::List(items, p)) => {
            let v: Vec<u32> = items.iter().map(|x| uint(x, "defects")).collect::<Result<_>>()?;
            if !v.len().is_multiple_of(2) {
                return err(p, "`defects` must hold (defect, replacement) pairs: an even count");
            }
            v.chunks(2).map(|p| (p[0], p[1])).collect()
        }
        Some(v) => return err(v.pos(), "`defects` must be a [ list ]"),
        None => Vec::new(),
    };
    z.finish()?;
    let zl = ZoneLayout {
        first_cylinder: first,
        first_block_offset: offset,
        empty_front: empty,
        spares,
        slips,
        defects,
    };
    let zone =
        Zone { cylinders: last - first + 1, sectors_per_track: spt, track_skew: ts, cylinder_skew: cs };
    if let Err(e) = zl.check(sparing, &zone, surfaces) {
        return err(
            &spares_at,
            format!("zone cylinders {first}..{last}, `Number of spares` = {spares}: {e}"),
        );
    }
    Ok(((first, last, spt, ts, cs), zl, first_at))
}

fn skew_units(f: &mut Fields) -> Result<Units> {
    match f.word("Skew units")? {
        ("sectors", _) => Ok(Units::Sectors),
        ("revolutions", _) => Ok(Units::Revolutions),
        (w, p) => err(p, format!("`Skew units` = {w}: DiskSim 4.0 takes only sectors or revolutions")),
    }
}

/// An angle parameter (offset of the first block, a skew) as a whole slot `0..spt`.
///
/// In sectors, DiskSim truncates the value toward zero and wraps it around the track
/// (a negative value wraps like an unsigned integer: `-1` is the track's last slot). In
/// revolutions it takes the value's fractional part of a turn, which is generally not a
/// whole sector; headway places sectors on whole slots, so the angle must lie within
/// [`REVOLUTION_TOLERANCE`] of one (and be non-negative).
fn angle(value: f64, units: Units, spt: u32, key: &str, at: &Pos) -> Result<u32> {
    let t = spt as i64;
    match units {
        Units::Sectors => Ok((value.trunc() as i64).rem_euclid(t) as u32),
        Units::Revolutions => {
            if !(value >= 0.0 && value.is_finite()) {
                return err(at, format!("`{key}` = {value} revolutions: headway takes only angles >= 0"));
            }
            let turn = value - value.floor();
            let sectors = (turn * spt as f64).round();
            if (turn - sectors / spt as f64).abs() > REVOLUTION_TOLERANCE {
                return err(
                    at,
                    format!(
                        "`{key}` = {value} revolutions is {:.4} sectors of a {spt}-sector track: headway \
                         places sectors on whole slots (give a whole number of sectors)",
                        turn * spt as f64
                    ),
                );
            }
            Ok((sectors as i64).rem_euclid(t) as u32)
        }
    }
}
