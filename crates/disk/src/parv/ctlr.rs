//! The controllers between the driver and a device (`disksim_ctlr` in the `topology`), read
//! as DiskSim 4.0 reads them (`disksim_controller.c`, `disksim_ctlrsmart.c`,
//! `disksim_cachemem.c`):
//!
//! * **type 1** (pass-through) with `Scale for delays` = 0, as every validation file writes
//!   it: nothing between driver and drive. A non-zero scale would delay every message by
//!   that many ms, which headway does not model: refused at its line.
//! * **type 2** (an NCR 53C700-like one-request-at-a-time controller): refused.
//! * **type 3** ("smart"), directly on the driver's bus, with a `disksim_cachemem` cache:
//!   the device's [`Controller`] ([`crate::ctlr`]). What DiskSim itself never runs
//!   correctly, and what headway would run differently, is refused naming the parameter:
//!   - `Replacement policy` other than 2 (DiskSim puts lines on its replacement list only
//!     under policy 2, so under 1, 3 and 4 a full cache never frees a line), and policy 2
//!     without exactly one `SLRU segments` value (more segments overrun DiskSim's tables)
//!     or with it written before `Cache size` (DiskSim then ignores the size);
//!   - `Bit granularity` other than 1 (installation reads; DiskSim leaks locks when it
//!     exceeds the lock granularity);
//!   - `Lock granularity` other than `Line size` (headway locks whole lines);
//!   - `Line size` 0, or a `Cache size` not a multiple of it (DiskSim's last line would be
//!     short and its allocation walks past it);
//!   - `Flush policy` 1 with `Flush period` 0 (DiskSim flushes forever at time 0);
//!   - `Max per-disk pending count` missing or 0 (DiskSim never sends the disk anything);
//!   - a type-3 controller under another controller.
//! * a `disksim_cachedev` (the cache on a second device behind the controller): the
//!   controller's [`CacheDev`], the cache device imported alone. Refused: a `Cache device`
//!   that is not another device behind this controller; a `Cached device` other than the
//!   device imported (the host reaches only it); a `Cache size` that does not cover the
//!   cached device (DiskSim writes past its bitmaps for a read beyond it) or does not fit on
//!   the cache device; a negative `Flush idle delay` (DiskSim tests the delay for non-zero,
//!   so -1 runs the idle work 1 ms in the past). `Flush policy` and `Flush period` are read
//!   and, as in DiskSim, unused.
//!
//! * the queues ([`crate::ctlr::DiskQueue`], [`crate::ctlr::QueueOrder`]): the controller's
//!   `Scheduler` orders its queue to each device by `Scheduling policy` 1 (FCFS) or 3
//!   (`CYCLE_LBN`), and joins requests by `Sequential stream scheme` 1-3 (reads, writes, both)
//!   up to `Maximum concat size`; the `disksim_iodriver`'s `Scheduler` orders the host
//!   requests waiting for the controller (1 or 3, joining nothing), and its `Use queueing
//!   in subsystem` 0 keeps one at a time there. Refused at its line: another policy, a
//!   stream scheme above 3 (stream detection), a non-zero `Overlapping request scheme` or
//!   `Scheduling priority scheme`.
//!
//! Accepted without effect: `Print stats`, `Write prefetch type` (write fills exist only
//! with a bit granularity above 1), and the other keys of the `Scheduler`s (neither policy
//! reads them).

use super::devices::Device;
use super::syntax::{Block, Document, Value};
use super::{err, num, uint, Fields, Result};
use crate::ctlr::{Allocation, CacheDev, CacheMem, Controller, DiskQueue, QueueOrder, WriteScheme};
use crate::spec::DiskSpec;
use std::path::Path;

/// The template block of topology instance `name`.
pub(super) fn instance_block<'a>(doc: &'a Document, name: &str) -> Option<&'a Block> {
    let template = doc.instances.iter().find(|(names, _, _)| names.iter().any(|n| n == name))?;
    doc.blocks.iter().find(|b| b.name.as_deref() == Some(template.1.as_str()))
}

