//! `direct`: O_DIRECT with aligned bounce buffers. [`Direct`] is the O_DIRECT side of a
//! [`FileBackend`](super::FileBackend) opened with `open_direct`: how requests of any
//! offset and length are aligned, how a read-modify-write keeps clear of other writes to
//! its blocks, and what becomes of the partial last block of a file.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use super::aligned_buf::AlignedBuf;
use super::geometry::{block_device_size, file_alignment, logical_block_size};
use super::stripes::Stripes;

/// The O_DIRECT side of a `direct` export.
///
/// * Alignment `align`: a block device's logical block size (`BLKSSZGET`); for a regular
///   file the larger of [`DIRECT_FILE_ALIGN`](super::DIRECT_FILE_ALIGN), the page size
///   and what statx's `STATX_DIOALIGN` asks for (offset and memory). File offsets, lengths
///   and buffer addresses of every O_DIRECT call are multiples of it.
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
pub(super) struct Direct {
    file: File,
    pub(super) align: usize,
    buffered_from: u64,
    locks: Stripes,
}

impl Direct {
    /// `path` again with O_DIRECT; `buffered` is the export's buffered descriptor.
    pub(super) fn open(path: &Path, buffered: &File, read_only: bool) -> io::Result<Direct> {
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

    pub(super) fn read(&self, buffered: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
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

    pub(super) fn write(&self, buffered: &File, offset: u64, data: &[u8]) -> io::Result<()> {
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
    pub(super) fn with_range_shared<R>(&self, offset: u64, end: u64, f: impl FnOnce() -> R) -> R {
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
pub(super) fn no_direct(how: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("O_DIRECT is not supported on this file system ({how}); use --backend file"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BackendKind, FileBackend, DIRECT_FILE_ALIGN, ZERO_CHUNK};

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
