//! The host's page cache: what buffered I/O (`direct=0`) does between a job and the block
//! layer. Reads go through Linux-style readahead ([`crate::readahead`]: fills are sync or
//! async disk requests; a read waits for the fill that carries its pages or hits at memory
//! speed); writes become dirty data ([`crate::writeback`]) written back later as
//! asynchronous requests — when a job's dirty data reaches `dirty_background_bytes`, when
//! it is older than `dirty_expire` at the flusher's periodic check, or for a sync — and a
//! writer over `dirty_bytes` (dirty plus in writeback) is throttled until writeback makes
//! room.
//!
//! One cached file per job (its region). The cache sends its disk requests to the block
//! layer itself, and tells the caller what completing one of them means for the jobs:
//! [`PageCache::fill_done`] (the reads that waited), [`PageCache::writeback_done`] (the
//! job whose writeback it was).

use std::collections::{HashMap, VecDeque};

use headway_sched::idmap::IdMap;
use headway_sched::{ContextId, Dir, ReqId, Request, SECTOR_BYTES};

use super::block::Block;
use super::core::{Core, Ev};
use crate::host::HostParams;
use crate::readahead::{Readahead, PAGE};
use crate::writeback::{Dirty, WritebackParams};

/// Time to copy a page-cache hit to the reader, or a write into the cache (memcpy of a few
/// KiB): 1 us, an estimate.
const PAGE_HIT: headway_sched::Duration = headway_sched::Duration::from_micros(1);

/// A page-cache fill: a disk read the readahead of a buffered reader issued (synchronous
/// or ahead), and the reads waiting for it.
struct Fill {
    job: u32,
    first_page: u64,
    sectors: u32,
    waiters: Vec<ReqId>,
}

/// A job's file in the cache.
struct File {
    /// Readahead state of a buffered reader.
    readahead: Option<Readahead>,
    dirty: Dirty,
    /// Sectors in writeback requests not yet complete.
    in_writeback: u64,
    /// Writes waiting for room under `dirty_bytes`: id, sector, sectors.
    throttled: VecDeque<(ReqId, u64, u32)>,
    /// The issuer writeback requests carry (the job's own).
    ctx: Option<ContextId>,
}

pub(crate) struct PageCache {
    files: Vec<File>,
    /// Fills in flight, by disk request id, and by (job, first page).
    fills: IdMap<Fill>,
    fill_at: HashMap<(u32, u64), ReqId>,
    wb: WritebackParams,
    /// Writeback requests in flight: id -> (job, sectors).
    writebacks: IdMap<(u32, u32)>,
    /// The flusher's periodic check is scheduled.
    flusher_armed: bool,
    read_ahead_kb: u64,
    readahead_after_io: bool,
}

impl PageCache {
    pub fn new(host: &HostParams) -> Self {
        PageCache {
            files: Vec::new(),
            fills: IdMap::default(),
            fill_at: HashMap::new(),
            wb: host.writeback.clone(),
            writebacks: IdMap::default(),
            flusher_armed: false,
            read_ahead_kb: host.read_ahead_kb,
            readahead_after_io: host.readahead_after_io,
        }
    }

    /// The next job's file: read through readahead when `buffered`; writeback requests
    /// carry `ctx`.
    pub fn add_job(&mut self, buffered: bool, ctx: Option<ContextId>) {
        let readahead = buffered
            .then(|| Readahead::new(self.read_ahead_kb).with_trigger_after_io(self.readahead_after_io));
        self.files.push(File {
            readahead,
            dirty: Dirty::default(),
            in_writeback: 0,
            throttled: VecDeque::new(),
            ctx,
        });
    }

    /// Job `j` reads through the cache.
    #[inline]
    pub fn reads_through(&self, j: usize) -> bool {
        self.files[j].readahead.is_some()
    }

    /// Job `j` has writeback requests in flight or writes waiting for room.
    pub fn writing_back(&self, j: usize) -> bool {
        self.files[j].in_writeback > 0 || !self.files[j].throttled.is_empty()
    }

    pub fn has_dirty(&self, j: usize) -> bool {
        !self.files[j].dirty.is_empty()
    }