/// Where device `dev` sits in the topology, if it is there.
pub(super) fn device_node(doc: &Document, dev: &Device) -> Option<usize> {
    let template = dev.block.name.as_deref();
    doc.topology.iter().position(|n| {
        super::devices::STORAGE.contains(&n.ty.as_str())
            && if dev.instance {
                n.name == dev.name
            } else {
                instance_block(doc, &n.name).and_then(|b| b.name.as_deref()) == template
            }
    })
}

/// The caching controller in front of `dev`, if any; the other controllers on its path
/// checked.
pub(super) fn controller(
    doc: &Document,
    dev: &Device,
    spec: &DiskSpec,
    path: &Path,
) -> Result<Option<Controller>> {
    let Some(mut i) = device_node(doc, dev) else { return Ok(None) };
    let mut smart = None;
    while let Some(p) = doc.topology[i].parent {
        i = p;
        let node = &doc.topology[i];
        if node.ty != "disksim_ctlr" {
            continue;
        }
        let Some(b) = instance_block(doc, &node.name) else { continue };
        let ty = b.entries.iter().find(|e| e.key == "type");
        let Some(ty) = ty else { return err(&b.at, "`disksim_ctlr` block lacks `type`") };
        match uint(&ty.value, "type")? {
            1 => pass_through(b)?,
            3 => {
                let on_driver_bus = node
                    .parent
                    .and_then(|bus| doc.topology[bus].parent)
                    .is_some_and(|d| doc.topology[d].ty == "disksim_iodriver");
                if smart.is_some() || !on_driver_bus {
                    return err(
                        &ty.at,
                        format!(
                            "controller `{}`: a type-3 controller below another controller is not \
                             modelled (only one, on the driver's bus)",
                            node.name
                        ),
                    );
                }
                smart = Some(smart_controller(b, &Place { doc, dev, spec, ctlr: i, path })?);
            }
            n => {
                return err(
                    &ty.at,
                    format!(
                        "controller `{}`: `type` = {n}: headway models type 1 (pass-through, no \
                         delays) and type 3 (with a disksim_cachemem cache)",
                        node.name
                    ),
                )
            }
        }
    }
    Ok(smart)
}

fn pass_through(b: &Block) -> Result<()> {
    if let Some(e) = b.entries.iter().find(|e| e.key == "Scale for delays") {
        let s = num(&e.value, "Scale for delays")?;
        if s != 0.0 {
            return err(
                &e.at,
                format!(
                    "`Scale for delays` = {s} on a type-1 controller: its pass-through delays are not \
                     modelled (only 0)"
                ),
            );
        }
    }
    Ok(())
}

/// Where a controller sits: the file, the device imported and its model, the controller's
/// node in the topology, the file's path.
struct Place<'a> {
    doc: &'a Document,
    dev: &'a Device<'a>,
    spec: &'a DiskSpec,
    ctlr: usize,
    path: &'a Path,
}

fn smart_controller(b: &Block, at: &Place) -> Result<Controller> {
    let mut f = Fields::new(b);
    f.ignore(&["type", "Print stats"]);
    let disk_queue = controller_queue(f.block("Scheduler")?)?;
    let scale = nonnegative(&mut f, "Scale for delays")?;
    let per_sector = nonnegative(&mut f, "Bulk sector transfer time")?;
    let (host_queue, queueing) = driver(at.doc)?;
    // with queueing in the subsystem the driver keeps `Maximum queue length + 1` at the
    // controller; without, one at a time at the one device the host addresses
    let host_slots = if queueing { f.uint("Maximum queue length")?.saturating_add(1) } else { 1 };
    f.take("Maximum queue length");
    let dv = f.need("Max per-disk pending count")?;
    let disk_slots = uint(dv, "Max per-disk pending count")?;
    if disk_slots == 0 {
        return err(
            dv.pos(),
            "`Max per-disk pending count` = 0: DiskSim would never send the disk a request",
        );
    }
    let cache = f.block("Cache")?;
    let (cache, on_device, max_request) = match cache.ty.as_str() {
        "disksim_cachemem" => {
            let (m, max) = cachemem(cache)?;
            (m, None, max)
        }
        "disksim_cachedev" => {
            let (d, max) = cachedev(cache, at)?;
            (None, Some(d), max)
        }
        other => {
            return err(
                &cache.at,
                format!("`Cache` is a {other}: disksim_cachemem and disksim_cachedev are modelled"),
            )
        }
    };
    f.finish()?;
    Ok(Controller {
        overhead: super::ms(0.5 * scale),
        host_per_sector: super::ms(per_sector),
        host_slots,
        host_queue,
        disk_queue,
        disk_slots,
        max_request,
        cache,
        on_device,
    })
}

