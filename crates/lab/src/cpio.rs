//! A writer of cpio archives in the "newc" format, the one the Linux kernel unpacks as an
//! initramfs (Documentation/driver-api/early-userspace/buffer-format.rst).
//!
//! Each entry is a 110-byte ASCII header — the magic `070701`, then thirteen 8-digit hex
//! fields (ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor,
//! rdevminor, namesize including its NUL, check = 0) — the NUL-terminated name, padding to
//! a multiple of 4, the data, padding to a multiple of 4. The archive ends with an entry
//! named `TRAILER!!!`. The kernel accepts several archives one after the other, so a fixed
//! base image and a small per-run archive can be concatenated.
//!
//! Entries are written with uid/gid 0 and mtime 0 (the image is the same whatever the
//! host's clock), in the order given: a directory must come before what it holds.

use std::io::{self, Write};

const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;

/// Appends entries to `out`; [`Archive::finish`] writes the trailer.
pub struct Archive<W: Write> {
    out: W,
    ino: u32,
    written: u64,
}

impl<W: Write> Archive<W> {
    pub fn new(out: W) -> Self {
        Archive { out, ino: 1, written: 0 }
    }

    pub fn dir(&mut self, name: &str) -> io::Result<()> {
        self.entry(name, S_IFDIR | 0o755, 2, b"")
    }

    /// A regular file with permission bits `perm` (e.g. 0o755).
    pub fn file(&mut self, name: &str, perm: u32, data: &[u8]) -> io::Result<()> {
        self.entry(name, S_IFREG | (perm & 0o7777), 1, data)
    }

    pub fn symlink(&mut self, name: &str, target: &str) -> io::Result<()> {
        self.entry(name, S_IFLNK | 0o777, 1, target.as_bytes())
    }

    /// Write the trailer and hand back the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.ino = 0;
        self.entry("TRAILER!!!", 0, 1, b"")?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn entry(&mut self, name: &str, mode: u32, nlink: u32, data: &[u8]) -> io::Result<()> {
        let name = name.trim_start_matches('/');
        let namesize = name.len() + 1;
        let header = format!(
            "070701{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
            self.ino,
            mode,
            0,
            0,
            nlink,
            0,
            data.len(),
            0,
            0,
            0,
            0,
            namesize,
            0
        );
        debug_assert_eq!(header.len(), 110);
        self.ino += 1;
        self.put(header.as_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&[0])?;
        self.pad()?;
        self.put(data)?;
        self.pad()
    }

    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)?;
        self.written += b.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> io::Result<()> {
        let n = (4 - (self.written % 4) as usize) % 4;
        self.put(&[0u8; 3][..n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read a newc archive back: (name, mode, data) per entry, trailer excluded.
    fn read(mut b: &[u8]) -> Vec<(String, u32, Vec<u8>)> {
        let mut out = Vec::new();
        let mut pos = 0usize;
        loop {
            assert_eq!(&b[..6], b"070701", "magic at {pos}");
            let field = |i: usize| {
                u32::from_str_radix(std::str::from_utf8(&b[6 + 8 * i..14 + 8 * i]).unwrap(), 16).unwrap()
            };
            let (mode, size, namesize) = (field(1), field(6) as usize, field(11) as usize);
            let name = std::str::from_utf8(&b[110..110 + namesize - 1]).unwrap().to_string();
            assert_eq!(b[110 + namesize - 1], 0);
            let data_at = (110 + namesize).div_ceil(4) * 4;
            let next = (data_at + size).div_ceil(4) * 4;
            if name == "TRAILER!!!" {
                assert_eq!(b.len(), data_at, "nothing after the trailer but its padding");
                return out;
            }
            out.push((name, mode, b[data_at..data_at + size].to_vec()));
            pos += next;
            b = &b[next..];
        }
    }

    #[test]
    fn entries_round_trip_with_alignment() {
        let mut a = Archive::new(Vec::new());
        a.dir("bin").unwrap();
        a.file("/bin/init", 0o755, b"#!/bin/sh\necho hi\n").unwrap();
        a.file("odd", 0o644, b"12345").unwrap();
        a.symlink("sh", "bin/busybox").unwrap();
        let bytes = a.finish().unwrap();
        assert_eq!(bytes.len() % 4, 0);
        let e = read(&bytes);
        assert_eq!(e.len(), 4);
        assert_eq!(e[0], ("bin".into(), S_IFDIR | 0o755, vec![]));
        assert_eq!(e[1], ("bin/init".into(), S_IFREG | 0o755, b"#!/bin/sh\necho hi\n".to_vec()));
        assert_eq!(e[2], ("odd".into(), S_IFREG | 0o644, b"12345".to_vec()));
        assert_eq!(e[3], ("sh".into(), S_IFLNK | 0o777, b"bin/busybox".to_vec()));
    }

    #[test]
    fn same_entries_same_bytes() {
        let make = || {
            let mut a = Archive::new(Vec::new());
            a.file("x", 0o600, b"data").unwrap();
            a.finish().unwrap()
        };
        assert_eq!(make(), make());
    }
}
