//! PostMark as a request generator (`headway_workload=postmark`).
//!
//! PostMark (J. Katcher, "PostMark: A New File System Benchmark", NetApp TR-3022, 1997)
//! models mail, netnews and e-commerce servers: a pool of small files continually created,
//! deleted, read and appended to. The IO-path paper (seeds/002, Section 3, Table 2) runs it
//! in four configurations (SS, SL, LS, LL: small or large files, small or large pools); the
//! Stream Scheduling paper (seeds/000, Section 3.3) runs four instances of version 1.5.1, each
//! with 10,000 files of 0.5-10 KB, their data sets 50 GB apart. headway has no file system, so
//! this module plays PostMark *and* a minimal file system beneath it, and hands the job the
//! block requests that reach the disk. [`Job`](crate::workload::Job) calls [`Postmark::next_io`]
//! instead of its sequential or random walk.
//!
//! # What PostMark does (the published behaviour of postmark.c 1.51)
//!
//! 1. **Creation**: create `files` files, sizes uniform in [`size_min`, `size_max`) bytes
//!    (just `size_min` when the two are equal), each written whole in write-block chunks.
//! 2. **Transactions**: `transactions` times, two halves in this order:
//!    - read or append (skipped when the read bias is -1): read with probability
//!      `read_bias`/10. A *read* reads a random live file whole, in read-block chunks. An
//!      *append* picks a random live file and, if it is below `size_max`, writes
//!      1..=(`size_max` - size) more bytes (uniform) at its end; a file at `size_max` is left
//!      alone.
//!    - create or delete (skipped when the create bias is -1): create with probability
//!      `create_bias`/10 (as in phase 1); a *delete* removes a random live file. PostMark's
//!      file table has 2 x `files` entries: a create with the table full does nothing.
//!
//!    A transaction that starts with no live file ends the phase ("out of files!").
//! 3. **Deletion**: every remaining file is deleted.
//!
//! PostMark reports transactions per second over phase 2 and data rates over all three.
//!
//! # What headway makes of it
//!
//! - **Whole sectors.** Every size PostMark draws (a file, an append) is rounded up to a
//!   multiple of 512 B: the disk moves whole sectors. A file's size is always its
//!   allocation; it stays within [`size_min`, `size_max`] rounded up.
//! - **Layout.** The job's region (`offset`, `size`) is the file system. Space is handed out
//!   first fit, in sectors: the lowest-addressed free extent that holds the whole request, so
//!   the initial pool lies contiguously in creation order from the region's start, and the
//!   holes deleted files leave are reused before untouched space further on. When no single
//!   free extent is large enough, the request takes the lowest-addressed free extents in turn
//!   (the file is fragmented). An append first grows the file's last extent in place if the
//!   sectors right after it are free, then allocates the rest first fit. Freed space is
//!   coalesced with free neighbours. No space at all: the create or append is skipped
//!   (PostMark, too, goes on after a failed write) and counted in [`PostmarkStats::no_space`];
//!   [`Postmark::new`] refuses a region that cannot hold `files` files of the largest size.
//!   Packing keeps the pool as compact as its files: a real file system spreads it wider
//!   (Ext3's block groups; 002 describes its large pools as spanning 25-50 % of the disk),
//!   so seeks between files here are shorter than on the papers' machines.
//! - **Requests.** A file operation transfers its extents in order, in requests of at most
//!   the block size (`block_read` for reads, `block_write` for writes), never across an
//!   extent boundary: a read covers the whole file; a create writes the whole file; an append
//!   writes only the new sectors. The default 512 B is PostMark's own read/write size, i.e.
//!   one request per `read()`/`write()` call, as with PostMark's unbuffered mode on a device
//!   without a page cache. PostMark's buffered default (the papers' setting) lets the kernel
//!   merge calls: use the kernel's request size (e.g. 128 KiB) to model it.
//! - **Synchronous.** The job issues the requests one at a time (a sync `ioengine`), each
//!   after the previous completed, as PostMark does; writes reach the disk at once (no page
//!   cache, no write-back).
//! - **Metadata** (inodes, directories, bitmaps, journal) is not modelled: deletes, and all
//!   of phase 3, issue no I/O. Subdirectories and several locations are not modelled.
//! - **Phases.** Phase 1 is part of the run by default (PostMark times it too, and its writes
//!   lay out the pool); with `create_phase` off the pool is laid out without I/O, as if it had
//!   been created before the run, and the job issues only the transactions' I/O.
//! - **Randomness.** A ChaCha8 stream seeded per job (the simulator's `--seed`, the job's
//!   index and `randseed`), not PostMark's Mersenne Twister seeded with 42: the same
//!   distributions, different draws. Files are picked uniformly among live files, as
//!   PostMark's rejection sampling over its table does.
//!
//! # Tunables ([`PostmarkParams`]; fio options `headway_pm_*`)
//!
//! | field | unit | default (PostMark's) | trade-off |
//! |---|---|---|---|
//! | `files` | files | 500 (`set number`) | pool size: with the file sizes, how far apart the files a transaction touches lie (002: the working set's share of the disk sets the seek cost) |
//! | `size_min`, `size_max` | bytes | 500, 10,000 (`set size`) | file size: small files make random, seek-bound I/O; large ones sequential runs (002: SS/SL vs LS/LL) |
//! | `transactions` | transactions | 500 (`set transactions`) | run length |
//! | `read_bias` | tenths | 5 (`set bias read`) | reads vs appends; -1 disables both |
//! | `create_bias` | tenths | 5 (`set bias create`) | creates vs deletes (pool growth); -1 disables both |
//! | `block_read`, `block_write` | bytes | 512, 512 (`set read`, `set write`) | request size: small blocks mean many short sequential requests per file |
//! | `create_phase` | flag | on | whether phase 1's writes are part of the run |
//!
//! # Invariants
//!
//! The live files' extents and the free extents tile the region exactly (checked by the unit
//! tests after every step). Bytes written = bytes created + bytes appended; bytes read =
//! the sizes of the files read ([`PostmarkStats`]). After [`Postmark::new`] and after every
//! [`Postmark::next_io`] a request is ready unless the workload is over, so
//! [`Postmark::done`] is exact.

