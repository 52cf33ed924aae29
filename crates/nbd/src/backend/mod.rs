//! Backends: where scheduled requests finally go.
//!
//! `file`: a regular file (or block device) through the page cache, positional
//! `pread`/`pwrite` from the worker threads. Durability: [`FileBackend::sync`] is
//! `fdatasync`, which covers every write any thread made to the file before it — that is
//! what lets FLUSH bypass the scheduler (see `server`).
//!
//! `direct`: the same file or block device opened with O_DIRECT as well, so reads and
//! writes bypass the page cache. NBD requests have any byte offset and length (the server
//! advertises a minimum block size of 1), so they are aligned through bounce buffers, with
//! read-modify-write for partial blocks under a striped lock table (the private `Direct` has the
//! details, including the partial last block of a file, which stays buffered). Durability
//! is the same `fdatasync`: O_DIRECT data may still sit in the drive's write cache, and
//! writes into holes need their allocation committed. A file system that refuses O_DIRECT
//! is an error at start saying so.
//!
//! `emulated:MODEL`: the data still lives in a file (the same [`FileBackend`], same
//! durability), but *when* a request completes is decided by a drive model of
//! `headway-disk` ([`Emulated`]): fio against the server sees the modelled disk's seek
//! penalties and read-ahead in wall-clock time, on any machine. The real I/O happens at
//! once; a [`DelayLine`] holds each reply until the model's time for it (the private
//! modules `emulated` and `delay_line` have the details).

use std::alloc::{self, Layout};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

mod delay_line;
mod emulated;

pub use delay_line::{DelayLine, Lateness, SPIN_MARGIN};
pub use emulated::{Emulated, ModelError};

/// Which backend the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendKind {
    File,
    Direct,
    Emulated(String),
}

impl std::str::FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "file" => Ok(BackendKind::File),
            "direct" => Ok(BackendKind::Direct),
            _ => match s.strip_prefix("emulated:") {
                Some(m) if !m.is_empty() => Ok(BackendKind::Emulated(m.to_string())),
                _ => Err(format!("unknown backend `{s}` (known: file, direct, emulated:MODEL)")),
            },
        }
    }
}

/// Largest zero buffer written per call by WRITE_ZEROES when fallocate cannot zero.
const ZERO_CHUNK: usize = 1 << 20;

/// Alignment of `direct` I/O to a regular file when the file system does not say (statx
/// `STATX_DIOALIGN`) or says less: 4 KiB, and never less than a page (see `Direct`).
pub const DIRECT_FILE_ALIGN: usize = 4096;

/// A file export: buffered (`file`, `emulated:MODEL`) or O_DIRECT (`direct`).
#[derive(Debug)]
pub struct FileBackend {
    /// Opened without O_DIRECT. `file`: all the I/O. `direct`: the partial last block of
    /// a regular file, `fallocate` and `fdatasync` (which act on the inode, whichever
    /// descriptor names it).
    file: File,
    size: u64,
    /// `direct`: the O_DIRECT descriptor and what aligning requests to it takes.
    direct: Option<Direct>,
}

impl FileBackend {
    /// Open `path` for the backend `kind`: [`FileBackend::open_direct`] for `direct`,
    /// [`FileBackend::open`] for the others.
    pub fn open_as(
        kind: &BackendKind,
        path: &Path,
        size: Option<u64>,
        read_only: bool,
    ) -> io::Result<FileBackend> {
        match kind {
            BackendKind::Direct => FileBackend::open_direct(path, size, read_only),
            BackendKind::File | BackendKind::Emulated(_) => FileBackend::open(path, size, read_only),
        }
    }

