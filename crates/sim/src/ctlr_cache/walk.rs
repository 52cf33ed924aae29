//! The walks of a read and a write over their lines (DiskSim's `cache_read_continue`,
//! `cache_issue_fillreq` and `cache_write_continue`, restated; the rules are in the
//! [module header](super)). A walk stops where it must wait and resumes there.

use headway_sched::Dir;

use super::lines::{Mode, NoLine, Owner};
use super::{CtlrCache, DiskJob, Wait};

impl CtlrCache {
    /// The line for sector `s` (allocated if need be), or `None` if op `id` waits.
    fn line_for(&mut self, id: u64, s: u64) -> Option<usize> {
        let clean_only = self.m.as_ref().unwrap().allocation == headway_disk::ctlr::Allocation::Clean;
        let l = self.lines.as_mut().unwrap();
        if let Some(i) = l.find(s) {
            return Some(i);
        }
        let mut passed = Vec::new();
        let got = l.allocate(s, clean_only, &mut passed);
        for p in passed {
            self.flush_line(p, None, false);
        }
        match got {
            Ok(i) => Some(i),
            Err(NoLine::AllLocked) => {
                self.line_waiters.push_back(id);
                self.ops.get_mut(&id).unwrap().wait = Wait::Line;
                None
            }
            Err(NoLine::Dirty(v)) => {
                let n = self.flush_line(v, Some(id), false);
                let o = self.ops.get_mut(&id).unwrap();
                if n == 0 {
                    // nothing could be written back: look again
                    self.ready.push_back(id);
                    o.wait = Wait::Running;
                } else {
                    o.wait = Wait::Flush(n);
                }
                None
            }
        }
    }

    /// `id` takes `mode` on line `i`, or queues for it (and waits).
    fn lock_or_wait(&mut self, id: u64, i: usize, mode: Mode) -> bool {
        let l = self.lines.as_mut().unwrap();
        let was_writer = l.all[i].writer == Some(Owner::Op(id));
        if l.lock(i, Owner::Op(id), mode) {
            if was_writer && mode == Mode::Read {
                self.wake_line(i);
            }
            return true;
        }
        l.all[i].waiters.push_back((id, mode));
        self.ops.get_mut(&id).unwrap().wait = Wait::Lock;
        false
    }

    /// Op `id` walks again: the line size, its piece's first sector and length, and where
    /// it stopped.
    fn resume(&mut self, id: u64) -> (u64, u64, u64, u64) {
        let o = self.ops.get_mut(&id).unwrap();
        o.wait = Wait::Running;
        (self.lines.as_ref().unwrap().line, o.start, o.len as u64, o.pos)
    }

    pub(super) fn walk_read(&mut self, id: u64) {
        let (line_by_line, gather) = {
            let m = self.m.as_ref().unwrap();
            (m.line_by_line, m.gather as u64)
        };
        let (size, b, n, mut pos) = self.resume(id);
        while pos < n {
            let s = b + pos;
            self.ops.get_mut(&id).unwrap().pos = pos;
            let Some(i) = self.line_for(id, s) else { return };
            let stop = (n - pos).min(size - s % size);
            for j in 0..stop {
                let a = s + j;
                let k = (a % size) as usize;
                let valid = self.lines.as_ref().unwrap().all[i].valid[k];
                let holds_write = self.lines.as_ref().unwrap().all[i].writer == Some(Owner::Op(id));
                if j == 0 || (!valid && !holds_write) {
                    let mode = if valid { Mode::Read } else { Mode::Write };
                    if !self.lock_or_wait(id, i, mode) {
                        if j > 0 {
                            // an upgrade others' reads block: ours goes meanwhile
                            self.lines.as_mut().unwrap().unlock(i, Owner::Op(id));
                            self.wake_line(i);
                        }
                        self.ops.get_mut(&id).unwrap().pos = pos + j;
                        return;
                    }
                }
                if !valid {
                    self.lines.as_mut().unwrap().all[i].valid[k] = true;
                    let o = self.ops.get_mut(&id).unwrap();
                    o.run.get_or_insert(a);
                } else if let Some(run) = self.ops[&id].run {
                    return self.fill(id, run, a - 1);
                }
            }
            let last = s + stop - 1;
            if let Some(run) = self.ops[&id].run {
                if line_by_line || (gather > 0 && (last + 1) / size - run / size > gather) {
                    return self.fill(id, run, last);
                }
            }
            pos += stop;
        }
        if let Some(run) = self.ops[&id].run {
            return self.fill(id, run, b + n - 1);
        }
        let o = self.ops.get_mut(&id).unwrap();
        o.pos = n;
        self.stats.reads += 1;
        if !o.missed {
            self.stats.read_hits += 1;
        }
        self.dma(id);
    }

    /// Op `id` reads `first..=last` from the disk (widened by the prefetch type inside
    /// the first and last lines), and waits for it.
    fn fill(&mut self, id: u64, first: u64, last: u64) {
        let m = self.m.as_ref().unwrap();
        let (front, rest) = (m.prefetch_front, m.prefetch_rest);
        let l = self.lines.as_mut().unwrap();
        let size = l.line;
        let (mut start, mut end) = (first, last);
        if front {
            let i = l.find(start).expect("the run's first line");
            while start % size != 0 && !l.all[i].valid[((start - 1) % size) as usize] {
                start -= 1;
                l.all[i].valid[(start % size) as usize] = true;
            }
        }
        if rest {
            let i = l.find(end).expect("the run's last line");
            while (end + 1) % size != 0 && !l.all[i].valid[((end + 1) % size) as usize] {
                end += 1;
                l.all[i].valid[(end % size) as usize] = true;
            }
        }
        let o = self.ops.get_mut(&id).unwrap();
        o.run = None;
        o.missed = true;
        o.pos = 0;
        o.wait = Wait::Fill;
        let n = (end - start + 1) as u32;
        self.stats.fills += 1;
        self.stats.fill_sectors += n as u64;
        self.issue(start, n, Dir::Read, DiskJob::Fill(id));
    }

    pub(super) fn walk_write(&mut self, id: u64) {
        let (size, b, n, mut pos) = self.resume(id);
        while pos < n {
            let s = b + pos;
            self.ops.get_mut(&id).unwrap().pos = pos;
            let Some(i) = self.line_for(id, s) else { return };
            if !self.lock_or_wait(id, i, Mode::Write) {
                return;
            }
            pos += (n - pos).min(size - s % size);
        }
        self.ops.get_mut(&id).unwrap().pos = n;
        self.stats.writes += 1;
        let l = self.lines.as_ref().unwrap();
        let all_valid = (b..b + n).all(|a| l.find(a).is_some_and(|i| l.all[i].valid[(a % size) as usize]));
        if all_valid {
            self.stats.write_hits += 1;
        }
        self.dma(id);
    }
}
