//! Backends: where scheduled requests finally go.
//!
//! `file`: a regular file (or block device) through the page cache, positional
//! `pread`/`pwrite` from the worker threads. Durability: [`FileBackend::sync`] is
//! `fdatasync`, which covers every write any thread made to the file before it — that is
//! what lets FLUSH bypass the scheduler (see `server`). `direct` (O_DIRECT) and
//! `emulated:MODEL` (a modelled drive) are later steps and are refused when parsed.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

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

/// A buffered file export.
#[derive(Debug)]
pub struct FileBackend {
    file: File,
    size: u64,
}

impl FileBackend {
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
        let mut len = file.metadata()?.len();
        if len == 0 {
            // Block devices report 0 in metadata: ask for their size by seeking to the end.
            len = seek_end(&file)?;
        }
        let size = match size {
            Some(s) if s > len => {
                if read_only {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("--size {s} exceeds the file ({len} bytes) and the export is read-only"),
                    ));
                }
                file.set_len(s)?;
                s
            }
            Some(s) => s,
            None => len,
        };
        Ok(FileBackend { file, size })
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn read(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    pub fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.file.write_all_at(data, offset)
    }

    /// Write zeros: `fallocate(ZERO_RANGE)` when the filesystem has it, else zero buffers.
    /// (Punching a hole is also allowed unless NO_HOLE is set; zeroing satisfies both.)
    pub fn write_zeroes(&self, offset: u64, len: u64) -> io::Result<()> {
        // SAFETY: fallocate on an owned descriptor with in-range arguments.
        let r = unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                libc::FALLOC_FL_ZERO_RANGE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let zeros = vec![0u8; ZERO_CHUNK.min(len as usize)];
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(zeros.len() as u64) as usize;
            self.file.write_all_at(&zeros[..n], offset + done)?;
            done += n as u64;
        }
        Ok(())
    }

    /// TRIM is advisory: punch a hole when the filesystem can, ignore it otherwise.
    pub fn trim(&self, offset: u64, len: u64) -> io::Result<()> {
        // SAFETY: as in write_zeroes.
        unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            );
        }
        Ok(())
    }

    /// `fdatasync`: every write completed before the call is durable after it.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }
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
        assert_eq!("emulated:wd5000aaks".parse::<BackendKind>(), Ok(BackendKind::Emulated("wd5000aaks".into())));
        assert!("emulated:".parse::<BackendKind>().is_err());
        assert!("tape".parse::<BackendKind>().is_err());
    }

    #[test]
    fn file_is_created_extended_and_zeroed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("disk.img");
        let b = FileBackend::open(&p, Some(1 << 20), false).unwrap();
        assert_eq!(b.size(), 1 << 20);
        b.write(4096, &[7u8; 8192]).unwrap();
        b.write_zeroes(5000, 100).unwrap();
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
