//! The host side of the controller: a request's slot and pieces, the DMA engine, what a
//! read or write does once its data has moved, and the completion to the host (the rules
//! are in the [module header](super)).

use std::collections::VecDeque;

use headway_disk::ctlr::{QueueOrder, WriteScheme};
use headway_sched::Dir;

use super::lines::Owner;
use super::{CtlrCache, DiskJob, Due, Host, Op, Out, Wait};

impl CtlrCache {
    /// A host request takes a slot at the controller.
    pub(super) fn admit(&mut self, host: Host) {
        self.hosts_in += 1;
        let id = self.next_op;
        self.next_op += 1;
        let len = self.piece_len(host.len);
        let op = Op {
            host,
            start: host.sector,
            len,
            pos: 0,
            run: None,
            missed: false,
            wait: Wait::Running,
            disk_ns: 0,
        };
        self.ops.insert(id, op);
        self.start_piece(id);
    }

    pub(super) fn piece_len(&self, left: u32) -> u32 {
        match self.c.max_request {
            0 => left,
            m => left.min(m),
        }
    }

    pub(super) fn start_piece(&mut self, id: u64) {
        let o = &self.ops[&id];
        if self.dev.is_some() {
            return match o.host.dir {
                Dir::Read => self.device_read(id),
                Dir::Write => self.dma(id),
            };
        }
        if self.lines.is_none() {
            match o.host.dir {
                Dir::Read => {
                    let (s, n) = (o.start, o.len);
                    self.ops.get_mut(&id).unwrap().wait = Wait::Fill;
                    self.issue(s, n, Dir::Read, DiskJob::Pass(id));
                }
                Dir::Write => self.dma(id),
            }
            return;
        }
        self.ready.push_back(id);
    }

    /// Resume every op that can go on.
    pub(super) fn run_ready(&mut self) {
        while let Some(id) = self.ready.pop_front() {
            let Some(o) = self.ops.get(&id) else { continue };
            if !matches!(o.wait, Wait::Running | Wait::Lock | Wait::Line) {
                continue;
            }
            match o.host.dir {
                Dir::Read => self.walk_read(id),
                Dir::Write => self.walk_write(id),
            }
        }
    }

    /// Op `id` is ready for the host transfer.
    pub(super) fn dma(&mut self, id: u64) {
        self.ops.get_mut(&id).unwrap().wait = Wait::Dma;
        if self.dma_busy {
            self.dma_queue.push_back(id);
        } else {
            self.start_dma(id);
        }
    }

    pub(super) fn start_dma(&mut self, id: u64) {
        self.dma_busy = true;
        let t = self.now + self.ops[&id].len as u64 * self.c.host_per_sector.0;
        self.at(t, Due::DmaEnd(id));
    }

    /// Op `id`'s DMA ended.
    pub(super) fn transferred(&mut self, id: u64) {
        let o = &self.ops[&id];
        let (dir, s, n) = (o.host.dir, o.start, o.len);
        if self.dev.is_some() {
            return match dir {
                Dir::Read => self.complete_after(id, self.c.overhead.0),
                Dir::Write => self.device_write(id),
            };
        }
        if self.lines.is_none() {
            match dir {
                Dir::Read => self.complete_after(id, self.c.overhead.0),
                Dir::Write => {
                    self.ops.get_mut(&id).unwrap().wait = Wait::Fill;
                    self.issue(s, n, Dir::Write, DiskJob::Pass(id));
                }
            }
            return;
        }
        let lines = self.lines_of(s, n);
        match dir {
            Dir::Read => {
                for &i in &lines {
                    let l = self.lines.as_mut().unwrap();
                    l.touch(i);
                }
                self.release(&lines, Owner::Op(id));
                self.complete_after(id, self.c.overhead.0);
            }
            Dir::Write => self.written(id, s, n, lines),
        }
    }