use std::collections::{BTreeMap, BTreeSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use headway_sched::{Dir, SECTOR_BYTES};

use crate::workload::Io;

/// PostMark's default pool: 500 files (`set number`).
pub const FILES: u32 = 500;
/// PostMark's default smallest file, bytes (`set size`).
pub const SIZE_MIN: u64 = 500;
/// PostMark's default largest file, bytes (`set size`).
pub const SIZE_MAX: u64 = 10_000;
/// PostMark's default run: 500 transactions (`set transactions`).
pub const TRANSACTIONS: u64 = 500;
/// PostMark's default chance of a read over an append, in tenths (`set bias read`).
pub const READ_BIAS: i8 = 5;
/// PostMark's default chance of a create over a delete, in tenths (`set bias create`).
pub const CREATE_BIAS: i8 = 5;
/// PostMark's default read and write size, bytes (`set read`, `set write`).
pub const BLOCK: u64 = 512;
/// Largest file size and block size headway accepts, bytes (PostMark's are C `int`s; the
/// allocator's size index grows with the largest file, 64 MiB of it for 1 GiB).
pub const SIZE_LIMIT: u64 = 1 << 30;

/// What PostMark is asked to do. Sizes in bytes; biases in tenths, -1 = off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostmarkParams {
    /// Files in the initial pool, >= 1.
    pub files: u32,
    /// Smallest file created, bytes, >= 1.
    pub size_min: u64,
    /// Largest file created, and the size appends grow a file to, bytes, >= `size_min`.
    pub size_max: u64,
    /// Transactions after the creation phase (0: creation only).
    pub transactions: u64,
    /// Chance of a read over an append, 0-10 tenths; -1: neither.
    pub read_bias: i8,
    /// Chance of a create over a delete, 0-10 tenths; -1: neither.
    pub create_bias: i8,
    /// Largest read request, bytes, a positive multiple of 512.
    pub block_read: u64,
    /// Largest write request, bytes, a positive multiple of 512.
    pub block_write: u64,
    /// Issue the creation phase's writes (on) or lay the pool out silently (off).
    pub create_phase: bool,
}

impl Default for PostmarkParams {
    /// PostMark 1.51's defaults.
    fn default() -> Self {
        PostmarkParams {
            files: FILES,
            size_min: SIZE_MIN,
            size_max: SIZE_MAX,
            transactions: TRANSACTIONS,
            read_bias: READ_BIAS,
            create_bias: CREATE_BIAS,
            block_read: BLOCK,
            block_write: BLOCK,
            create_phase: true,
        }
    }
}

impl PostmarkParams {
    /// Refuse what PostMark (or headway's limits) would not run.
    pub fn check(&self) -> Result<(), PostmarkError> {
        if self.files == 0 {
            return Err(PostmarkError::NoFiles);
        }
        if self.size_min == 0 || self.size_min > self.size_max || self.size_max > SIZE_LIMIT {
            return Err(PostmarkError::SizeRange { min: self.size_min, max: self.size_max });
        }
        for (which, value) in [("read", self.read_bias), ("create", self.create_bias)] {
            if !(-1..=10).contains(&value) {
                return Err(PostmarkError::Bias { which, value });
            }
        }
        for bytes in [self.block_read, self.block_write] {
            if bytes == 0 || !bytes.is_multiple_of(SECTOR_BYTES) || bytes > SIZE_LIMIT {
                return Err(PostmarkError::Block { bytes });
            }
        }
        Ok(())
    }
}

/// Why a PostMark workload cannot be built. Configuration errors only: once built, the
/// generator cannot fail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PostmarkError {
    /// A pool of no files.
    #[error("PostMark needs at least one file")]
    NoFiles,
    /// File sizes outside 1 <= min <= max <= 1 GiB.
    #[error("file sizes {min}..{max} bytes: need 1 <= smallest <= largest <= {SIZE_LIMIT}")]
    SizeRange { min: u64, max: u64 },
    /// A bias outside -1..=10.
    #[error("{which} bias {value} is not -1 (off) or 0 to 10 (tenths)")]
    Bias { which: &'static str, value: i8 },
    /// A block size that is not a positive multiple of 512 up to 1 GiB.
    #[error("block size {bytes} bytes is not a positive multiple of 512 up to {SIZE_LIMIT}")]
    Block { bytes: u64 },
    /// The region does not start on a sector.
    #[error("region start {start} is not a multiple of 512 bytes")]
    Misaligned { start: u64 },
    /// The region cannot hold the pool at its largest.
    #[error("a region of {have} bytes cannot hold {files} files of up to {size_max} bytes ({need} bytes)")]
    RegionTooSmall { files: u32, size_max: u64, need: u64, have: u64 },
}

