//! A hash map keyed by request id with a cheap hasher: ids are driver-assigned integers, so
//! SipHash's flood resistance buys nothing on the hot path.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::request::ReqId;

#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub type IdMap<V> = HashMap<ReqId, V, BuildHasherDefault<IdHasher>>;