    /// Open `path` (created when `size` is given and it does not exist). With `size`, a
    /// shorter file is extended to it and a longer one is exported only up to it; without,
    /// the export is the whole file.
    pub fn open(path: &Path, size: Option<u64>, read_only: bool) -> io::Result<FileBackend> {
        let file = OpenOptions::new()
            .read(true)
            .write(!read_only)
            .create(!read_only && size.is_some())
            .truncate(false)
            .open(path)?;
        let meta = file.metadata()?;
        let block_device = meta.file_type().is_block_device();
        let mut len = meta.len();
        if block_device {
            len = block_device_size(&file)?;
        } else if len == 0 {
            // Other special files may report 0: ask for their size by seeking to the end.
            len = seek_end(&file)?;
        }
        let size = match size {
            Some(s) if s > len => {
                if read_only || block_device {
                    let what = if block_device { "block device" } else { "file" };
                    let why = if block_device { "" } else { " and the export is read-only" };
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("--size {s} exceeds the {what} ({len} bytes){why}"),
                    ));
                }
                file.set_len(s)?;
                s
            }
            Some(s) => s,
            None => len,
        };
        Ok(FileBackend { file, size, direct: None })
    }

    /// Open `path` as [`FileBackend::open`] does (creating or extending it for `size`),
    /// then again with O_DIRECT: reads and writes bypass the page cache, with requests of
    /// any offset and length aligned through bounce buffers (see `Direct`). A file system
    /// without O_DIRECT is an error saying so (and a file this call created is removed).
    pub fn open_direct(path: &Path, size: Option<u64>, read_only: bool) -> io::Result<FileBackend> {
        let existed = std::fs::symlink_metadata(path).is_ok();
        let mut b = FileBackend::open(path, size, read_only)?;
        match Direct::open(path, &b.file, read_only) {
            Ok(d) => {
                b.direct = Some(d);
                Ok(b)
            }
            Err(e) => {
                if !existed {
                    drop(b);
                    let _ = std::fs::remove_file(path);
                }
                Err(e)
            }
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// `direct`: the alignment requests are bounced to (the device's logical block size,
    /// or at least [`DIRECT_FILE_ALIGN`] for a regular file). `None` for buffered exports.
    pub fn direct_alignment(&self) -> Option<usize> {
        self.direct.as_ref().map(|d| d.align)
    }

    pub fn read(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        match &self.direct {
            None => self.file.read_exact_at(buf, offset),
            Some(d) => d.read(&self.file, offset, buf),
        }
    }

    pub fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        match &self.direct {
            None => self.file.write_all_at(data, offset),
            Some(d) => d.write(&self.file, offset, data),
        }
    }

    /// Write zeros: with `may_punch` a hole (`fallocate(PUNCH_HOLE)`), else — or where the
    /// file system cannot punch — `fallocate(ZERO_RANGE)`, else zero buffers. `direct`:
    /// when the whole range cannot be fallocated (a block device takes only aligned
    /// ranges), its aligned interior is tried and the edges written.
    pub fn write_zeroes(&self, offset: u64, len: u64, may_punch: bool) -> io::Result<()> {
        // a hole reads as zeros and takes no space (it cannot fail for want of it);
        // NBD_CMD_FLAG_NO_HOLE (`may_punch` false) asks for the zeros to be allocated
        let modes: &[libc::c_int] = if may_punch {
            &[libc::FALLOC_FL_PUNCH_HOLE, libc::FALLOC_FL_ZERO_RANGE]
        } else {
            &[libc::FALLOC_FL_ZERO_RANGE]
        };
        let zero = |o: u64, l: u64| modes.iter().any(|&m| self.fallocate(m, o, l));
        let Some(d) = &self.direct else {
            if zero(offset, len) {
                return Ok(());
            }
            return self.write_zero_bytes(offset, len);
        };
        if len == 0 {
            return Ok(());
        }
        let end = offset + len;
        if d.with_range_shared(offset, end, || zero(offset, len)) {
            return Ok(());
        }
        let a = d.align as u64;
        let (i0, i1) = (offset.div_ceil(a) * a, end / a * a);
        if i0 < i1 && d.with_range_shared(i0, i1, || zero(i0, i1 - i0)) {
            self.write_zero_bytes(offset, i0 - offset)?;
            return self.write_zero_bytes(i1, end - i1);
        }
        self.write_zero_bytes(offset, len)
    }

    /// TRIM is advisory: punch a hole when the filesystem can, ignore it otherwise.
    pub fn trim(&self, offset: u64, len: u64) -> io::Result<()> {
        match &self.direct {
            None => {
                self.fallocate(libc::FALLOC_FL_PUNCH_HOLE, offset, len);
            }
            Some(d) if len > 0 => {
                d.with_range_shared(offset, offset + len, || {
                    self.fallocate(libc::FALLOC_FL_PUNCH_HOLE, offset, len)
                });
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// `fdatasync`: every write completed before the call is durable after it. `direct`
    /// too: O_DIRECT writes skip the page cache but may sit in the drive's write cache,
    /// and writes into holes need their allocation committed; `fdatasync` on the inode
    /// (through either descriptor) does both, and covers the buffered last block.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// `fallocate(mode | KEEP_SIZE)` on the inode; whether it worked.
    fn fallocate(&self, mode: libc::c_int, offset: u64, len: u64) -> bool {
        // SAFETY: fallocate on an owned descriptor with in-range arguments.
        let r = unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                mode | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            )
        };
        r == 0
    }

    /// Write `len` zero bytes at `offset` with [`FileBackend::write`], in chunks of at most
    /// [`ZERO_CHUNK`] that (after the first) start on the `direct` alignment.
    fn write_zero_bytes(&self, offset: u64, len: u64) -> io::Result<()> {
        if len == 0 {
            return Ok(());
        }
        let align = self.direct.as_ref().map_or(1, |d| d.align);
        let zeros = AlignedBuf::zeroed(ZERO_CHUNK.min(len as usize), align);
        let mut done = 0u64;
        while done < len {
            let at = offset + done;
            let mut n = (len - done).min(zeros.len() as u64);
            let off_align = at % align as u64;
            if off_align != 0 {
                n = n.min(align as u64 - off_align);
            }
            self.write(at, &zeros[..n as usize])?;
            done += n;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// direct: O_DIRECT with aligned bounce buffers

/// The O_DIRECT side of a `direct` export.
///
/// * Alignment `align`: a block device's logical block size (`BLKSSZGET`); for a regular
///   file the larger of [`DIRECT_FILE_ALIGN`], the page size and what statx's
///   `STATX_DIOALIGN` asks for (offset and memory). File offsets, lengths and buffer
///   addresses of every O_DIRECT call are multiples of it.
/// * A read or write that is aligned and whose buffer is aligned goes straight to the
///   descriptor. Otherwise a read reads the covering aligned range into a bounce buffer
///   ([`AlignedBuf`]) and copies out; a write reads the partially covered first and last
///   blocks into the bounce buffer (read-modify-write), copies the data in, and writes the
///   whole covering range.
/// * Concurrent writes from the worker threads: a read-modify-write must not interleave
///   with another write to the same block, or one of them is lost (both read the old
///   block, the later write-back undoes the earlier one; an aligned write of the block
///   between the read and the write-back is undone the same way). [`Stripes`] is a
///   table of 64 read-write locks keyed by block number: a write holds the stripes of its
///   blocks shared and those of its partially covered (read-modify-written) blocks
///   exclusive, acquired in stripe order (so no deadlock); WRITE_ZEROES and TRIM hold
///   theirs shared. Aligned writes thus run in parallel with each other, and a
///   read-modify-write waits only for writes that share a stripe with its edge blocks.
///   Reads take no lock: a read overlapping a concurrent write may see either content, as
///   with the buffered backend (the NBD spec leaves it unspecified), and a
///   read-modify-write rewrites the bytes it does not change with their current value.
/// * The end of a regular file whose length is not a multiple of `align`: an O_DIRECT
///   write of the last, partial block would extend the file to the next multiple. That
///   block (from `buffered_from`, the length rounded down) is read and written through
///   the buffered descriptor instead, so the file keeps its length and reads at its end
///   behave as with the `file` backend. (`align` is at least a page, so that block shares
///   no page-cache page with O_DIRECT I/O.) A block device's size is a multiple of its
///   logical block size: nothing of it is buffered.
/// * An O_DIRECT read that comes back short (the file was truncated under the export) is
///   an `UnexpectedEof` error, as the buffered `read_exact_at` gives.
#[derive(Debug)]
struct Direct {
    file: File,
    align: usize,
    buffered_from: u64,
    locks: Stripes,
}

impl Direct {
    /// `path` again with O_DIRECT; `buffered` is the export's buffered descriptor.
    fn open(path: &Path, buffered: &File, read_only: bool) -> io::Result<Direct> {
        let file =
            OpenOptions::new().read(true).write(!read_only).custom_flags(libc::O_DIRECT).open(path).map_err(
                |e| match e.raw_os_error() {
                    Some(libc::EINVAL) => no_direct("opening with O_DIRECT fails with EINVAL"),
                    _ => e,
                },
            )?;
        let (m, bm) = (file.metadata()?, buffered.metadata()?);
        if (m.dev(), m.ino()) != (bm.dev(), bm.ino()) {
            return Err(io::Error::other("the export was replaced while it was being opened"));
        }
        let (align, len) = if m.file_type().is_block_device() {
            (logical_block_size(&file)?, block_device_size(&file)?)
        } else {
            (file_alignment(&file)?, m.len())
        };
        // Some file systems take the O_DIRECT open and refuse the I/O.
        let mut probe = AlignedBuf::zeroed(align, align);
        if let Err(e) = file.read_at(&mut probe, 0) {
            return Err(match e.raw_os_error() {
                Some(libc::EINVAL) => no_direct("an O_DIRECT read fails with EINVAL"),
                _ => e,
            });
        }
        Ok(Direct { file, align, buffered_from: len - len % align as u64, locks: Stripes::new() })
    }

    fn aligned(&self, x: u64) -> bool {
        x.is_multiple_of(self.align as u64)
    }

    /// The aligned range covering `[offset, end)`.
    fn cover(&self, offset: u64, end: u64) -> (u64, u64) {
        let a = self.align as u64;
        (offset / a * a, end.div_ceil(a) * a)
    }

    fn read(&self, buffered: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = offset + buf.len() as u64;
        let split = self.buffered_from.clamp(offset, end);
        let (d, b) = buf.split_at_mut((split - offset) as usize);
        if !d.is_empty() {
            self.read_direct(offset, d)?;
        }
        if !b.is_empty() {
            buffered.read_exact_at(b, split)?;
        }
        Ok(())
    }

    fn write(&self, buffered: &File, offset: u64, data: &[u8]) -> io::Result<()> {
        let end = offset + data.len() as u64;
        let split = self.buffered_from.clamp(offset, end);
        let (d, b) = data.split_at((split - offset) as usize);
        if !d.is_empty() {
            self.write_direct(offset, d)?;
        }
        if !b.is_empty() {
            buffered.write_all_at(b, split)?;
        }
        Ok(())
    }

    /// A non-empty read below `buffered_from`.
    fn read_direct(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = offset + buf.len() as u64;
        if self.aligned(offset) && self.aligned(end) && self.aligned(buf.as_ptr() as u64) {
            return self.pread_exact(buf, offset);
        }
        let (a0, a1) = self.cover(offset, end);
        let mut bounce = AlignedBuf::zeroed((a1 - a0) as usize, self.align);
        let got = self.pread(&mut bounce, a0)?;
        if (got as u64) < end - a0 {
            return Err(short_read());
        }
        let from = (offset - a0) as usize;
        buf.copy_from_slice(&bounce[from..from + buf.len()]);
        Ok(())
    }

    /// A non-empty write below `buffered_from`.
    fn write_direct(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let end = offset + data.len() as u64;
        let (a0, a1) = self.cover(offset, end);
        let a = self.align as u64;
        let (first, last) = (a0 / a, a1 / a - 1);
        // Partially covered first and last blocks: read-modify-written.
        let (head, tail) = (offset != a0, end != a1);
        let rmw = [head.then_some(first), tail.then_some(last)];
        let _held = self.locks.lock(first, last, &rmw);
        if !head && !tail && self.aligned(data.as_ptr() as u64) {
            return self.pwrite_all(data, offset);
        }
        let mut bounce = AlignedBuf::zeroed((a1 - a0) as usize, self.align);
        let n = bounce.len();
        if head {
            self.pread_exact(&mut bounce[..self.align], a0)?;
        }
        if tail && !(head && first == last) {
            self.pread_exact(&mut bounce[n - self.align..], a1 - a)?;
        }
        let from = (offset - a0) as usize;
        bounce[from..from + data.len()].copy_from_slice(data);
        self.pwrite_all(&bounce, a0)
    }

    /// Run `f` holding the stripes of the blocks of `[offset, end)` (non-empty) shared.
    fn with_range_shared<R>(&self, offset: u64, end: u64, f: impl FnOnce() -> R) -> R {
        let (a0, a1) = self.cover(offset, end);
        let a = self.align as u64;
        let _held = self.locks.lock(a0 / a, a1 / a - 1, &[None, None]);
        f()
    }

    /// O_DIRECT `pread` of an aligned buffer at an aligned offset until it is full or the
    /// file ends; the bytes read.
    fn pread(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => {
                    done += n;
                    if done % self.align != 0 {
                        break; // the end of the file, mid-block
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    fn pread_exact(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        if self.pread(buf, offset)? < buf.len() {
            return Err(short_read());
        }
        Ok(())
    }

    /// O_DIRECT `pwrite` of all of an aligned buffer at an aligned offset.
    fn pwrite_all(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.write_at(&buf[done..], offset + done as u64) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    done += n;
                    if done % self.align != 0 && done < buf.len() {
                        return Err(io::Error::other("O_DIRECT write stopped mid-block"));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

fn short_read() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "failed to fill whole buffer")
}

/// The error `open_direct` gives when the file system has no O_DIRECT.
fn no_direct(how: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("O_DIRECT is not supported on this file system ({how}); use --backend file"),
    )
}

/// Number of lock stripes of a `direct` export.
const STRIPES: usize = 64;

/// Read-write locks keyed by block number modulo [`STRIPES`] (see [`Direct`]).
#[derive(Debug)]
struct Stripes(Box<[RwLock<()>]>);

/// Stripes held by one request; released on drop.
struct StripeGuards<'a> {
    _shared: Vec<RwLockReadGuard<'a, ()>>,
    _exclusive: Vec<RwLockWriteGuard<'a, ()>>,
}

impl Stripes {
    fn new() -> Stripes {
        Stripes((0..STRIPES).map(|_| RwLock::new(())).collect())
    }

    /// Lock the stripes of blocks `first..=last`: exclusive for the blocks in `exclusive`,
    /// shared for the others; in stripe order.
    fn lock(&self, first: u64, last: u64, exclusive: &[Option<u64>]) -> StripeGuards<'_> {
        let bit = |b: u64| 1u64 << (b % STRIPES as u64);
        let all = if last - first >= STRIPES as u64 - 1 {
            u64::MAX
        } else {
            (first..=last).fold(0, |m, b| m | bit(b))
        };
        let excl = exclusive.iter().flatten().fold(0, |m, &b| m | bit(b));
        let mut g = StripeGuards { _shared: Vec::new(), _exclusive: Vec::new() };
        for (i, l) in self.0.iter().enumerate() {
            if excl >> i & 1 != 0 {
                g._exclusive.push(l.write().unwrap_or_else(|e| e.into_inner()));
            } else if all >> i & 1 != 0 {
                g._shared.push(l.read().unwrap_or_else(|e| e.into_inner()));
            }
        }
        g
    }
}

/// A zeroed heap buffer with a given alignment (a power of two), freed on drop.
struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    layout: Layout,
}

impl AlignedBuf {
    fn zeroed(len: usize, align: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(1), align).expect("alignment is a power of two");
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len, layout }
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialised (zeroed) bytes owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, freed once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// `direct` alignment for a regular file (see [`Direct`]).
fn file_alignment(f: &File) -> io::Result<usize> {
    // SAFETY: sysconf has no memory effects.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as usize;
    let mut align = DIRECT_FILE_ALIGN.max(page);
    // SAFETY: all-zero bytes are a valid `statx`.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: statx of the descriptor itself (empty path, AT_EMPTY_PATH) into `st`.
    let r = unsafe {
        libc::statx(f.as_raw_fd(), c"".as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_DIOALIGN, &mut st)
    };
    if r == 0 && st.stx_mask & libc::STATX_DIOALIGN != 0 {
        if st.stx_dio_offset_align == 0 {
            return Err(no_direct("statx reports no direct I/O for the file"));
        }
        align = align.max(st.stx_dio_offset_align as usize).max(st.stx_dio_mem_align as usize);
    }
    if !align.is_power_of_two() {
        return Err(io::Error::other(format!("direct I/O alignment {align} is not a power of two")));
    }
    Ok(align)
}

/// A block device's logical block size (`BLKSSZGET`).
fn logical_block_size(f: &File) -> io::Result<usize> {
    let mut n: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer.
    if unsafe { libc::ioctl(f.as_raw_fd(), libc::BLKSSZGET, &mut n) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n.max(0) as usize;
    if !n.is_power_of_two() {
        return Err(io::Error::other(format!("logical block size {n} is not a power of two")));
    }
    Ok(n)
}

/// `BLKGETSIZE64` = `_IOR(0x12, 114, size_t)` in the ioctl encoding most architectures
/// share (the others ask `lseek`).
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "loongarch64",
    target_arch = "s390x"
))]
const BLKGETSIZE64: Option<libc::Ioctl> =
    Some((2usize << 30 | std::mem::size_of::<usize>() << 16 | 0x12 << 8 | 114) as libc::Ioctl);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "loongarch64",
    target_arch = "s390x"
)))]
const BLKGETSIZE64: Option<libc::Ioctl> = None;

