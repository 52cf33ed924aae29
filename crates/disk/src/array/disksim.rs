//! DiskSim's rules for an array imported from a `disksim_logorg` ([`Disksim`], set by
//! `crate::parv`'s logorg import; `--array`'s arrays have none and keep headway's rules).
//!
//! With them an array behaves as DiskSim 4.0's logical organisation does
//! (`disksim_logorg.c`, `disksim_redun.c`), where that differs from headway's own arrays:
//! * RAID 4 and 5 writes are built by DiskSim's parity-table procedure
//!   (`parity_table.rs`): rows classified by the data units they touch, a partial row
//!   read-modify-written below the `RMW vs. reconstruct` point and reconstruct-written
//!   from it on, and each write waiting only for the reads it depends on when `Synch
//!   writes for safety = 0`;
//! * member requests are DiskSim's ([`super::join`]): RAID 0 and 10 give each member one
//!   request per array request, RAID 4 and 5 join a member's pieces less than 33 sectors
//!   apart (reads through the gap);
//! * capacities are DiskSim's: RAID 0 `N P` for members of `P` sectors, RAID 1 and 10
//!   `N / C x P`, RAID 4 `(N - 1) P`, RAID 5 `N trunc(P (N - 1) / N)` (the largest multiple
//!   of `N` not above `(N - 1) P`); on RAID 0 and 10, when `P` is not a whole number of
//!   stripe units `u`, the `r = P mod u` sectors left at each member's end form one more
//!   row whose units are `r` sectors long (DiskSim's `logorg_mapstriped`). RAID 4 and 5
//!   stop at their last whole row: DiskSim's table maps its short last row by a rotation
//!   headway does not reproduce, so with members that are not whole stripe units their
//!   capacity is the smaller of DiskSim's and the whole rows' (a request into DiskSim's
//!   short row is an error, as any request past the array's end). A request ending
//!   exactly at the capacity runs here; DiskSim's end check is strict and aborts on it;
//! * the array front end admits every request at once: DiskSim has no front-end queue
//!   (it only stops a run with 10,000 array requests outstanding, which headway does not).

/// What a `disksim_logorg` sets beyond the layout.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Disksim {
    /// A partial row touching fewer data units than this is read-modify-written, one
    /// touching this many or more reconstruct-written: `RMW vs. reconstruct` times the
    /// devices (parity included), truncated, as DiskSim turns it into an integer at load.
    pub rmw_point: u32,
    /// `Synch writes for safety = 1`: every write of a request waits for all its reads;
    /// 0: each write only for the reads on its member and those of the rows whose parity
    /// it carries.
    pub synch_writes: bool,
    /// Sectors of a member (DiskSim takes the first listed device's for all): the
    /// array's capacity, and on RAID 0 and 10 the last row's unit when it is not a whole
    /// number of stripe units.
    pub member_sectors: u64,
}
