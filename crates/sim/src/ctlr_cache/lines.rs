//! The cache's lines (DiskSim 4.0's `disksim_cachemem.c`, restated): where each cached
//! line sits, which of its sectors are valid and dirty, its lock, and the LRU order.
//!
//! * A line holds sectors `k L .. k L + L` of the device. Lines start on the free list (in
//!   order); a line in use is in the map by its number `k`.
//! * A line enters the LRU list only when a request that used it finishes (a read's host
//!   transfer, a write's copy into the cache): a line allocated by a request still under
//!   way cannot be replaced.
//! * One lock per line: any number of readers (one, unless `Shared read locks`) or one
//!   writer, owned by a host request or a write-back. Waiters queue first come, first
//!   served; a lock is not handed over, a woken waiter tries again.

use std::collections::{BTreeMap, HashMap, VecDeque};

/// Who holds a lock.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    /// A host request at the controller.
    Op(u64),
    /// A write-back (its disk request's token).
    Flush(u64),
}

/// The lock a request wants.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Read,
    Write,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Line {
    /// The line's number (its first sector / L); meaningless while free.
    pub no: u64,
    pub valid: Vec<bool>,
    pub dirty: Vec<bool>,
    pub readers: Vec<Owner>,
    pub writer: Option<Owner>,
    pub waiters: VecDeque<(u64, Mode)>,
    /// Its place in the LRU list, if it is there.
    stamp: Option<u64>,
}

impl Line {
    pub fn locked(&self) -> bool {
        self.writer.is_some() || !self.readers.is_empty()
    }

    pub fn any_dirty(&self) -> bool {
        self.dirty.iter().any(|&d| d)
    }
}

/// Why an allocation found no line.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum NoLine {
    /// Every line is locked: wait for one to be unlocked.
    AllLocked,
    /// The victim is dirty: wait for its write-back (allocation policy 0).
    Dirty(usize),
}

pub(super) struct Lines {
    pub line: u64,
    pub shared_reads: bool,
    pub all: Vec<Line>,
    map: HashMap<u64, usize>,
    free: VecDeque<usize>,
    lru: BTreeMap<u64, usize>,
    stamp: u64,
}

impl Lines {
    pub fn new(lines: u32, line: u32, shared_reads: bool) -> Lines {
        let blank =
            Line { valid: vec![false; line as usize], dirty: vec![false; line as usize], ..Line::default() };
        Lines {
            line: line as u64,
            shared_reads,
            all: vec![blank; lines as usize],
            map: HashMap::new(),
            free: (0..lines as usize).collect(),
            lru: BTreeMap::new(),
            stamp: 0,
        }
    }

    /// The line holding sector `s`, if cached.
    pub fn find(&self, s: u64) -> Option<usize> {
        self.map.get(&(s / self.line)).copied()
    }

    /// Make `i` the most recently used line.
    pub fn touch(&mut self, i: usize) {
        if let Some(old) = self.all[i].stamp.take() {
            self.lru.remove(&old);
        }
        self.stamp += 1;
        self.all[i].stamp = Some(self.stamp);
        self.lru.insert(self.stamp, i);
    }

    /// The LRU list, least recently used first.
    pub fn lru_order(&self) -> Vec<usize> {
        self.lru.values().copied().collect()
    }