/// A `disksim_cachedev` block: the cache on another device behind this controller, and the
/// driver's `Max request size`.
fn cachedev(b: &Block, at: &Place) -> Result<(CacheDev, u32)> {
    let mut f = Fields::new(b);
    let sv = f.need("Cache size")?;
    let sectors = uint(sv, "Cache size")? as u64;
    let max_request = f.uint("Max request size")?;
    let write_through = choice(&mut f, "Write scheme", 1..=3)? == 2;
    // read by DiskSim, and never used
    choice(&mut f, "Flush policy", 0..=1)?;
    f.num("Flush period")?;
    let iv = f.need("Flush idle delay")?;
    let idle = num(iv, "Flush idle delay")?;
    if idle < 0.0 {
        return err(
            iv.pos(),
            format!(
                "`Flush idle delay` = {idle}: DiskSim's cachedev runs its idle work whenever the delay is not \
                 0, so -1 would run it 1 ms in the past; 0 is never"
            ),
        );
    }
    let (cache_name, cat) = f.word("Cache device")?;
    let (cached_name, cdat) = f.word("Cached device")?;
    f.finish()?;
    if cached_name != at.dev.name {
        return err(
            cdat,
            format!(
                "`Cached device` is `{cached_name}`, not `{}`: the host reaches only the cached device \
                 through this controller (import it as FILE#{cached_name})",
                at.dev.name
            ),
        );
    }
    let all = super::devices::devices(at.doc);
    let Some(cache_dev) = all.iter().find(|d| d.name == cache_name && cache_name != cached_name) else {
        return err(cat, format!("`Cache device` `{cache_name}` is not another device of the file"));
    };
    let mut up = device_node(at.doc, cache_dev);
    while let Some(i) = up.filter(|&i| i != at.ctlr) {
        up = at.doc.topology[i].parent;
    }
    if up.is_none() {
        return err(cat, format!("`Cache device` `{cache_name}` is not behind this controller"));
    }
    let stem = at.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut device = super::map_bare(at.doc, cache_dev, &format!("{stem}#{cache_name}"), at.path)?;
    device.bus_seats = super::bus::seat(at.doc, cache_dev)?.into_iter().collect();
    if sectors < at.spec.capacity_sectors || sectors > device.capacity_sectors {
        return err(
            sv.pos(),
            format!(
                "`Cache size` = {sectors}: it must cover the cached device ({} sectors; DiskSim writes past its \
                 bitmaps for a read beyond it) and fit on the cache device ({} sectors)",
                at.spec.capacity_sectors, device.capacity_sectors
            ),
        );
    }
    let delay = super::ms(idle.trunc());
    Ok((
        CacheDev {
            sectors,
            write_through,
            idle_delay: (idle > 0.0).then_some(delay),
            device: Box::new(device),
        },
        max_request,
    ))
}