/// What the generator has done so far, in PostMark's terms. Bytes are whole sectors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PostmarkStats {
    /// Transactions started.
    pub transactions: u64,
    /// Files created with I/O (phase 1 when it is on, and phase 2), and their bytes.
    pub created: u64,
    pub created_bytes: u64,
    pub deleted: u64,
    /// Files read whole, and their bytes.
    pub read: u64,
    pub read_bytes: u64,
    /// Appends that wrote, and the bytes they added.
    pub appended: u64,
    pub appended_bytes: u64,
    /// Appends to a file already at the largest size (no I/O, as in PostMark).
    pub appends_at_max: u64,
    /// Creates with PostMark's file table (2 x files) full (no I/O, as in PostMark).
    pub creates_table_full: u64,
    /// Creates and appends skipped because the region was full.
    pub no_space: u64,
    /// Phase 2 ended early: a transaction found no live file.
    pub out_of_files: bool,
}

/// A run of sectors on the disk.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Extent {
    start: u64,
    len: u64,
}

/// A live file: its extents in file order, `sectors` their total.
#[derive(Clone, Debug)]
struct File {
    extents: Vec<Extent>,
    sectors: u64,
}

impl File {
    fn push(&mut self, e: Extent) {
        match self.extents.last_mut() {
            Some(last) if last.start + last.len == e.start => last.len += e.len,
            _ => self.extents.push(e),
        }
        self.sectors += e.len;
    }
}

/// Where the run is. `Transactions::second_half`: the read/append half of the current
/// transaction is done and its create/delete half is next.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    Create { left: u64 },
    Transactions { left: u64, second_half: bool },
    Done,
}

/// The requests of the file operation in progress: `extents` in order, in chunks of at
/// most the block size; `next` is the extent being cut, `done` its sectors already issued.
#[derive(Clone, Debug)]
struct Transfer {
    dir: Dir,
    extents: Vec<Extent>,
    next: usize,
    done: u64,
}

impl Transfer {
    fn is_empty(&self) -> bool {
        self.next >= self.extents.len()
    }

    fn start(&mut self, dir: Dir, extents: &[Extent]) {
        self.dir = dir;
        self.extents.clear();
        self.extents.extend_from_slice(extents);
        self.next = 0;
        self.done = 0;
    }

    fn pop(&mut self, block_sectors: [u64; 2]) -> Option<Io> {
        let e = *self.extents.get(self.next)?;
        let len = (e.len - self.done).min(block_sectors[self.dir.index()]);
        let io = Io { sector: e.start + self.done, len: len as u32, dir: self.dir };
        self.done += len;
        if self.done == e.len {
            self.next += 1;
            self.done = 0;
        }
        Some(io)
    }
}

/// A PostMark run over one region, as a stream of block requests. Deterministic given its
/// parameters, region and seed.
#[derive(Clone, Debug)]
pub struct Postmark {
    params: PostmarkParams,
    rng: ChaCha8Rng,
    free: FreeList,
    /// Live files, in no particular order (deletes swap-remove).
    files: Vec<File>,
    /// Largest request per direction, sectors.
    block_sectors: [u64; 2],
    /// Region, sectors: [start, end).
    region: (u64, u64),
    phase: Phase,
    transfer: Transfer,
    stats: PostmarkStats,
    estimate: u64,
    /// Every file operation, for the tests to replay.
    #[cfg(test)]
    log: Vec<Op>,
}

/// A file operation as the tests see it: its kind and the extents it transferred.
#[cfg(test)]
#[derive(Clone, Debug, PartialEq, Eq)]
enum Op {
    Create(Vec<Extent>),
    /// The file's extents and its size in sectors when read.
    Read(Vec<Extent>, u64),
    /// The new extents and the file's size in sectors after the append.
    Append(Vec<Extent>, u64),
    Delete(u64),
}

fn sectors_of(bytes: u64) -> u64 {
    bytes.div_ceil(SECTOR_BYTES)
}

