//! Which device of a parameter file to import: `--disk FILE#NAME`.
//!
//! A DiskSim file defines device *templates* (`disksim_disk HP_C3323A { ... }`,
//! `disksim_simpledisk SD0 { ... }`) and makes devices of them with
//! `instantiate [ disk0 .. disk8 ] as HP_C3323A`: the instance names are the device names,
//! in instantiation order (DiskSim's device numbers). A template nothing instantiates is a
//! device under its own name (a `.diskspecs` holding one drive).
//!
//! `NAME` picks an instance, or a template (its first instance), or the device a
//! pass-through logorg wraps (`logorg.rs`). Without a name, a file
//! whose devices all share one template imports that template; a file with devices of
//! several templates asks for a name and lists them.
//!
//! `disksim_syncset` blocks (rotationally synchronised disks) are checked: every member must
//! be a `disksim_disk` device. They change nothing else: every headway drive starts with
//! its spindle at the same angle, which is what a synchronised set asks for (and DiskSim
//! 4.0 starts every disk at angle 0 anyway).

use super::syntax::{Block, Document, Value};
use super::{err, ImportError, Result};
use std::path::Path;

/// Block types that describe one storage device.
pub(super) const STORAGE: &[&str] = &["disksim_disk", "disksim_simpledisk"];

/// A device the file defines.
#[derive(Clone, Debug)]
pub(super) struct Device<'a> {
    /// The instance name, or the template's when nothing instantiates it.
    pub name: String,
    /// The template block.
    pub block: &'a Block,
    /// Whether `name` is an instance (it then names the device in the `topology`).
    pub instance: bool,
}

/// Every device, in instantiation order, then the templates nothing instantiates.
pub(super) fn devices(doc: &Document) -> Vec<Device<'_>> {
    let storage = |name: &str| {
        doc.blocks.iter().find(|b| STORAGE.contains(&b.ty.as_str()) && b.name.as_deref() == Some(name))
    };
    let mut out: Vec<Device> = doc
        .instances
        .iter()
        .filter_map(|(names, ty, _)| storage(ty).map(|b| (names, b)))
        .flat_map(|(names, b)| {
            names.iter().map(move |n| Device { name: n.clone(), block: b, instance: true })
        })
        .collect();
    for b in doc.blocks.iter().filter(|b| STORAGE.contains(&b.ty.as_str())) {
        let used = doc.instances.iter().any(|(_, ty, _)| Some(ty) == b.name.as_ref());
        if !used {
            out.push(Device { name: b.name.clone().unwrap_or_default(), block: b, instance: false });
        }
    }
    out
}

fn names(all: &[Device]) -> String {
    all.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// The device `want` names (or the file's only drive), with the file's syncsets checked.
pub(super) fn pick<'a>(doc: &'a Document, path: &Path, want: Option<&str>) -> Result<Device<'a>> {
    let all = devices(doc);
    check_syncsets(doc, &all)?;
    let choose = |msg: String| Err(ImportError::Choose { file: path.to_path_buf(), msg });
    let Some(want) = want else {
        return match all.first() {
            None => Err(ImportError::NoDisk(path.to_path_buf())),
            Some(first) if all.iter().all(|d| std::ptr::eq(d.block, first.block)) => Ok(first.clone()),
            Some(_) => choose(format!("several devices; name one as FILE#NAME (devices: {})", names(&all))),
        };
    };
    if let Some(d) = all.iter().find(|d| d.name == want) {
        return Ok(d.clone());
    }
    if let Some(d) = all.iter().find(|d| d.block.name.as_deref() == Some(want)) {
        return Ok(d.clone());
    }
    if let Some(b) = doc.blocks.iter().find(|b| b.name.as_deref() == Some(want)) {
        if b.ty == "disksim_logorg" {
            if let Some(member) = super::logorg::pass_through(b) {
                if let Some(d) = all.iter().find(|d| d.name == member) {
                    return Ok(d.clone());
                }
            }
            return err(
                &b.at,
                format!(
                    "`{want}` is a disksim_logorg, an array: `headway simulate` and `replay` take it as \
                     --disk FILE#{want} (devices: {})",
                    names(&all)
                ),
            );
        }
        return err(
            &b.at,
            format!("`{want}` is a {} block, not a storage device (devices: {})", b.ty, names(&all)),
        );
    }
    choose(format!("no device `{want}` (devices: {})", names(&all)))
}

/// Every `disksim_syncset`'s `devices` are `disksim_disk` devices of the file.
fn check_syncsets(doc: &Document, all: &[Device]) -> Result<()> {
    for b in doc.blocks.iter().filter(|b| b.ty == "disksim_syncset") {
        let Some(list) = b.entries.iter().find(|e| e.key == "devices") else {
            return err(&b.at, "`disksim_syncset` block lacks `devices`");
        };
        if let Some(e) = b.entries.iter().find(|e| e.key != "devices") {
            return err(&e.at, format!("unknown key `{}` in disksim_syncset", e.key));
        }
        let Value::List(items, _) = &list.value else {
            return err(&list.at, "`devices` must be a [ list ] of disk names");
        };
        for v in items {
            let Value::Word(n, at) = v else { return err(v.pos(), "`devices` lists disk names") };
            match all.iter().find(|d| &d.name == n) {
                Some(d) if d.block.ty == "disksim_disk" => {}
                Some(d) => {
                    return err(
                        at,
                        format!(
                            "syncset member `{n}` is a {}: only disksim_disk disks synchronise",
                            d.block.ty
                        ),
                    )
                }
                None => {
                    return err(at, format!("syncset member `{n}` is not a device (devices: {})", names(all)))
                }
            }
        }
    }
    Ok(())
}