    /// A line for sector `s`: a free one, else the least recently used unlocked one.
    /// `clean_only` (allocation policy 1) passes over dirty lines, each returned in
    /// `passed` for a write-back; otherwise a dirty victim is refused with
    /// [`NoLine::Dirty`].
    pub fn allocate(&mut self, s: u64, clean_only: bool, passed: &mut Vec<usize>) -> Result<usize, NoLine> {
        let i = match self.free.pop_front() {
            Some(i) => i,
            None => {
                let mut victim = None;
                for &i in self.lru.values() {
                    let l = &self.all[i];
                    if l.locked() || !l.waiters.is_empty() {
                        continue;
                    }
                    if l.any_dirty() {
                        if clean_only {
                            passed.push(i);
                            continue;
                        }
                        return Err(NoLine::Dirty(i));
                    }
                    victim = Some(i);
                    break;
                }
                let i = victim.ok_or(NoLine::AllLocked)?;
                let l = &mut self.all[i];
                self.map.remove(&l.no);
                if let Some(st) = l.stamp.take() {
                    self.lru.remove(&st);
                }
                i
            }
        };
        let l = &mut self.all[i];
        l.no = s / self.line;
        l.valid.iter_mut().for_each(|v| *v = false);
        l.dirty.iter_mut().for_each(|v| *v = false);
        self.map.insert(l.no, i);
        Ok(i)
    }

    /// Take (or keep, or change) `who`'s lock of `mode` on line `i`; false if it must wait.
    pub fn lock(&mut self, i: usize, who: Owner, mode: Mode) -> bool {
        let shared = self.shared_reads;
        let l = &mut self.all[i];
        let others_read = l.readers.iter().any(|&r| r != who);
        match mode {
            Mode::Read => {
                if l.writer == Some(who) {
                    // a read lock while holding the write lock: downgraded
                    l.writer = None;
                    l.readers.push(who);
                    return true;
                }
                if l.readers.contains(&who) {
                    return true;
                }
                if l.writer.is_some() || (!shared && others_read) {
                    return false;
                }
                l.readers.push(who);
                true
            }
            Mode::Write => {
                if l.writer == Some(who) {
                    return true;
                }
                if l.writer.is_some() || others_read {
                    return false;
                }
                l.readers.retain(|&r| r != who);
                l.writer = Some(who);
                true
            }
        }
    }

    /// `who` gives up its lock on line `i`.
    pub fn unlock(&mut self, i: usize, who: Owner) {
        let l = &mut self.all[i];
        if l.writer == Some(who) {
            l.writer = None;
        }
        l.readers.retain(|&r| r != who);
    }

    /// The waiters of line `i` that may now have its lock, in order: readers while there
    /// is no writer, or one writer when the line is unlocked.
    pub fn wake(&mut self, i: usize) -> Vec<u64> {
        let shared = self.shared_reads;
        let l = &mut self.all[i];
        let mut out = Vec::new();
        while let Some(&(op, mode)) = l.waiters.front() {
            let exclusive = mode == Mode::Write || !shared;
            if l.writer.is_some() || (exclusive && (!l.readers.is_empty() || !out.is_empty())) {
                break;
            }
            l.waiters.pop_front();
            out.push(op);
            if exclusive {
                break;
            }
        }
        out
    }
}

impl super::CtlrCache {
    /// The cached lines of `s..s+n`, in address order.
    pub(super) fn lines_of(&self, s: u64, n: u32) -> Vec<usize> {
        let l = self.lines.as_ref().unwrap();
        let first = s / l.line;
        let last = (s + n as u64 - 1) / l.line;
        (first..=last).filter_map(|k| l.find(k * l.line)).collect()
    }

    /// `who` unlocks `lines`; their waiters may go on.
    pub(super) fn release(&mut self, lines: &[usize], who: Owner) {
        for &i in lines {
            self.lines.as_mut().unwrap().unlock(i, who);
        }
        for &i in lines {
            self.wake_line(i);
        }
    }

    /// Line `i`'s lock changed: its waiters that may now have it try again; a line left
    /// unlocked with no waiters goes to the first allocation waiting for a line.
    pub(super) fn wake_line(&mut self, i: usize) {
        let l = self.lines.as_mut().unwrap();
        let woken = l.wake(i);
        let idle = l.all[i].waiters.is_empty() && !l.all[i].locked();
        self.ready.extend(woken);
        if idle {
            if let Some(op) = self.line_waiters.pop_front() {
                self.ready.push_back(op);
            }
        }
    }
}