/// A queue's `Scheduling policy` (1 or 3), and its `Sequential stream scheme` bits and
/// `Maximum concat size`; what else would change the order is refused at its line.
fn ioqueue(b: &Block, whose: &str) -> Result<(QueueOrder, u32, u32)> {
    let key = |k: &str| b.entries.iter().find(|e| e.key == k);
    let Some(p) = key("Scheduling policy") else {
        return err(&b.at, format!("the {whose}'s `Scheduler` lacks `Scheduling policy`"));
    };
    let order = match uint(&p.value, "Scheduling policy")? {
        1 => QueueOrder::Fcfs,
        3 => QueueOrder::CycleLbn,
        n => {
            return err(
                &p.at,
                format!("{whose} `Scheduling policy` = {n}: headway runs 1 (FCFS) and 3 (CYCLE_LBN) there"),
            )
        }
    };
    let whole = |k: &str| key(k).map(|e| uint(&e.value, k)).transpose().map(|v| v.unwrap_or(0));
    for k in ["Overlapping request scheme", "Scheduling priority scheme"] {
        if whole(k)? != 0 {
            let e = key(k).expect("non-zero, so present");
            return err(&e.at, format!("{whose} `{k}` = {}: only 0 is modelled", whole(k)?));
        }
    }
    let scheme = whole("Sequential stream scheme")?;
    if scheme > 3 {
        let e = key("Sequential stream scheme").expect("non-zero, so present");
        return err(
            &e.at,
            format!(
                "{whose} `Sequential stream scheme` = {scheme}: only 0-3 (joining reads, writes) is modelled"
            ),
        );
    }
    Ok((order, scheme, whole("Maximum concat size")?))
}

/// The controller's queue to each device.
fn controller_queue(b: &Block) -> Result<DiskQueue> {
    let (order, scheme, max_join) = ioqueue(b, "controller")?;
    Ok(DiskQueue { order, join_reads: scheme & 1 == 1, join_writes: scheme & 2 == 2, max_join })
}

/// The driver's queue order and `Use queueing in subsystem`, from the `disksim_iodriver`
/// at the top of the topology (FCFS with queueing if the file has none).
fn driver(doc: &Document) -> Result<(QueueOrder, bool)> {
    let root = doc.topology.iter().find(|n| n.parent.is_none() && n.ty == "disksim_iodriver");
    let Some(b) = root.and_then(|n| instance_block(doc, &n.name)) else {
        return Ok((QueueOrder::Fcfs, true));
    };
    let queueing = match b.entries.iter().find(|e| e.key == "Use queueing in subsystem") {
        Some(e) => uint(&e.value, "Use queueing in subsystem")? == 1,
        None => true,
    };
    let Some(Value::Block(q)) = b.entries.iter().find(|e| e.key == "Scheduler").map(|e| &e.value) else {
        return Ok((QueueOrder::Fcfs, queueing));
    };
    let (order, scheme, _) = ioqueue(q, "driver")?;
    if scheme != 0 {
        let e = q.entries.iter().find(|e| e.key == "Sequential stream scheme").expect("non-zero, so present");
        return err(
            &e.at,
            "driver `Sequential stream scheme`: headway's driver does not join requests (only 0)",
        );
    }
    Ok((order, queueing))
}

fn nonnegative(f: &mut Fields, key: &str) -> Result<f64> {
    let v = f.need(key)?;
    let x = num(v, key)?;
    if x < 0.0 {
        return err(v.pos(), format!("`{key}` must be >= 0, not {x}"));
    }
    Ok(x)
}

/// A whole number in `range`.
fn choice(f: &mut Fields, key: &str, range: std::ops::RangeInclusive<u32>) -> Result<u32> {
    let v = f.need(key)?;
    let n = uint(v, key)?;
    if !range.contains(&n) {
        return err(v.pos(), format!("`{key}` = {n}: DiskSim takes {}..={}", range.start(), range.end()));
    }
    Ok(n)
}

