//! Requests as the scheduling core sees them.

use crate::time::Time;

/// 512-byte sector address (logical block number).
pub type Sector = u64;

/// Bytes per sector: every address and length in the core is in these units.
pub const SECTOR_BYTES: u64 = 512;

/// A driver-assigned request identity, unique for the life of a scheduler.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReqId(pub u64);

/// Who issued a request (process, thread, VM, connection), when the driver knows.
/// Stream scheduling never looks at it; anticipation and CFQ-like policies do.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContextId(pub u32);

/// Data direction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Read,
    Write,
}

impl Dir {
    pub const fn index(self) -> usize {
        match self {
            Dir::Read => 0,
            Dir::Write => 1,
        }
    }
}

/// One block request. `sector..sector+len` is the range it touches.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub id: ReqId,
    pub sector: Sector,
    /// Length in sectors (> 0).
    pub len: u32,
    pub dir: Dir,
    /// A synchronous request blocks its issuer until it completes.
    pub sync: bool,
    /// When the request reached the scheduler.
    pub arrival: Time,
    pub ctx: Option<ContextId>,
}

impl Request {
    /// First sector past the request.
    pub const fn end(&self) -> Sector {
        self.sector + self.len as u64
    }
    pub const fn bytes(&self) -> u64 {
        self.len as u64 * SECTOR_BYTES
    }
}
