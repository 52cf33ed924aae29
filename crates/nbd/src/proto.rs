//! NBD wire constants (doc/proto.md of the NBD project), by the names the spec gives them.
//!
//! Everything on the wire is big-endian. Only the fixed newstyle handshake is spoken.

/// Server greeting, first 8 bytes: "NBDMAGIC".
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// Newstyle magic after NBDMAGIC, and the prefix of every client option: "IHAVEOPT".
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// Prefix of every option reply.
pub const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;

/// Handshake flags (server → client, u16).
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
/// Client flags (client → server, u32).
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

/// Options.
pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;
pub const OPT_STRUCTURED_REPLY: u32 = 8;

/// Option reply types.
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_FLAG_ERROR: u32 = 1 << 31;
pub const REP_ERR_UNSUP: u32 = REP_FLAG_ERROR | 1;
pub const REP_ERR_POLICY: u32 = REP_FLAG_ERROR | 2;
pub const REP_ERR_INVALID: u32 = REP_FLAG_ERROR | 3;
pub const REP_ERR_PLATFORM: u32 = REP_FLAG_ERROR | 4;
pub const REP_ERR_TLS_REQD: u32 = REP_FLAG_ERROR | 5;
pub const REP_ERR_UNKNOWN: u32 = REP_FLAG_ERROR | 6;
pub const REP_ERR_SHUTDOWN: u32 = REP_FLAG_ERROR | 7;
pub const REP_ERR_TOO_BIG: u32 = REP_FLAG_ERROR | 9;

/// Information types in NBD_REP_INFO (OPT_INFO / OPT_GO).
pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_DESCRIPTION: u16 = 2;
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Transmission flags (u16, sent with the export size).
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
pub const FLAG_READ_ONLY: u16 = 1 << 1;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_FUA: u16 = 1 << 3;
pub const FLAG_ROTATIONAL: u16 = 1 << 4;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const FLAG_SEND_DF: u16 = 1 << 7;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// Transmission request / reply magics.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

/// Commands.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_CACHE: u16 = 5;
pub const CMD_WRITE_ZEROES: u16 = 6;
pub const CMD_BLOCK_STATUS: u16 = 7;

/// Command flags.
pub const CMD_FLAG_FUA: u16 = 1 << 0;
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;
pub const CMD_FLAG_DF: u16 = 1 << 2;
pub const CMD_FLAG_REQ_ONE: u16 = 1 << 3;
pub const CMD_FLAG_FAST_ZERO: u16 = 1 << 4;

/// Structured reply flags and chunk types.
pub const REPLY_FLAG_DONE: u16 = 1 << 0;
pub const REPLY_TYPE_NONE: u16 = 0;
pub const REPLY_TYPE_OFFSET_DATA: u16 = 1;
pub const REPLY_TYPE_OFFSET_HOLE: u16 = 2;
pub const REPLY_TYPE_ERROR: u16 = (1 << 15) | 1;
pub const REPLY_TYPE_ERROR_OFFSET: u16 = (1 << 15) | 2;

/// Error values carried in replies (the spec fixes these numbers, whatever the host's errno).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Errno {
    Perm = 1,
    Io = 5,
    NoMem = 12,
    Inval = 22,
    NoSpc = 28,
    Overflow = 75,
    NotSup = 95,
    Shutdown = 108,
}

impl Errno {
    pub const fn code(self) -> u32 {
        self as u32
    }
    /// A wire value back to a known error (unknown values read as EINVAL, as the spec asks
    /// clients to treat them).
    pub fn from_code(code: u32) -> Errno {
        match code {
            1 => Errno::Perm,
            5 => Errno::Io,
            12 => Errno::NoMem,
            22 => Errno::Inval,
            28 => Errno::NoSpc,
            75 => Errno::Overflow,
            95 => Errno::NotSup,
            108 => Errno::Shutdown,
            _ => Errno::Inval,
        }
    }
    /// Map a host I/O error to the closest wire error.
    pub fn from_io(e: &std::io::Error) -> Errno {
        match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EROFS) | Some(libc::EACCES) => Errno::Perm,
            Some(libc::ENOSPC) | Some(libc::EFBIG) => Errno::NoSpc,
            Some(libc::ENOMEM) => Errno::NoMem,
            Some(libc::EINVAL) => Errno::Inval,
            Some(libc::EOPNOTSUPP) => Errno::NotSup,
            _ => Errno::Io,
        }
    }
}

/// Largest READ or WRITE payload this server accepts (the spec's recommended maximum block
/// size ceiling; clients are told this in NBD_INFO_BLOCK_SIZE).
pub const MAX_PAYLOAD: u32 = 32 << 20;
/// Preferred block size advertised in NBD_INFO_BLOCK_SIZE (page size: no read-modify-write
/// in the page cache).
pub const PREFERRED_BLOCK: u32 = 4096;
/// Minimum block size: the file backend handles any byte alignment.
pub const MIN_BLOCK: u32 = 1;
/// Largest option payload read during the handshake; longer options disconnect.
pub const MAX_OPTION_LEN: u32 = 64 << 10;
/// Export names longer than this are refused (the spec's 4096-byte limit).
pub const MAX_NAME_LEN: usize = 4096;