impl Postmark {
    /// A PostMark run on the region of `region_len` bytes at byte `region_start` (a sector
    /// boundary; a partial last sector is unused). Lays out the pool when the creation phase
    /// is off. Called by `Job::expand` once per job clone.
    pub fn new(
        params: PostmarkParams,
        region_start: u64,
        region_len: u64,
        rng_seed: u64,
    ) -> Result<Self, PostmarkError> {
        params.check()?;
        if !region_start.is_multiple_of(SECTOR_BYTES) {
            return Err(PostmarkError::Misaligned { start: region_start });
        }
        let max_s = sectors_of(params.size_max);
        let (start, len) = (region_start / SECTOR_BYTES, region_len / SECTOR_BYTES);
        let need = params.files as u64 * max_s;
        if len < need {
            return Err(PostmarkError::RegionTooSmall {
                files: params.files,
                size_max: params.size_max,
                need: need * SECTOR_BYTES,
                have: region_len,
            });
        }
        let mut free = FreeList::new(max_s);
        free.release(start, len);
        let mut pm = Postmark {
            block_sectors: [params.block_read / SECTOR_BYTES, params.block_write / SECTOR_BYTES],
            estimate: estimate_bytes(&params),
            rng: ChaCha8Rng::seed_from_u64(rng_seed),
            free,
            files: Vec::with_capacity(params.files as usize),
            region: (start, start + len),
            phase: Phase::Create { left: params.files as u64 },
            transfer: Transfer { dir: Dir::Write, extents: Vec::new(), next: 0, done: 0 },
            stats: PostmarkStats::default(),
            #[cfg(test)]
            log: Vec::new(),
            params,
        };
        if !pm.params.create_phase {
            for _ in 0..pm.params.files {
                let sectors = pm.draw_size();
                let extents = pm.free.alloc(sectors).expect("the region holds the pool at its largest");
                pm.files.push(File { sectors, extents });
            }
            pm.phase = Phase::Create { left: 0 };
        }
        pm.advance();
        Ok(pm)
    }

    /// The next request, `None` once the run is over. The job issues it; the generator
    /// already moves on to the file operation after it when this one is fully issued.
    pub fn next_io(&mut self) -> Option<Io> {
        let io = self.transfer.pop(self.block_sectors)?;
        debug_assert!(io.sector >= self.region.0 && io.sector + io.len as u64 <= self.region.1);
        if self.transfer.is_empty() {
            self.advance();
        }
        Some(io)
    }

    /// Is the run over (no request left)?
    pub fn done(&self) -> bool {
        self.transfer.is_empty()
    }

    pub fn stats(&self) -> &PostmarkStats {
        &self.stats
    }

    pub fn params(&self) -> &PostmarkParams {
        &self.params
    }

    /// Live files now.
    pub fn live_files(&self) -> usize {
        self.files.len()
    }

    /// A rough estimate of the bytes the run moves, for progress reports: it assumes files
    /// keep their created mean size (appends make them larger, so reads move more).
    pub fn estimated_bytes(&self) -> u64 {
        self.estimate
    }

    /// Run file operations until one has requests to issue, or the run is over.
    fn advance(&mut self) {
        while self.transfer.is_empty() {
            match self.phase {
                Phase::Create { left: 0 } => {
                    self.phase = Phase::Transactions { left: self.params.transactions, second_half: false }
                }
                Phase::Create { left } => {
                    self.phase = Phase::Create { left: left - 1 };
                    self.create();
                }
                Phase::Transactions { left: 0, second_half: false } => self.phase = Phase::Done,
                Phase::Transactions { left, second_half: false } => {
                    if self.files.is_empty() {
                        self.stats.out_of_files = true;
                        self.phase = Phase::Done;
                        continue;
                    }
                    self.phase = Phase::Transactions { left: left - 1, second_half: true };
                    self.stats.transactions += 1;
                    if self.params.read_bias >= 0 {
                        if self.rng.gen_range(0..10) < self.params.read_bias {
                            self.read();
                        } else {
                            self.append();
                        }
                    }
                }
                Phase::Transactions { left, second_half: true } => {
                    self.phase = Phase::Transactions { left, second_half: false };
                    if self.params.create_bias >= 0 {
                        if self.rng.gen_range(0..10) < self.params.create_bias {
                            self.create();
                        } else {
                            self.delete();
                        }
                    }
                }
                Phase::Done => return,
            }
        }
    }

    /// A new file's size, sectors: PostMark's uniform draw in [min, max), rounded up.
    fn draw_size(&mut self) -> u64 {
        let (lo, hi) = (self.params.size_min, self.params.size_max);
        sectors_of(lo + if hi > lo { self.rng.gen_range(0..hi - lo) } else { 0 })
    }

    fn pick(&mut self) -> usize {
        self.rng.gen_range(0..self.files.len())
    }

    fn create(&mut self) {
        if self.files.len() >= 2 * self.params.files as usize {
            self.stats.creates_table_full += 1;
            return;
        }
        let sectors = self.draw_size();
        let Some(extents) = self.free.alloc(sectors) else {
            self.stats.no_space += 1;
            return;
        };
        self.transfer.start(Dir::Write, &extents);
        self.stats.created += 1;
        self.stats.created_bytes += sectors * SECTOR_BYTES;
        #[cfg(test)]
        self.log.push(Op::Create(extents.clone()));
        self.files.push(File { sectors, extents });
    }

    fn delete(&mut self) {
        let i = self.pick();
        let f = self.files.swap_remove(i);
        for e in &f.extents {
            self.free.release(e.start, e.len);
        }
        self.stats.deleted += 1;
        #[cfg(test)]
        self.log.push(Op::Delete(f.sectors));
    }

    fn read(&mut self) {
        let i = self.pick();
        let f = &self.files[i];
        self.transfer.start(Dir::Read, &f.extents);
        self.stats.read += 1;
        self.stats.read_bytes += f.sectors * SECTOR_BYTES;
        #[cfg(test)]
        self.log.push(Op::Read(f.extents.clone(), f.sectors));
    }

