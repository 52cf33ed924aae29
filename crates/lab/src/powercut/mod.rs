//! Power cuts: `headway serve` in a guest whose disk QEMU caches, killed at random moments.

pub mod load;
