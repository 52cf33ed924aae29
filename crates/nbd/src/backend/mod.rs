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
//! read-modify-write for partial blocks under a striped lock table (`Direct`, in the
//! private module `direct`, has the details, including the partial last block of a file,
//! which stays buffered). Durability is the same `fdatasync`: O_DIRECT data may still sit
//! in the drive's write cache, and writes into holes need their allocation committed. A
//! file system that refuses O_DIRECT is an error at start saying so.
//!
//! `emulated:MODEL`: the data still lives in a file (the same [`FileBackend`], same
//! durability), but *when* a request completes is decided by a drive model of
//! `headway-disk` ([`Emulated`]): fio against the server sees the modelled disk's seek
//! penalties and read-ahead in wall-clock time, on any machine. The real I/O happens at
//! once; a [`DelayLine`] holds each reply until the model's time for it (the private
//! modules `emulated` and `delay_line` have the details).
//!
//! Here: [`BackendKind`] and [`FileBackend`], which all three backends read and write
//! through. Beside it, private: `direct` (the O_DIRECT side of a `direct` export) with
//! `stripes` (its lock table), `aligned_buf` (its bounce buffers) and `geometry` (sizes and
//! alignments the kernel reports); `durable` (syncs shared and failures remembered);
//! `emulated` (the drive model); `delay_line`.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

mod aligned_buf;
mod delay_line;
mod direct;
mod durable;
mod emulated;
mod geometry;
mod stripes;

use aligned_buf::AlignedBuf;
use direct::Direct;
use geometry::{block_device_attr, block_device_size, seek_end};

pub use delay_line::{DelayLine, Lateness, SPIN_MARGIN};
pub use durable::{Durability, Failure};
pub use emulated::{Emulated, ModelError};
pub use geometry::DIRECT_FILE_ALIGN;

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

/// `HEADWAY_TEST_SKIP_SYNC=1` in the environment: every sync is skipped and reported done.
/// This breaks the durability promise on purpose, for one use only: the control run of
/// the lab's power-cut trials, which must show that trials without the sync lose writes
/// (and so that the trials can fail). The server logs it at start, at error level.
pub const SKIP_SYNC_ENV: &str = "HEADWAY_TEST_SKIP_SYNC";

/// Whether [`SKIP_SYNC_ENV`] is set (read once).
pub fn skip_sync() -> bool {
    static SKIP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SKIP.get_or_init(|| std::env::var_os(SKIP_SYNC_ENV).is_some_and(|v| v == "1"))
}

/// Largest zero buffer written per call by WRITE_ZEROES when fallocate cannot zero.
const ZERO_CHUNK: usize = 1 << 20;

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
    /// Its syncs, and whether one has failed (then writes and syncs fail: see `durable`).
    durability: Durability,
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
        Ok(FileBackend { file, size, direct: None, durability: Durability::default() })
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

    /// Whether the export is a block device the kernel calls rotational (a hard disk);
    /// `None` for a regular file.
    pub fn rotational(&self) -> Option<bool> {
        block_device_attr(&self.file, "queue/rotational").map(|v| v == "1")
    }

    /// A block device's command queue depth (`device/queue_depth`, SCSI and SATA) or
    /// request queue size (`queue/nr_requests`), and which; `None` for a regular file.
    pub fn device_queue(&self) -> Option<(u32, &'static str)> {
        ["device/queue_depth", "queue/nr_requests"]
            .into_iter()
            .find_map(|a| Some((block_device_attr(&self.file, a)?.parse().ok()?, a)))
    }

    /// `direct`: the alignment requests are bounced to (the device's logical block size,
    /// or at least [`DIRECT_FILE_ALIGN`] for a regular file). `None` for buffered exports.
    pub fn direct_alignment(&self) -> Option<usize> {
        self.direct.as_ref().map(|d| d.align)
    }

    /// Read `len` bytes at `offset` into a new buffer. Buffered exports read straight
    /// into the buffer's unwritten memory (a 1 MiB read zeroes no megabyte first); a
    /// buffer the system refuses is `ENOMEM`, never an abort.
    pub fn read_to_vec(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let enomem = || io::Error::from_raw_os_error(libc::ENOMEM);
        if self.direct.is_some() {
            let mut buf = crate::memory::try_zeroed(len).ok_or_else(enomem)?;
            self.read(offset, &mut buf)?;
            return Ok(buf);
        }
        let mut buf: Vec<u8> = Vec::new();
        buf.try_reserve_exact(len).map_err(|_| enomem())?;
        while buf.len() < len {
            let done = buf.len();
            let spare = &mut buf.spare_capacity_mut()[..len - done];
            // SAFETY: pread writes at most `spare.len()` bytes into the spare capacity,
            // which the Vec owns; only the bytes it reports written are counted in below.
            let n = unsafe {
                libc::pread(
                    self.file.as_raw_fd(),
                    spare.as_mut_ptr().cast(),
                    spare.len(),
                    (offset + done as u64) as libc::off_t,
                )
            };
            match n {
                0 => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "read past the end of the export",
                    ))
                }
                n if n < 0 => {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
                // SAFETY: the first `n` bytes of the spare capacity were just written.
                n => unsafe { buf.set_len(done + n as usize) },
            }
        }
        Ok(buf)
    }

    pub fn read(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        match &self.direct {
            None => self.file.read_exact_at(buf, offset),
            Some(d) => d.read(&self.file, offset, buf),
        }
    }

    /// Write `data` at `offset` (EIO once a sync of the export has failed).
    pub fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.durability.check()?;
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
        self.durability.check()?;
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

    /// TRIM is advisory: punch a hole when the filesystem can, ignore it otherwise (EIO
    /// once a sync of the export has failed, as for writes).
    pub fn trim(&self, offset: u64, len: u64) -> io::Result<()> {
        self.durability.check()?;
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
    ///
    /// Syncs of one export never overlap, callers waiting together share one, and after
    /// one has failed every later one fails too, as do writes (see `durable`).
    pub fn sync(&self) -> io::Result<()> {
        if skip_sync() {
            return Ok(());
        }
        self.durability.sync(|| self.file.sync_data())
    }

    /// The export's first failed sync, if one has failed.
    pub fn failure(&self) -> Option<Failure> {
        self.durability.failure()
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
}
