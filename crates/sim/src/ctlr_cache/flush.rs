//! Write-backs (DiskSim's `cache_initiate_dirty_block_flush`, `cache_flush_cluster`,
//! `cache_idletime_detected` and `cache_periodic_flush`, restated).
//!
//! From a dirty line: walking its sectors, a dirty one is cleaned and joins the run, a
//! clean valid one is passed over (inside the run if a dirty one follows), an invalid one
//! ends the run, which is written. Before the first run is written it may reach back into
//! the line before, and a run that ends at the line's end may reach into the next: with
//! `Flush max line cluster` M > 1, across a line boundary the dirty data touches (the run
//! starts at its line's first sector, or ends at its last), through the neighbour's dirty
//! and clean valid sectors up to an invalid one, taking at most M lines in all. A line
//! write-locked by a request is not written back. Every line of a write-back is
//! read-locked by it until the disk write completes.

use headway_sched::Dir;

use super::lines::{Lines, Owner};
use super::{CtlrCache, DiskJob};

/// A neighbour of a write-back: the cached line holding `edge`, walked away from the run
/// (down from its end when `down`, else up from its start) through dirty and clean valid
/// sectors up to an invalid one, its dirty ones cleaned. The farthest dirty sector
/// reached, and whether the walk crossed the whole line; `None` if the line is not cached
/// or a request holds it for writing.
fn absorb(l: &mut Lines, edge: u64, down: bool) -> Option<(Option<u64>, bool)> {
    let i = l.find(edge)?;
    if l.all[i].writer.is_some() {
        return None;
    }
    let size = l.line as usize;
    let base = l.all[i].no * l.line;
    let line = &mut l.all[i];
    let mut far = None;
    for k in (0..size).map(|j| if down { size - 1 - j } else { j }) {
        if line.dirty[k] {
            line.dirty[k] = false;
            far = Some(base + k as u64);
        } else if !line.valid[k] {
            return Some((far, false));
        }
    }
    Some((far, true))
}

impl CtlrCache {
    /// Write line `i` back (clustered); `waiter`: an allocation that waits for it. The disk
    /// writes issued.
    pub(super) fn flush_line(&mut self, i: usize, waiter: Option<u64>, idle: bool) -> u32 {
        let cluster = self.m.as_ref().unwrap().cluster as u64;
        let l = self.lines.as_mut().unwrap();
        let size = l.line;
        if l.all[i].writer.is_some() {
            return 0;
        }
        let base = l.all[i].no * size;
        let mut runs: Vec<(u64, u64)> = Vec::new();
        let mut run: Option<(u64, u64)> = None;
        for k in 0..size as usize {
            let line = &mut l.all[i];
            if line.dirty[k] {
                line.dirty[k] = false;
                let a = base + k as u64;
                run = Some((run.map_or(a, |r| r.0), a));
            } else if !line.valid[k] {
                runs.extend(run.take());
            }
        }
        runs.extend(run);
        let Some(first) = runs.first_mut() else { return 0 };
        // DiskSim reaches forward only from a line whose first dirty sector is its first
        let aligned = first.0 == base;
        let mut used = 1;
        // back into the lines before, while the dirty data reaches their end
        while cluster > 1 && used < cluster && first.0.is_multiple_of(size) && first.0 > 0 {
            let Some((far, whole)) = absorb(l, first.0 - 1, true) else { break };
            used += 1;
            let line_start = first.0 - size;
            first.0 = far.unwrap_or(first.0);
            if !whole || first.0 != line_start {
                break;
            }
        }
        let last = runs.last_mut().unwrap();
        // on into the lines after, while it reaches their start
        while aligned && cluster > 1 && used < cluster && (last.1 + 1).is_multiple_of(size) {
            let Some((far, whole)) = absorb(l, last.1 + 1, false) else { break };
            used += 1;
            let line_end = last.1 + size;
            last.1 = far.unwrap_or(last.1);
            if !whole || last.1 != line_end {
                break;
            }
        }
        let n = runs.len() as u32;
        for (s, e) in runs {
            let len = (e - s + 1) as u32;
            let lines = self.lines_of(s, len);
            let token = self.next_token;
            for &j in &lines {
                self.lines.as_mut().unwrap().all[j].readers.push(Owner::Flush(token));
            }
            self.stats.destages += 1;
            self.stats.destage_sectors += len as u64;
            let t = self.issue(s, len, Dir::Write, DiskJob::Flush { lines, waiter, idle });
            debug_assert_eq!(t, token);
        }
        n
    }

    /// The disk's queue has been empty for the idle delay: write back the least recently
    /// used dirty line.
    pub(super) fn idle_flush(&mut self) {
        for i in self.lines.as_ref().map(|l| l.lru_order()).unwrap_or_default() {
            if self.lines.as_ref().unwrap().all[i].any_dirty() && self.flush_line(i, None, true) > 0 {
                return;
            }
        }
    }

    /// The periodic flush: every dirty line, least recently used first.
    pub(super) fn periodic_flush(&mut self) {
        for i in self.lines.as_ref().map(|l| l.lru_order()).unwrap_or_default() {
            if self.lines.as_ref().unwrap().all[i].any_dirty() {
                self.flush_line(i, None, false);
            }
        }
        // re-armed while dirty data remains (see the module header of the layer)
        let dirty = self.lines.as_ref().is_some_and(|l| l.all.iter().any(|l| l.any_dirty()));
        if let (true, Some(p)) = (dirty, self.m.as_ref().and_then(|m| m.flush_period)) {
            self.periodic_armed = true;
            self.at((self.now / p.0 + 1) * p.0, super::Due::Periodic);
        }
    }
}