    /// A write's data is in the cache (after its DMA).
    pub(super) fn written(&mut self, id: u64, s: u64, n: u32, lines: Vec<usize>) {
        let scheme = self.m.as_ref().unwrap().write;
        let l = self.lines.as_mut().unwrap();
        let size = l.line;
        for &i in &lines {
            l.touch(i);
            let base = l.all[i].no * size;
            for a in s.max(base)..(s + n as u64).min(base + size) {
                let k = (a - base) as usize;
                l.all[i].valid[k] = true;
                l.all[i].dirty[k] = scheme == WriteScheme::Back;
            }
        }
        if scheme == WriteScheme::Back {
            self.release(&lines, Owner::Op(id));
            if self.disk_empty(0) && !self.idle_armed {
                self.arm_idle();
            }
            return self.complete_after(id, self.c.overhead.0);
        }
        // the lines stay read-locked, by an owner of their own, until the disk has them
        let owner = self.next_op;
        self.next_op += 1;
        let l = self.lines.as_mut().unwrap();
        for &i in &lines {
            l.unlock(i, Owner::Op(id));
            l.all[i].readers.push(Owner::Op(owner));
        }
        for &i in &lines {
            self.wake_line(i);
        }
        let mut pieces = self.destage_pieces(s, n);
        let (ps, pn) = pieces.pop_front().expect("a write has a piece");
        self.destage(id, owner, ps, pn, pieces);
        if scheme == WriteScheme::Through {
            self.complete_after(id, self.c.overhead.0);
        } else {
            self.ops.get_mut(&id).unwrap().wait = Wait::Destage;
        }
    }

    /// The write-through of `s..s+n` in pieces: cut at line starts, every line with
    /// `Line-by-line fetches`, else past `Max gather` + 1 lines.
    pub(super) fn destage_pieces(&self, s: u64, n: u32) -> VecDeque<(u64, u32)> {
        let m = self.m.as_ref().unwrap();
        let size = m.line as u64;
        let end = s + n as u64;
        let mut out = VecDeque::new();
        let (mut start, mut lines) = (s, 1u64);
        let mut b = (s / size + 1) * size;
        while b < end {
            if m.line_by_line || (m.gather > 0 && lines > m.gather as u64) {
                out.push_back((start, (b - start) as u32));
                (start, lines) = (b, 1);
            } else {
                lines += 1;
            }
            b += size;
        }
        out.push_back((start, (end - start) as u32));
        out
    }

    pub(super) fn destage(&mut self, op: u64, owner: u64, s: u64, n: u32, rest: VecDeque<(u64, u32)>) {
        let lines = self.lines_of(s, n);
        self.stats.destages += 1;
        self.stats.destage_sectors += n as u64;
        self.issue(s, n, Dir::Write, DiskJob::Destage { op, owner, lines, rest });
    }

    /// Op `id`'s current piece completes `delay` from now.
    pub(super) fn complete_after(&mut self, id: u64, delay: u64) {
        self.ops.get_mut(&id).unwrap().wait = Wait::Completing;
        self.at(self.now + delay, Due::Complete(id));
    }

    /// Op `id`'s piece has completed at the host: the next piece, or the request is done.
    pub(super) fn completed(&mut self, id: u64) {
        let o = self.ops.get_mut(&id).unwrap();
        let end = o.start + o.len as u64;
        let left = (o.host.sector + o.host.len as u64 - end) as u32;
        if left > 0 {
            let len = self.piece_len(left);
            let o = self.ops.get_mut(&id).unwrap();
            (o.start, o.len, o.pos, o.run, o.wait) = (end, len, 0, None, Wait::Running);
            return self.start_piece(id);
        }
        let o = self.ops.remove(&id).unwrap();
        self.out.push(Out::Done { host: o.host.id, disk_ns: o.disk_ns });
        self.hosts_in -= 1;
        if let Some(h) = self.next_host() {
            self.admit(h);
        }
    }

    /// The host request that goes to the controller next, in the driver's order (FCFS, or
    /// `CYCLE_LBN` by start sector from the last one's, as the controller's queues).
    fn next_host(&mut self) -> Option<Host> {
        let i = match self.c.host_queue {
            QueueOrder::Fcfs => 0,
            QueueOrder::CycleLbn => {
                let w = &self.hosts_waiting;
                let lowest = |above: u64| {
                    (0..w.len()).filter(|&i| w[i].sector >= above).min_by_key(|&i| (w[i].sector, i))
                };
                lowest(self.host_last).or_else(|| lowest(0))?
            }
        };
        let h = self.hosts_waiting.remove(i)?;
        self.host_last = h.sector;
        Some(h)
    }
}
