//! What the kernel says about an export's file: the alignment `direct` I/O to it needs
//! (a block device's logical block size; for a regular file at least
//! [`DIRECT_FILE_ALIGN`]), a block device's size, and the size of a special file.

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

use super::direct::no_direct;

/// Alignment of `direct` I/O to a regular file when the file system does not say (statx
/// `STATX_DIOALIGN`) or says less: 4 KiB, and never less than a page (see `Direct`).
pub const DIRECT_FILE_ALIGN: usize = 4096;

/// `direct` alignment for a regular file (see [`Direct`](super::direct::Direct)).
pub(super) fn file_alignment(f: &File) -> io::Result<usize> {
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
pub(super) fn logical_block_size(f: &File) -> io::Result<usize> {
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
pub(super) fn block_device_size(f: &File) -> io::Result<u64> {
    if let Some(req) = BLKGETSIZE64 {
        let mut n: u64 = 0;
        // SAFETY: BLKGETSIZE64 writes one u64 through the pointer.
        if unsafe { libc::ioctl(f.as_raw_fd(), req, &mut n) } == 0 {
            return Ok(n);
        }
    }
    seek_end(f)
}

/// The size of `f` by seeking to its end (special files that report no length).
pub(super) fn seek_end(f: &File) -> io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = f.try_clone()?;
    f.seek(SeekFrom::End(0))
}

/// A sysfs attribute of the block device `f`, `/sys/dev/block/MAJ:MIN/NAME` (a partition
/// answers for its disk), trimmed. `None` for other files, or when sysfs does not say.
pub(super) fn block_device_attr(f: &File, name: &str) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = f.metadata().ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    let rdev = meta.rdev();
    let dev = format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev));
    let read = |p: String| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string());
    read(format!("{dev}/{name}")).or_else(|| read(format!("{dev}/../{name}")))
}
