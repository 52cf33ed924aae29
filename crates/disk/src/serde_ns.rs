//! Serde helpers: a [`Duration`] is written as its integer nanoseconds (headway-sched's
//! time types carry no serde dependency).

use headway_sched::Duration;
use serde::{Deserialize, Deserializer, Serializer};

pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.0)
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    u64::deserialize(d).map(Duration)
}

/// `Vec<(u32, Duration)>` as `[[distance, ns], ...]`.
pub mod knots {
    use super::*;
    use serde::Serialize;

    pub fn serialize<S: Serializer>(v: &[(u32, Duration)], s: S) -> Result<S::Ok, S::Error> {
        let raw: Vec<(u32, u64)> = v.iter().map(|&(d, t)| (d, t.0)).collect();
        raw.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(u32, Duration)>, D::Error> {
        let raw: Vec<(u32, u64)> = Vec::deserialize(d)?;
        Ok(raw.into_iter().map(|(d, t)| (d, Duration(t))).collect())
    }
}