/// The cache (`None` for `Cache size` 0) and the driver's `Max request size`.
fn cachemem(b: &Block) -> Result<(Option<CacheMem>, u32)> {
    let mut f = Fields::new(b);
    let (size_at, slru_at) = (f.index("Cache size"), f.index("SLRU segments"));
    let size = f.uint("Cache size")?;
    let line = f.uint("Line size")?;
    let policy = f.need("Replacement policy")?;
    if uint(policy, "Replacement policy")? != 2 {
        return err(
            policy.pos(),
            "`Replacement policy`: only 2 (LRU) runs; under 1, 3 and 4 DiskSim never replaces a line, \
             so a full cache stops every miss",
        );
    }
    match (f.take("SLRU segments"), slru_at < size_at) {
        (Some(Value::List(segs, at)), _) if segs.len() != 1 => {
            return err(at, "`SLRU segments`: only one segment (plain LRU) runs as DiskSim means it")
        }
        (Some(v), true) => {
            return err(
                v.pos(),
                "`SLRU segments` before `Cache size`: DiskSim then ignores the size and runs without a \
                 cache; write it after",
            )
        }
        (Some(Value::List(..)), false) => {}
        (Some(v), _) => return err(v.pos(), "`SLRU segments` must be a [ list ]"),
        (None, _) => {
            return err(
                &b.at,
                "`disksim_cachemem` lacks `SLRU segments`: policy 2 needs one segment, [ 1.0 ]",
            )
        }
    }
    let bits = f.need("Bit granularity")?;
    if uint(bits, "Bit granularity")? != 1 {
        return err(bits.pos(), "`Bit granularity`: only 1 is modelled (one valid bit per sector)");
    }
    let lock = f.need("Lock granularity")?;
    if uint(lock, "Lock granularity")? != line {
        return err(lock.pos(), format!("`Lock granularity`: only the line size ({line}) is modelled"));
    }
    let lv = f.need("Line size")?;
    if line == 0 || size % line.max(1) != 0 {
        return err(
            lv.pos(),
            format!("`Line size` = {line}: it must be > 0 and divide `Cache size` ({size})"),
        );
    }
    let shared_reads = f.flag_or("Shared read locks", false)?;
    let max_request = f.uint("Max request size")?;
    let allocation = match choice(&mut f, "Allocation policy", 0..=1)? {
        0 => Allocation::Victim,
        _ => Allocation::Clean,
    };
    let write = match choice(&mut f, "Write scheme", 1..=3)? {
        1 => WriteScheme::Synchronous,
        2 => WriteScheme::Through,
        _ => WriteScheme::Back,
    };
    let periodic = choice(&mut f, "Flush policy", 0..=1)? == 1;
    let pv = f.need("Flush period")?;
    let period = num(pv, "Flush period")?;
    if periodic && period <= 0.0 {
        return err(
            pv.pos(),
            "`Flush period` must be > 0 with `Flush policy` 1 (DiskSim flushes forever at 0)",
        );
    }
    let iv = f.need("Flush idle delay")?;
    let idle = num(iv, "Flush idle delay")?;
    if idle < 0.0 && idle != -1.0 {
        return err(iv.pos(), format!("`Flush idle delay` = {idle}: >= 0, or -1 for never"));
    }
    let cluster = f.uint("Flush max line cluster")?.max(1);
    let prefetch = choice(&mut f, "Read prefetch type", 0..=3)?;
    choice(&mut f, "Write prefetch type", 0..=3)?;
    let line_by_line = f.flag_or("Line-by-line fetches", false)?;
    let gather = f.uint("Max gather")?;
    f.finish()?;
    if size == 0 {
        return Ok((None, max_request));
    }
    let cache = CacheMem {
        lines: size / line,
        line,
        shared_reads,
        allocation,
        write,
        flush_period: periodic.then(|| super::ms(period)),
        // DiskSim sets up the idle work only for a delay above 0 (`cachemem_initialize`), and
        // its queue keeps the delay as whole ms (`struct ioq`'s `int idledelay`)
        idle_delay: (idle > 0.0).then(|| super::ms(idle.trunc())),
        cluster,
        prefetch_front: prefetch & 1 == 1,
        prefetch_rest: prefetch & 2 == 2,
        line_by_line,
        gather,
    };
    Ok((Some(cache), max_request))
}