    /// Dirty bytes of every job.
    pub fn dirty_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.dirty.bytes()).sum()
    }

    /// Buffered read `id` of job `j` (whose file is `region` = (first byte, bytes)): served
    /// from the cache (an `Ev::Hit`), or waiting for a fill; readahead may send fills, with
    /// issuer `ctx`. Returns whether anything went to the block layer.
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &mut self,
        core: &mut Core,
        block: &mut Block,
        j: usize,
        region: (u64, u64),
        id: ReqId,
        sector: u64,
        len: u32,
        ctx: Option<ContextId>,
    ) -> bool {
        let (start, size) = region;
        let page = |b: u64| b / PAGE;
        let off = sector * SECTOR_BYTES - start;
        let (first, end) = (page(off), page(off + len as u64 * SECTOR_BYTES - 1) + 1);
        let file_pages = page(size).max(end);
        let plan = self.files[j].readahead.as_mut().expect("a buffered reader").read(first, end, file_pages);
        let mut submitted = false;
        if let Some((a, b)) = plan.sync {
            self.fill(core, block, j, start, (a, b), vec![id], true, ctx);
            submitted = true;
        } else if let Some(p) = plan.wait_for {
            let fid = self.fill_at[&(j as u32, p)];
            self.fills.get_mut(&fid).expect("fill in flight").waiters.push(id);
        } else {
            core.push(core.now + PAGE_HIT, Ev::Hit(id.0));
        }
        if let Some(pages) = plan.read_ahead {
            self.fill(core, block, j, start, pages, Vec::new(), false, ctx);
            submitted = true;
        }
        submitted
    }

    /// Send a fill of `pages` of job `j`'s file (which starts at byte `start`).
    #[allow(clippy::too_many_arguments)]
    fn fill(
        &mut self,
        core: &mut Core,
        block: &mut Block,
        j: usize,
        start: u64,
        (a, b): (u64, u64),
        waiters: Vec<ReqId>,
        sync: bool,
        ctx: Option<ContextId>,
    ) {
        let sectors = ((b - a) * PAGE / SECTOR_BYTES) as u32;
        let fid = core.new_id();
        self.fills.insert(fid, Fill { job: j as u32, first_page: a, sectors, waiters });
        self.fill_at.insert((j as u32, a), fid);
        let rq = Request {
            id: fid,
            sector: (start + a * PAGE) / SECTOR_BYTES,
            len: sectors,
            dir: Dir::Read,
            sync,
            arrival: core.now,
            ctx,
        };
        block.arrive(core, rq, j as u32);
    }

    /// Would `len` more sectors put job `j` over `dirty_bytes` (with something of it dirty
    /// or in writeback, which is what frees room)?
    fn over(&self, j: usize, len: u32) -> bool {
        let f = &self.files[j];
        (f.dirty.bytes() + (f.in_writeback + len as u64) * SECTOR_BYTES) > self.wb.dirty_bytes
            && (f.in_writeback > 0 || !f.dirty.is_empty())
    }

    /// Buffered write `id` of job `j`: copied into the cache (dirty; an `Ev::Hit`), or held
    /// while the job is over its dirty limit. Returns whether writeback sent anything.
    pub fn write(
        &mut self,
        core: &mut Core,
        block: &mut Block,
        j: usize,
        id: ReqId,
        sector: u64,
        len: u32,
    ) -> bool {
        if !self.flusher_armed {
            self.flusher_armed = true;
            core.push(core.now + self.wb.dirty_writeback_interval, Ev::Flush);
        }
        if !self.files[j].throttled.is_empty() || self.over(j, len) {
            self.files[j].throttled.push_back((id, sector, len));
            return if self.files[j].in_writeback == 0 { self.write_back(core, block, j) } else { false };
        }
        self.files[j].dirty.write(core.now, sector, len);
        core.push(core.now + PAGE_HIT, Ev::Hit(id.0));
        if self.files[j].dirty.due(core.now, &self.wb) {
            return self.write_back(core, block, j);
        }
        false
    }

    /// Write back everything job `j` has dirty, as asynchronous requests. Returns whether
    /// anything was sent.
    pub fn write_back(&mut self, core: &mut Core, block: &mut Block, j: usize) -> bool {
        let runs = self.files[j].dirty.take_all(&self.wb);
        let ctx = self.files[j].ctx;
        for &(sector, len) in &runs {
            let id = core.new_id();
            self.writebacks.insert(id, (j as u32, len));
            self.files[j].in_writeback += len as u64;
            let rq = Request { id, sector, len, dir: Dir::Write, sync: false, arrival: core.now, ctx };
            block.arrive(core, rq, j as u32);
        }
        !runs.is_empty()
    }

    /// The flusher's periodic check: write back what has expired; keep ticking while
    /// `running`. Returns whether anything was sent.
    pub fn periodic(&mut self, core: &mut Core, block: &mut Block, running: bool) -> bool {
        let mut submitted = false;
        for j in 0..self.files.len() {
            if self.files[j].dirty.due(core.now, &self.wb) {
                submitted |= self.write_back(core, block, j);
            }
        }
        if running {
            core.push(core.now + self.wb.dirty_writeback_interval, Ev::Flush);
        } else {
            self.flusher_armed = false;
        }
        submitted
    }

    /// Writeback of job `j` freed room: let throttled writes into the cache.
    fn release_throttled(&mut self, core: &mut Core, block: &mut Block, j: usize) {
        while let Some(&(id, sector, len)) = self.files[j].throttled.front() {
            if self.over(j, len) {
                break;
            }
            self.files[j].throttled.pop_front();
            self.files[j].dirty.write(core.now, sector, len);
            core.push(core.now + PAGE_HIT, Ev::Hit(id.0));
        }
        if !self.files[j].throttled.is_empty() && self.files[j].in_writeback == 0 {
            // (called from a completion: the engine refills the drive right after)
            self.write_back(core, block, j);
        }
    }

    /// Disk request `id` completed (`service` ns of drive time carried `total` bytes): if it
    /// was a writeback request, its job and the job's share of the drive time (throttled
    /// writes that now fit go into the cache).
    #[inline(always)]
    pub fn writeback_done(
        &mut self,
        core: &mut Core,
        block: &mut Block,
        id: ReqId,
        service: u64,
        total: u64,
    ) -> Option<(usize, u64)> {
        if self.writebacks.is_empty() {
            return None;
        }
        let (j, len) = self.writebacks.remove(&id)?;
        let j = j as usize;
        let share = (service as u128 * (len as u64 * SECTOR_BYTES) as u128 / total as u128) as u64;
        self.files[j].in_writeback -= len as u64;
        self.release_throttled(core, block, j);
        Some((j, share))
    }

    /// Disk request `id` completed: if it was a fill, its job, the job's share of the drive
    /// time, and the reads that waited for it (they complete now).
    #[inline(always)]
    pub fn fill_done(&mut self, id: ReqId, service: u64, total: u64) -> Option<(usize, u64, Vec<ReqId>)> {
        if self.fills.is_empty() {
            return None;
        }
        let f = self.fills.remove(&id)?;
        let share = (service as u128 * (f.sectors as u64 * SECTOR_BYTES) as u128 / total as u128) as u64;
        self.fill_at.remove(&(f.job, f.first_page));
        if let Some(ra) = self.files[f.job as usize].readahead.as_mut() {
            ra.arrived(f.first_page);
        }
        Some((f.job as usize, share, f.waiters))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::block::tests::{disk_and_curve, input};
    use headway_sched::{ArraySchedulers, Settings};

    fn noop<'a>(input: &crate::engine::RunInput<'a>) -> Block<'a> {
        let s = headway_sched::registry::build("noop", &mut Settings::new()).unwrap();
        Block::new(ArraySchedulers { members: vec![s], hooks: None }, &[], input).unwrap()
    }

    /// The events in the heap, drained.
    fn events(core: &mut Core) -> Vec<Ev> {
        std::iter::from_fn(|| core.pop()).map(|(_, ev)| ev).collect()
    }

    #[test]
    fn a_first_read_waits_for_a_fill_the_next_ones_hit() {
        let (disk, curve) = disk_and_curve();
        let input = input(&disk, &curve, None);
        let mut block = noop(&input);
        let mut core = Core::new();
        let mut pc = PageCache::new(&input.host);
        pc.add_job(true, None);
        assert!(pc.reads_through(0));
        let region = (0, 1 << 30);
        let first = core.new_id();
        assert!(pc.read(&mut core, &mut block, 0, region, first, 0, 8, None), "a miss sends a fill");
        assert_eq!(block.pending(), 1, "the sync window (and none ahead yet)");
        // the fill's request id came after the read's
        let fill = ReqId(first.0 + 1);
        let (job, _, waiters) = pc.fill_done(fill, 1000, 4096).expect("a fill");
        assert_eq!((job, waiters), (0, vec![first]));
        let second = core.new_id();
        pc.read(&mut core, &mut block, 0, region, second, 8, 8, None);
        assert!(events(&mut core).contains(&Ev::Hit(second.0)), "the next page was in the window");
    }

    #[test]
    fn a_writer_over_dirty_bytes_waits_for_writeback_to_make_room() {
        let (disk, curve) = disk_and_curve();
        let mut input = input(&disk, &curve, None);
        input.host.writeback.dirty_bytes = 16 << 10;
        input.host.writeback.dirty_background_bytes = 16 << 10;
        let mut block = noop(&input);
        let mut core = Core::new();
        let mut pc = PageCache::new(&input.host);
        pc.add_job(false, None);
        // three 4 KiB writes fit; the fourth reaches the background limit and is written back
        let ids: Vec<ReqId> = (0..6).map(|_| core.new_id()).collect();
        for (i, id) in ids.iter().take(3).enumerate() {
            assert!(!pc.write(&mut core, &mut block, 0, *id, i as u64 * 8, 8));
        }
        assert_eq!(pc.dirty_bytes(), 12 << 10);
        assert!(pc.write(&mut core, &mut block, 0, ids[3], 24, 8), "at dirty_background_bytes: writeback");
        assert!(pc.writing_back(0) && !pc.has_dirty(0));
        // with 16 KiB in writeback, the next write must wait
        assert!(!pc.write(&mut core, &mut block, 0, ids[4], 32, 8));
        let evs = events(&mut core);
        assert!(evs.contains(&Ev::Flush), "the flusher is armed");
        assert!(evs.contains(&Ev::Hit(ids[3].0)) && !evs.contains(&Ev::Hit(ids[4].0)), "{evs:?}");
        // the writeback's request (the next id) completes: the held write goes in
        let wb = ReqId(ids[5].0 + 1);
        assert_eq!(pc.writeback_done(&mut core, &mut block, wb, 2000, 16384), Some((0, 2000)));
        assert!(events(&mut core).contains(&Ev::Hit(ids[4].0)));
        assert_eq!(pc.dirty_bytes(), 4 << 10);
        assert_eq!(pc.writeback_done(&mut core, &mut block, wb, 2000, 16384), None, "once");
    }
}
