//! The device driver's queue (`disksim_iodriver`'s `Scheduler = disksim_ioqueue { ... }`)
//! as settings of headway's `disksim` scheduler (`headway_sched::policy::disksim`), so that
//! a DiskSim experiment run with `disksim` orders its requests as DiskSim's driver does.
//!
//! | DiskSim parameter | setting |
//! |---|---|
//! | `Scheduling policy` 1-4 | `disksim_policy` |
//! | `Scheduling priority scheme` 0, 1 | `disksim_priority_scheme` |
//! | `Priority scheduling` 1-4 (read only with scheme 1) | `disksim_priority_policy` |
//! | `Scheduling timeout scheme` 0-2 | `disksim_timeout_scheme` |
//! | `Timeout time/weight` | `disksim_timeout_weight` |
//! | `Timeout scheduling` 1-4 (read only with a scheme) | `disksim_timeout_policy` |
//!
//! Refused at their line: a policy other than 1-4 (DiskSim's cylinder and positioning
//! algorithms), a `Sequential stream scheme` or an `Overlapping request scheme` other than
//! 0 (the driver would join or absorb requests). `Cylinder mapping strategy` and the
//! initiation delays change nothing for algorithms 1-4. A file without a driver, or whose
//! driver has no `Scheduler`, gives no settings (the scheduler's defaults).

use super::ctlr::instance_block;
use super::syntax::{Document, Value};
use super::{err, uint, Result};

/// The settings the file's driver queue gives `disksim`, in order.
pub fn driver_queue_settings(doc: &Document) -> Result<Vec<(String, String)>> {
    let root = doc.topology.iter().find(|n| n.parent.is_none() && n.ty == "disksim_iodriver");
    let Some(b) = root.and_then(|n| instance_block(doc, &n.name)) else { return Ok(Vec::new()) };
    let Some(Value::Block(q)) = b.entries.iter().find(|e| e.key == "Scheduler").map(|e| &e.value) else {
        return Ok(Vec::new());
    };
    let entry = |k: &str| q.entries.iter().find(|e| e.key == k);
    let whole = |k: &str| entry(k).map(|e| uint(&e.value, k)).transpose().map(|v| v.unwrap_or(0));
    let algorithm = |k: &str| -> Result<u32> {
        let Some(e) = entry(k) else {
            return err(&q.at, format!("the driver's `Scheduler` lacks `{k}`"));
        };
        match uint(&e.value, k)? {
            n @ 1..=4 => Ok(n),
            n => err(
                &e.at,
                format!(
                    "driver `{k}` = {n}: the `disksim` scheduler runs DiskSim's 1 (FCFS), 2 (ELEVATOR_LBN), \
                     3 (CYCLE_LBN) and 4 (SSTF_LBN)"
                ),
            ),
        }
    };
    for k in ["Sequential stream scheme", "Overlapping request scheme"] {
        if let Some(e) = entry(k).filter(|_| whole(k).is_ok_and(|n| n != 0)) {
            return err(
                &e.at,
                format!("driver `{k}` = {}: headway's driver does not join requests (only 0)", whole(k)?),
            );
        }
    }
    let mut v = vec![("disksim_policy".to_string(), algorithm("Scheduling policy")?.to_string())];
    let bounded = |k: &str, max: u32| -> Result<u32> {
        let n = whole(k)?;
        match entry(k) {
            Some(e) if n > max => err(&e.at, format!("driver `{k}` = {n}: DiskSim takes 0..={max}")),
            _ => Ok(n),
        }
    };
    let priority = bounded("Scheduling priority scheme", 1)?;
    v.push(("disksim_priority_scheme".into(), priority.to_string()));
    if priority == 1 {
        v.push(("disksim_priority_policy".into(), algorithm("Priority scheduling")?.to_string()));
    }
    let timeout = bounded("Scheduling timeout scheme", 2)?;
    v.push(("disksim_timeout_scheme".into(), timeout.to_string()));
    if timeout != 0 {
        v.push(("disksim_timeout_weight".into(), whole("Timeout time/weight")?.to_string()));
        v.push(("disksim_timeout_policy".into(), algorithm("Timeout scheduling")?.to_string()));
    }
    Ok(v)
}