    fn append(&mut self) {
        let i = self.pick();
        let bytes = self.files[i].sectors * SECTOR_BYTES;
        if bytes >= self.params.size_max {
            self.stats.appends_at_max += 1;
            return;
        }
        let add = sectors_of(1 + self.rng.gen_range(0..self.params.size_max - bytes));
        let last = *self.files[i].extents.last().expect("a live file has an extent");
        let end = last.start + last.len;
        let grown = self.free.take_at(end, add);
        let mut new = Vec::with_capacity(2);
        if grown > 0 {
            new.push(Extent { start: end, len: grown });
        }
        if grown < add {
            match self.free.alloc(add - grown) {
                Some(rest) => new.extend(rest),
                None => {
                    if grown > 0 {
                        self.free.release(end, grown);
                    }
                    self.stats.no_space += 1;
                    return;
                }
            }
        }
        let f = &mut self.files[i];
        for &e in &new {
            f.push(e);
        }
        self.transfer.start(Dir::Write, &new);
        self.stats.appended += 1;
        self.stats.appended_bytes += add * SECTOR_BYTES;
        #[cfg(test)]
        self.log.push(Op::Append(new, self.files[i].sectors));
    }
}

/// Bytes a run moves if files kept their created mean size (see [`Postmark::estimated_bytes`]).
fn estimate_bytes(p: &PostmarkParams) -> u64 {
    let mean = sectors_of((p.size_min + p.size_max) / 2) * SECTOR_BYTES;
    let append = p.size_max.saturating_sub(mean) / 2;
    let tenths = |bias: i8| if bias < 0 { (0, 0) } else { (bias as u64, 10 - bias as u64) };
    let (reads, appends) = tenths(p.read_bias);
    let (creates, _) = tenths(p.create_bias);
    let per_10_transactions = reads * mean + appends * append + creates * mean;
    let phase1 = if p.create_phase { p.files as u64 * mean } else { 0 };
    phase1.saturating_add(p.transactions.saturating_mul(per_10_transactions) / 10)
}

/// Free space of the region as disjoint, coalesced extents, with first-fit allocation in
/// O(log n): free extents are indexed by size class (their length, capped at the largest
/// request `cap`), and a min-tree over the classes gives the lowest start among all free
/// extents of at least a given length.
#[derive(Clone, Debug)]
struct FreeList {
    /// start -> length, sectors.
    by_start: BTreeMap<u64, u64>,
    /// min(length, cap) -> starts of the free extents of that class.
    by_class: BTreeMap<u64, BTreeSet<u64>>,
    /// Leaf c: the lowest start in class c (u64::MAX if none).
    lowest: MinTree,
    /// Largest request, sectors (the largest file).
    cap: u64,
    total: u64,
}

impl FreeList {
    fn new(cap: u64) -> Self {
        FreeList {
            by_start: BTreeMap::new(),
            by_class: BTreeMap::new(),
            lowest: MinTree::new(cap as usize + 1),
            cap,
            total: 0,
        }
    }

    fn insert(&mut self, start: u64, len: u64) {
        debug_assert!(len > 0);
        self.by_start.insert(start, len);
        let class = len.min(self.cap);
        let set = self.by_class.entry(class).or_default();
        set.insert(start);
        let first = *set.first().expect("just inserted");
        self.lowest.set(class as usize, first);
        self.total += len;
    }

    fn remove(&mut self, start: u64) -> u64 {
        let len = self.by_start.remove(&start).expect("a free extent starts here");
        let class = len.min(self.cap);
        let set = self.by_class.get_mut(&class).expect("its class is indexed");
        set.remove(&start);
        let first = set.first().copied().unwrap_or(u64::MAX);
        if set.is_empty() {
            self.by_class.remove(&class);
        }
        self.lowest.set(class as usize, first);
        self.total -= len;
        len
    }

    /// `n` sectors (1 ..= cap), first fit; fragmented over the lowest free extents when no
    /// single one holds them; `None` (nothing taken) when the region has less free.
    fn alloc(&mut self, n: u64) -> Option<Vec<Extent>> {
        debug_assert!((1..=self.cap).contains(&n));
        if n > self.total {
            return None;
        }
        let best = self.lowest.min(n as usize, self.cap as usize);
        if best != u64::MAX {
            return Some(vec![self.take_front(best, n)]);
        }
        let mut out = Vec::new();
        let mut need = n;
        while need > 0 {
            let (&start, &len) = self.by_start.iter().next().expect("total covers need");
            let e = self.take_front(start, len.min(need));
            need -= e.len;
            out.push(e);
        }
        Some(out)
    }

    /// Take `n` sectors from the front of the free extent at `start`.
    fn take_front(&mut self, start: u64, n: u64) -> Extent {
        let len = self.remove(start);
        debug_assert!(len >= n);
        if len > n {
            self.insert(start + n, len - n);
        }
        Extent { start, len: n }
    }

    /// Up to `n` sectors from the free extent starting exactly at `at` (growing a file in
    /// place); how many were taken.
    fn take_at(&mut self, at: u64, n: u64) -> u64 {
        match self.by_start.get(&at) {
            Some(&len) => self.take_front(at, len.min(n)).len,
            None => 0,
        }
    }