/// A block device's size in bytes.
fn block_device_size(f: &File) -> io::Result<u64> {
    if let Some(req) = BLKGETSIZE64 {
        let mut n: u64 = 0;
        // SAFETY: BLKGETSIZE64 writes one u64 through the pointer.
        if unsafe { libc::ioctl(f.as_raw_fd(), req, &mut n) } == 0 {
            return Ok(n);
        }
    }
    seek_end(f)
}

fn seek_end(f: &File) -> io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = f.try_clone()?;
    f.seek(SeekFrom::End(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_names_parse() {
        assert_eq!("file".parse::<BackendKind>(), Ok(BackendKind::File));
        assert_eq!(
            "emulated:wd5000aaks".parse::<BackendKind>(),
            Ok(BackendKind::Emulated("wd5000aaks".into()))
        );
        assert!("emulated:".parse::<BackendKind>().is_err());
        assert!("tape".parse::<BackendKind>().is_err());
    }

    /// WRITE_ZEROES punches a hole (no space needed) unless NO_HOLE asks for allocated zeros.
    #[test]
    fn write_zeroes_punches_unless_no_hole() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("disk.img");
        let b = FileBackend::open(&p, Some(4 << 20), false).unwrap();
        let blocks = || std::fs::metadata(&p).unwrap().blocks() * 512;
        b.write(0, &vec![9u8; 4 << 20]).unwrap();
        b.sync().unwrap();
        let full = blocks();
        assert!(full >= 4 << 20, "{full}");
        // punched: zeros, and the space given back
        b.write_zeroes(1 << 20, 2 << 20, true).unwrap();
        let mut buf = vec![1u8; 2 << 20];
        b.read(1 << 20, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 0));
        let punched = blocks();
        assert!(punched <= full - (2 << 20), "{punched} of {full}: no hole");
        // NO_HOLE: zeros, allocated
        b.write_zeroes(1 << 20, 2 << 20, false).unwrap();
        b.read(1 << 20, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 0));
        assert!(blocks() >= full, "{} of {full}: NO_HOLE left a hole", blocks());
    }

    #[test]
    fn file_is_created_extended_and_zeroed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("disk.img");
        let b = FileBackend::open(&p, Some(1 << 20), false).unwrap();
        assert_eq!(b.size(), 1 << 20);
        b.write(4096, &[7u8; 8192]).unwrap();
        b.write_zeroes(5000, 100, true).unwrap();
        let mut buf = vec![0u8; 8192];
        b.read(4096, &mut buf).unwrap();
        assert!(buf[..904].iter().all(|&x| x == 7));
        assert!(buf[904..1004].iter().all(|&x| x == 0));
        assert!(buf[1004..].iter().all(|&x| x == 7));
        b.sync().unwrap();
        drop(b);
        assert_eq!(FileBackend::open(&p, None, true).unwrap().size(), 1 << 20);
    }

    // --- direct

    /// A temporary directory on a file system that does O_DIRECT: the system's temporary
    /// directory, else one in this crate's source tree (for a tmpfs `/tmp` that refuses
    /// O_DIRECT). Where a file system refuses, the error must say why; `None` (with a
    /// SKIPPED note) only if neither place does O_DIRECT.
    fn direct_dir() -> Option<tempfile::TempDir> {
        for base in [std::env::temp_dir(), env!("CARGO_MANIFEST_DIR").into()] {
            let d = tempfile::tempdir_in(base).unwrap();
            match FileBackend::open_direct(&d.path().join("probe.img"), Some(4096), false) {
                Ok(b) => {
                    assert!(b.direct_alignment().is_some());
                    return Some(d);
                }
                Err(e) => {
                    let m = e.to_string();
                    assert!(m.contains("O_DIRECT is not supported on this file system"), "{m}");
                    assert!(!d.path().join("probe.img").exists(), "a refused export is not left behind");
                }
            }
        }
        eprintln!("SKIPPED: no O_DIRECT file system for the direct backend's tests");
        None
    }

    fn pattern(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    /// 3 blocks of 4 KiB and 1234 bytes: the last block is partial.
    const ODD_LEN: usize = 3 * 4096 + 1234;

    #[test]
    fn direct_refusal_reads_well() {
        let e = crate::server::ServeError::Export {
            path: "/mnt/ram/disk.img".into(),
            source: no_direct("opening with O_DIRECT fails with EINVAL"),
        };
        let source = std::error::Error::source(&e).unwrap().to_string();
        assert_eq!(e.to_string(), "cannot open export /mnt/ram/disk.img");
        assert_eq!(
            source,
            "O_DIRECT is not supported on this file system (opening with O_DIRECT fails with EINVAL); \
             use --backend file"
        );
    }

    #[test]
    fn direct_alignment_and_aligned_buffers() {
        let Some(dir) = direct_dir() else { return };
        let p = dir.path().join("disk.img");
        let b = FileBackend::open_as(&BackendKind::Direct, &p, Some(1 << 20), false).unwrap();
        let a = b.direct_alignment().unwrap();
        assert!(a >= DIRECT_FILE_ALIGN && a.is_power_of_two(), "{a}");
        assert_eq!(
            FileBackend::open_as(&BackendKind::File, &p, None, true).unwrap().direct_alignment(),
            None
        );
        for len in [1, 4095, 4096, 1 << 20] {
            let buf = AlignedBuf::zeroed(len, a);
            assert_eq!(buf.as_ptr() as usize % a, 0);
            assert!(buf.len() == len && buf.iter().all(|&x| x == 0));
        }
        // Aligned offset, length and buffer: straight through, both ways.
        let mut w = AlignedBuf::zeroed(2 * a, a);
        w.copy_from_slice(&pattern(2 * a, 1));
        b.write(a as u64, &w).unwrap();
        let mut r = AlignedBuf::zeroed(2 * a, a);
        b.read(a as u64, &mut r).unwrap();
        assert!(r[..] == w[..]);
        // The same bytes through unaligned buffers and offsets.
        let mut v = vec![0u8; 2 * a + 1];
        b.read(a as u64 - 1, &mut v[..]).unwrap();
        assert_eq!(v[0], 0);
        assert!(v[1..] == w[..]);
        b.sync().unwrap();
        assert_eq!(std::fs::read(&p).unwrap()[a..3 * a], w[..]);
    }

    #[test]
    fn direct_reads_at_the_end_of_an_odd_sized_file_match_the_file_backend() {
        let Some(dir) = direct_dir() else { return };
        let p = dir.path().join("odd.img");
        let q = dir.path().join("ref.img");
        let data = pattern(ODD_LEN, 7);
        std::fs::write(&p, &data).unwrap();
        std::fs::write(&q, &data).unwrap();
        let d = FileBackend::open_direct(&p, None, false).unwrap();
        let f = FileBackend::open(&q, None, false).unwrap();
        assert_eq!(d.size(), ODD_LEN as u64);
        let n = ODD_LEN as u64;
        // Reads ending at EOF, from inside the partial block and from before it.
        for (off, len) in [(n - 1234, 1234), (n - 1, 1), (n - 5000, 5000), (0, ODD_LEN), (4095, 8193)] {
            let (mut x, mut y) = (vec![0u8; len], vec![1u8; len]);
            d.read(off, &mut x).unwrap();
            f.read(off, &mut y).unwrap();
            assert!(x == y && x[..] == data[off as usize..off as usize + len], "read {off}+{len}");
        }
        // Past EOF: the same error from both.
        for (off, len) in [(n - 10, 20), (n, 1), (n - 5000, 6000)] {
            let ed = d.read(off, &mut vec![0u8; len]).unwrap_err();
            let ef = f.read(off, &mut vec![0u8; len]).unwrap_err();
            assert_eq!((ed.kind(), ef.kind()), (io::ErrorKind::UnexpectedEof, io::ErrorKind::UnexpectedEof));
        }
        // Writes into and across the partial last block keep the file's length.
        let mut model = data.clone();
        for (off, len, seed) in [(n - 100, 100, 1), (n - 5000, 4900, 2), (12288, 1, 3), (12287, 2, 4)] {
            let w = pattern(len, seed);
            d.write(off, &w).unwrap();
            model[off as usize..off as usize + len].copy_from_slice(&w);
        }
        d.write_zeroes(n - 3000, 3000, true).unwrap();
        model[ODD_LEN - 3000..].fill(0);
        d.sync().unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), n);
        assert!(std::fs::read(&p).unwrap() == model);
        // Smaller than one block: all of it is the partial block.
        let small = dir.path().join("small.img");
        std::fs::write(&small, pattern(1000, 9)).unwrap();
        let s = FileBackend::open_direct(&small, None, false).unwrap();
        s.write(10, b"hello").unwrap();
        let mut got = vec![0u8; 1000];
        s.read(0, &mut got).unwrap();
        assert_eq!(&got[10..15], b"hello");
        assert_eq!(std::fs::metadata(&small).unwrap().len(), 1000);
        // Created by --size with an odd size.
        let made = dir.path().join("made.img");
        let m = FileBackend::open_direct(&made, Some(10_000), false).unwrap();
        m.write(9_990, &[5u8; 10]).unwrap();
        m.write(4_000, &[6u8; 200]).unwrap();
        let mut got = vec![1u8; 10_000];
        m.read(0, &mut got).unwrap();
        assert!(got[..4000].iter().all(|&x| x == 0) && got[4000..4200].iter().all(|&x| x == 6));
        assert!(got[4200..9990].iter().all(|&x| x == 0) && got[9990..].iter().all(|&x| x == 5));
        assert_eq!(std::fs::metadata(&made).unwrap().len(), 10_000);
    }

    #[test]
    fn direct_concurrent_unaligned_writes_to_shared_blocks_lose_nothing() {
        let Some(dir) = direct_dir() else { return };
        let b = FileBackend::open_direct(&dir.path().join("disk.img"), Some(64 << 10), false).unwrap();
        let a = b.direct_alignment().unwrap() as u64;
        // Disjoint byte ranges sharing blocks 1-3 (two cross a block boundary; one also
        // covers all of block 2 and so is read-modify-written at both ends).
        let ranges: Vec<(u64, usize)> = vec![
            (a + 3, 1),
            (a + 100, 7),
            (2 * a - 2, 5),
            (2 * a + 3, 3),
            (2 * a + 500, 100),
            (3 * a - 8, 16),
            (3 * a + 9, 2),
            (a + 1000, (2 * a - 1000 - a - 2) as usize),
        ];
        std::thread::scope(|s| {
            for (t, &(off, len)) in ranges.iter().enumerate() {
                let b = &b;
                s.spawn(move || {
                    for i in 0..300u64 {
                        let w = pattern(len, (t as u64) << 32 | i);
                        b.write(off, &w).unwrap();
                        let mut r = vec![0u8; len];
                        b.read(off, &mut r).unwrap();
                        assert!(r == w, "thread {t}: write {i} lost");
                    }
                });
            }
        });
        for (t, &(off, len)) in ranges.iter().enumerate() {
            let mut r = vec![0u8; len];
            b.read(off, &mut r).unwrap();
            assert!(r == pattern(len, (t as u64) << 32 | 299), "range {t}");
        }
    }

    #[test]
    fn direct_write_zeroes_and_trim() {
        let Some(dir) = direct_dir() else { return };
        let p = dir.path().join("disk.img");
        let len = 3 * ZERO_CHUNK + 5000;
        let b = FileBackend::open_direct(&p, Some(len as u64), false).unwrap();
        let data = pattern(len, 3);
        b.write(0, &data).unwrap();
        let mut model = data.clone();
        // fallocate, unaligned and aligned.
        for (off, n) in [(5000, 100), (4096, 8192), (100, 20_000)] {
            b.write_zeroes(off, n, true).unwrap();
            model[off as usize..(off + n) as usize].fill(0);
        }
        // The fallback (what a file system without ZERO_RANGE gets), across chunks.
        let (off, n) = (ZERO_CHUNK as u64 - 7, 2 * ZERO_CHUNK as u64 + 11);
        b.write_zero_bytes(off, n).unwrap();
        model[off as usize..(off + n) as usize].fill(0);
        let mut got = vec![0u8; len];
        b.read(0, &mut got).unwrap();
        assert!(got == model);
        // TRIM: the trimmed bytes read as zeros or as before; nothing else changes.
        b.write(0, &data).unwrap();
        for (off, n) in [(4096u64, 4096u64), (10_001, 30_000)] {
            b.trim(off, n).unwrap();
        }
        b.read(0, &mut got).unwrap();
        for (i, (&g, &d)) in got.iter().zip(&data).enumerate() {
            let trimmed = (4096..8192).contains(&i) || (10_001..40_001).contains(&i);
            assert!(g == d || (trimmed && g == 0), "byte {i}");
        }
        b.sync().unwrap();
    }

    #[derive(Clone, Debug)]
    enum DOp {
        Write(u64, usize, u64),
        Read(u64, usize),
        Zero(u64, usize),
    }

    fn dop(size: u64) -> impl proptest::strategy::Strategy<Value = DOp> {
        use proptest::prelude::*;
        // Offsets near block boundaries half the time; lengths small, near a block, or large.
        let off = prop_oneof![
            0..size,
            (0..size / 4096 + 1, -20i64..20)
                .prop_map(|(b, d)| (b * 4096) as i64 + d)
                .prop_map(move |o| o.clamp(0, size as i64 - 1) as u64)
        ];
        let len = prop_oneof![1usize..40, 4090usize..4100, Just(8192usize), 1usize..13_000];
        (0..3u8, off, len, any::<u64>()).prop_map(move |(k, off, len, seed)| {
            let len = len.min((size - off) as usize);
            match k {
                0 => DOp::Write(off, len, seed),
                1 => DOp::Read(off, len),
                _ => DOp::Zero(off, len),
            }
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Random reads, writes and zeroings of any offset and length: the direct backend
        /// reads what an in-memory model and the buffered backend hold, and the file ends
        /// identical to the buffered one, with its odd length.
        #[test]
        fn direct_matches_the_buffered_backend(ops in proptest::collection::vec(dop(ODD_LEN as u64), 1..40)) {
            let Some(dir) = direct_dir() else { return Ok(()) };
            let (p, q) = (dir.path().join("direct.img"), dir.path().join("file.img"));
            let mut model = pattern(ODD_LEN, 11);
            std::fs::write(&p, &model).unwrap();
            std::fs::write(&q, &model).unwrap();
            let d = FileBackend::open_direct(&p, None, false).unwrap();
            let f = FileBackend::open(&q, None, false).unwrap();
            for op in &ops {
                match *op {
                    DOp::Write(off, len, seed) => {
                        let w = pattern(len, seed);
                        d.write(off, &w).unwrap();
                        f.write(off, &w).unwrap();
                        model[off as usize..off as usize + len].copy_from_slice(&w);
                    }
                    DOp::Read(off, len) => {
                        let (mut x, mut y) = (vec![0u8; len], vec![0u8; len]);
                        d.read(off, &mut x).unwrap();
                        f.read(off, &mut y).unwrap();
                        proptest::prop_assert!(x == y, "{:?}: direct and file differ", op);
                        proptest::prop_assert!(x[..] == model[off as usize..off as usize + len], "{:?}", op);
                    }
                    DOp::Zero(off, len) => {
                        d.write_zeroes(off, len as u64, true).unwrap();
                        f.write_zeroes(off, len as u64, true).unwrap();
                        model[off as usize..off as usize + len].fill(0);
                    }
                }
            }
            d.sync().unwrap();
            f.sync().unwrap();
            let (x, y) = (std::fs::read(&p).unwrap(), std::fs::read(&q).unwrap());
            proptest::prop_assert_eq!(x.len(), ODD_LEN);
            proptest::prop_assert!(x == y && x == model);
        }
    }

    /// A real block device: `HEADWAY_TEST_SCRATCH_DEVICE` names one whose contents may be
    /// destroyed (e.g. a loop device: `losetup -f --show scratch.img`). Ignored by cargo's
    /// default run; `make test` runs it on a loop device wherever it can make one
    /// (`make scratch-device-test`), and with `--ignored` it fails without a device.
    #[test]
    #[ignore = "needs a scratch block device in HEADWAY_TEST_SCRATCH_DEVICE"]
    fn direct_block_device_round_trip() {
        let dev = std::env::var("HEADWAY_TEST_SCRATCH_DEVICE")
            .expect("set HEADWAY_TEST_SCRATCH_DEVICE to a scratch block device");
        let b = FileBackend::open_direct(Path::new(&dev), None, false).unwrap();
        let a = b.direct_alignment().unwrap();
        assert!(a >= 512 && b.size().is_multiple_of(a as u64) && b.size() >= 1 << 20, "{a} {}", b.size());
        assert!(FileBackend::open_direct(Path::new(&dev), Some(b.size() + 1), false).is_err());
        let data = pattern(3 * a + 77, 5);
        b.write(a as u64 / 2 + 3, &data).unwrap();
        b.write_zeroes(a as u64 + 1, 10, true).unwrap();
        b.write_zeroes(8 * a as u64, 4 * a as u64 + 1, true).unwrap();
        b.trim(16 * a as u64, 4 * a as u64).unwrap();
        b.sync().unwrap();
        let mut got = vec![0u8; data.len()];
        b.read(a as u64 / 2 + 3, &mut got).unwrap();
        let z = a / 2 - 2;
        assert!(
            got[..z] == data[..z]
                && got[z..z + 10].iter().all(|&x| x == 0)
                && got[z + 10..] == data[z + 10..]
        );
        let mut tail = vec![1u8; 1000];
        b.read(b.size() - 1000, &mut tail).unwrap();
        let mut zs = vec![1u8; 4 * a + 1];
        b.read(8 * a as u64, &mut zs).unwrap();
        assert!(zs.iter().all(|&x| x == 0));
    }
}