    /// Give back `len` sectors at `start`, merged with free neighbours.
    fn release(&mut self, mut start: u64, mut len: u64) {
        if let Some((&ps, &pl)) = self.by_start.range(..start).next_back() {
            debug_assert!(ps + pl <= start, "double free at {start}");
            if ps + pl == start {
                self.remove(ps);
                start = ps;
                len += pl;
            }
        }
        if let Some((&ns, _)) = self.by_start.range(start..).next() {
            debug_assert!(ns >= start + len, "double free at {start}");
            if ns == start + len {
                len += self.remove(ns);
            }
        }
        self.insert(start, len);
    }
}

/// Range-minimum over a fixed number of slots (iterative segment tree).
#[derive(Clone, Debug)]
struct MinTree {
    size: usize,
    t: Vec<u64>,
}

impl MinTree {
    fn new(slots: usize) -> Self {
        let size = slots.next_power_of_two();
        MinTree { size, t: vec![u64::MAX; 2 * size] }
    }

    fn set(&mut self, slot: usize, v: u64) {
        let mut p = slot + self.size;
        self.t[p] = v;
        while p > 1 {
            p /= 2;
            self.t[p] = self.t[2 * p].min(self.t[2 * p + 1]);
        }
    }

    /// Minimum over slots `lo..=hi`.
    fn min(&self, lo: usize, hi: usize) -> u64 {
        let (mut l, mut r) = (lo + self.size, hi + self.size + 1);
        let mut m = u64::MAX;
        while l < r {
            if l & 1 == 1 {
                m = m.min(self.t[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                m = m.min(self.t[r]);
            }
            l /= 2;
            r /= 2;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    fn small() -> PostmarkParams {
        PostmarkParams { files: 200, transactions: 2000, ..PostmarkParams::default() }
    }

    fn drain(pm: &mut Postmark) -> Vec<Io> {
        let mut out = Vec::new();
        while let Some(io) = pm.next_io() {
            out.push(io);
        }
        assert!(pm.done());
        out
    }

    /// Live files and free extents tile the region exactly; sizes within bounds.
    fn check_layout(pm: &Postmark) {
        let mut all: Vec<Extent> = pm.files.iter().flat_map(|f| f.extents.iter().copied()).collect();
        all.extend(pm.free.by_start.iter().map(|(&start, &len)| Extent { start, len }));
        all.sort_by_key(|e| e.start);
        let mut at = pm.region.0;
        for e in &all {
            assert_eq!(e.start, at, "gap or overlap at sector {at}");
            assert!(e.len > 0);
            at += e.len;
        }
        assert_eq!(at, pm.region.1);
        let (lo, hi) = (sectors_of(pm.params.size_min), sectors_of(pm.params.size_max));
        for f in &pm.files {
            assert_eq!(f.sectors, f.extents.iter().map(|e| e.len).sum::<u64>());
            assert!((lo..=hi).contains(&f.sectors), "file of {} sectors outside {lo}..={hi}", f.sectors);
        }
        assert_eq!(pm.free.total, pm.free.by_start.values().sum::<u64>());
        assert_eq!(pm.free.by_class.values().map(|s| s.len()).sum::<usize>(), pm.free.by_start.len());
    }

    #[test]
    fn deterministic_by_seed() {
        let run = |seed| drain(&mut Postmark::new(small(), 0, 64 * MB, seed).unwrap());
        let (a, b, c) = (run(7), run(7), run(8));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn every_request_is_inside_the_region_and_the_layout_tiles_it() {
        let (start, len) = (3 * MB, 8 * MB + 300); // a partial last sector is unused
        let mut pm = Postmark::new(small(), start, len, 1).unwrap();
        let mut n = 0;
        while let Some(io) = pm.next_io() {
            assert!(io.len >= 1 && io.len as u64 <= BLOCK / SECTOR_BYTES);
            assert!(io.sector * 512 >= start && (io.sector + io.len as u64) * 512 <= start + len, "{io:?}");
            n += 1;
            if n % 97 == 0 {
                check_layout(&pm);
            }
        }
        check_layout(&pm);
        assert!(n > 1000);
    }

    /// The request stream is exactly the logged operations' extents, in order, cut into
    /// blocks; reads cover whole files; bytes written = created + appended bytes.
    #[test]
    fn requests_replay_the_operations_and_bytes_are_conserved() {
        let params = PostmarkParams { block_read: 2048, block_write: 1024, ..small() };
        let mut pm = Postmark::new(params, 0, 16 * MB, 3).unwrap();
        let ios = drain(&mut pm);
        let mut expected = Vec::new();
        let cut = |dir: Dir, extents: &[Extent], out: &mut Vec<Io>| {
            let block = if dir == Dir::Read { 4 } else { 2 };
            for e in extents {
                let mut s = e.start;
                while s < e.start + e.len {
                    let len = (e.start + e.len - s).min(block);
                    out.push(Io { sector: s, len: len as u32, dir });
                    s += len;
                }
            }
        };
        let (mut created, mut appended, mut read) = (0, 0, 0);
        for op in &pm.log {
            match op {
                Op::Create(x) => {
                    created += x.iter().map(|e| e.len).sum::<u64>();
                    cut(Dir::Write, x, &mut expected)
                }
                Op::Append(x, _) => {
                    appended += x.iter().map(|e| e.len).sum::<u64>();
                    cut(Dir::Write, x, &mut expected)
                }
                Op::Read(x, size) => {
                    assert_eq!(x.iter().map(|e| e.len).sum::<u64>(), *size, "a read covers the whole file");
                    read += size;
                    cut(Dir::Read, x, &mut expected)
                }
                Op::Delete(_) => {}
            }
        }
        assert_eq!(ios, expected);
        let bytes = |d: Dir| ios.iter().filter(|io| io.dir == d).map(|io| io.len as u64 * 512).sum::<u64>();
        let s = pm.stats();
        assert_eq!(bytes(Dir::Write), s.created_bytes + s.appended_bytes);
        assert_eq!(s.created_bytes + s.appended_bytes, (created + appended) * 512);
        assert_eq!(bytes(Dir::Read), s.read_bytes);
        assert_eq!(s.read_bytes, read * 512);
        assert!(s.appended > 0 && s.read > 0 && s.deleted > 0);
    }

    #[test]
    fn file_sizes_stay_in_range() {
        let params = PostmarkParams { size_min: 9 << 10, size_max: 15 << 10, ..small() };
        let mut pm = Postmark::new(params, 0, 32 * MB, 5).unwrap();
        let mut n = 0u64;
        while pm.next_io().is_some() {
            n += 1;
            if n.is_multiple_of(50) {
                check_layout(&pm);
            }
        }
        for op in &pm.log {
            match op {
                Op::Create(x) => {
                    let s = x.iter().map(|e| e.len).sum::<u64>();
                    assert!((18..=30).contains(&s), "created {s} sectors; [9216, 15360) bytes is 18..=30");
                }
                Op::Append(_, after) => assert!(*after <= 30),
                _ => {}
            }
        }
        // appends stop at the largest size
        assert!(pm.stats().appends_at_max > 0);
    }

    #[test]
    fn biases_split_the_halves() {
        let count = |params: PostmarkParams| {
            let mut pm = Postmark::new(params, 0, 64 * MB, 11).unwrap();
            drain(&mut pm);
            let s = pm.stats().clone();
            (s, pm.live_files() as u64)
        };
        let t = 4000;
        // 5/5: creates and deletes balance (binomial, sd = sqrt(4000/4) ~ 32)
        let (s, live) = count(PostmarkParams { transactions: t, ..small() });
        assert_eq!(s.transactions, t);
        let creates = s.created - 200;
        assert!(creates.abs_diff(s.deleted) < 250, "creates {creates} vs deletes {}", s.deleted);
        assert_eq!(live, 200 + creates - s.deleted);
        let reads_or_appends = s.read + s.appended + s.appends_at_max;
        assert_eq!(reads_or_appends, t);
        assert!(s.read.abs_diff(t / 2) < 160, "reads {} of {t}", s.read);
        // 8/2: 80 % creates, 20 % reads
        let (s, live) = count(PostmarkParams { transactions: t, read_bias: 2, create_bias: 8, ..small() });
        let creates = s.created - 200 + s.creates_table_full;
        assert!(creates.abs_diff(t * 8 / 10) < 130, "creates {creates} of {t}");
        assert!(s.read.abs_diff(t * 2 / 10) < 130, "reads {} of {t}", s.read);
        assert!(
            live >= 390 && s.creates_table_full > 0,
            "the pool grows to PostMark's table (2 x files): {live}"
        );
        // -1: that half never happens
        let (s, _) = count(PostmarkParams { transactions: t, read_bias: -1, ..small() });
        assert_eq!((s.read, s.appended, s.appends_at_max), (0, 0, 0));
        let (s, live) = count(PostmarkParams { transactions: t, create_bias: -1, ..small() });
        assert_eq!((s.created, s.deleted, live), (200, 0, 200));
        // 0/10: only deletes and reads; the pool runs out and the phase stops
        let (s, live) = count(PostmarkParams { transactions: t, read_bias: 10, create_bias: 0, ..small() });
        assert!(s.out_of_files && live == 0 && s.deleted == 200 && s.transactions == 200);
        assert_eq!(s.appended + s.appends_at_max, 0);
    }

    #[test]
    fn initial_pool_is_contiguous_in_creation_order_and_holes_are_reused_first_fit() {
        let params = PostmarkParams { files: 20, transactions: 0, ..PostmarkParams::default() };
        let mut pm = Postmark::new(params, MB, MB, 2).unwrap();
        let ios = drain(&mut pm);
        let mut at = MB / 512;
        for op in &pm.log {
            let Op::Create(x) = op else { panic!("{op:?}") };
            assert_eq!(x.len(), 1);
            assert_eq!(x[0].start, at);
            at += x[0].len;
        }
        assert_eq!(ios.iter().map(|io| io.len as u64).sum::<u64>() + MB / 512, at);
        // free the second file: the next small enough file lands in its hole
        let mut fl = FreeList::new(8);
        fl.release(100, 1000);
        let a = fl.alloc(8).unwrap()[0];
        let b = fl.alloc(5).unwrap()[0];
        let c = fl.alloc(8).unwrap()[0];
        assert_eq!((a.start, b.start, c.start), (100, 108, 113));
        fl.release(b.start, b.len);
        assert_eq!(fl.alloc(8).unwrap()[0].start, 121, "8 sectors do not fit the 5-sector hole");
        assert_eq!(fl.alloc(3).unwrap()[0].start, 108, "3 do: first fit");
        assert_eq!(fl.take_at(111, 4), 2, "grows in place into what is left of the hole");
        fl.release(108, 5);
        fl.release(100, 8);
        assert_eq!(fl.by_start.get(&100), Some(&13), "freed neighbours coalesce");
    }

    #[test]
    fn a_full_region_fragments_then_skips() {
        // 6 sectors free in three 2-sector holes: a 4-sector file takes the lowest two.
        let mut fl = FreeList::new(8);
        for s in [10, 20, 30] {
            fl.release(s, 2);
        }
        assert_eq!(fl.alloc(4).unwrap(), vec![Extent { start: 10, len: 2 }, Extent { start: 20, len: 2 }]);
        assert_eq!(fl.alloc(3), None);
        assert_eq!(fl.total, 2);
        // Run with a region just large enough for the pool at its largest: appends and
        // creates eventually meet a full region and are skipped, the layout stays sound.
        let params =
            PostmarkParams { files: 50, transactions: 3000, read_bias: 0, create_bias: 10, ..small() };
        let mut pm = Postmark::new(params, 0, 50 * 10_240, 9).unwrap();
        drain(&mut pm);
        check_layout(&pm);
        assert!(pm.stats().no_space > 0);
    }

    #[test]
    fn without_the_creation_phase_only_transactions_issue_io() {
        let params = PostmarkParams { create_phase: false, ..small() };
        let mut pm = Postmark::new(params, 0, 16 * MB, 4).unwrap();
        assert_eq!(pm.live_files(), 200);
        check_layout(&pm);
        drain(&mut pm);
        assert_eq!(pm.stats().transactions, 2000);
        let creates = pm.log.iter().filter(|o| matches!(o, Op::Create(_))).count() as u64;
        assert_eq!(pm.stats().created, creates);
        assert!(creates < 1200);
    }

    #[test]
    fn zero_transactions_is_the_creation_phase_alone_and_nothing_at_all_is_done_at_once() {
        let params = PostmarkParams { transactions: 0, ..small() };
        let mut pm = Postmark::new(params.clone(), 0, 16 * MB, 4).unwrap();
        drain(&mut pm);
        assert_eq!((pm.stats().created, pm.stats().transactions), (200, 0));
        let pm = Postmark::new(PostmarkParams { create_phase: false, ..params }, 0, 16 * MB, 4).unwrap();
        assert!(pm.done());
    }

    #[test]
    fn configuration_errors() {
        let new = |p: PostmarkParams, start, len| Postmark::new(p, start, len, 1).unwrap_err();
        let d = PostmarkParams::default;
        assert_eq!(new(PostmarkParams { files: 0, ..d() }, 0, MB), PostmarkError::NoFiles);
        assert!(matches!(
            new(PostmarkParams { size_min: 11_000, ..d() }, 0, MB),
            PostmarkError::SizeRange { .. }
        ));
        assert!(matches!(new(PostmarkParams { size_min: 0, ..d() }, 0, MB), PostmarkError::SizeRange { .. }));
        assert!(matches!(new(PostmarkParams { read_bias: 11, ..d() }, 0, MB), PostmarkError::Bias { .. }));
        assert!(matches!(new(PostmarkParams { create_bias: -2, ..d() }, 0, MB), PostmarkError::Bias { .. }));
        assert!(matches!(
            new(PostmarkParams { block_write: 1000, ..d() }, 0, MB),
            PostmarkError::Block { .. }
        ));
        assert_eq!(new(d(), 100, 16 * MB), PostmarkError::Misaligned { start: 100 });
        let e = new(d(), 0, MB);
        assert!(matches!(e, PostmarkError::RegionTooSmall { need: 5_120_000, .. }), "{e:?}");
        assert!(e.to_string().contains("500 files of up to 10000 bytes"), "{e}");
        // exactly large enough is fine
        Postmark::new(d(), 0, 500 * 10_240, 1).unwrap();
    }

    #[test]
    fn estimate_is_in_the_right_range() {
        let mut pm = Postmark::new(small(), 0, 64 * MB, 1).unwrap();
        let est = pm.estimated_bytes();
        let moved: u64 = drain(&mut pm).iter().map(|io| io.len as u64 * 512).sum();
        assert!(est / 2 < moved && moved < est * 2, "estimate {est}, moved {moved}");
    }

    #[test]
    fn min_tree_finds_the_lowest_start_in_a_class_range() {
        let mut t = MinTree::new(9);
        t.set(3, 50);
        t.set(8, 20);
        t.set(5, 70);
        assert_eq!(t.min(1, 8), 20);
        assert_eq!(t.min(1, 7), 50);
        assert_eq!(t.min(4, 7), 70);
        assert_eq!(t.min(6, 7), u64::MAX);
        t.set(8, u64::MAX);
        assert_eq!(t.min(4, 8), 70);
    }
}
