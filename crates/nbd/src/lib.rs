//! # headway-nbd — an NBD block server that schedules real I/O
//!
//! `headway serve` exports a file over the Network Block Device protocol (fixed newstyle,
//! doc/proto.md of the NBD project) and runs every data request through one headway
//! scheduler per export, driven by the wall clock — the same `Scheduler` objects the
//! simulator drives with simulated time.
//!
//! Modules: [`proto`] (wire constants), [`handshake`] and [`transmission`] (pure codec, no
//! I/O, property-tested), [`backend`] (where requests go), [`server`] (threads, FLUSH/FUA)
//! with its private parts `core` (the scheduling core and its timer), `conn` (a
//! connection's handshake and request reading), `reply` (the reply path) and `socket`,
//! [`signal`] (SIGINT/SIGTERM → graceful shutdown), [`tls`] (STARTTLS with X.509 or PSK) and [`tracelog`] (`--trace OUT`: every
//! request recorded as blkparse text or a fio iolog, for `headway replay`). [`calibrate`]
//! is `headway calibrate`: service time against seek distance measured on a real device,
//! fitted, and the curve file `headway serve --estimator FILE` loads.
//!
//! ```no_run
//! use std::sync::{Arc, atomic::AtomicBool};
//! use headway_nbd::{ServeConfig, Listen, Server};
//! let mut cfg = ServeConfig::new("disk.img".into(), Listen::Unix("/tmp/hw.sock".into()));
//! cfg.size = Some(64 << 20);
//! let server = Server::bind(cfg).unwrap();
//! server.run(Arc::new(AtomicBool::new(false))).unwrap();
//! ```

pub mod backend;
pub mod calibrate;
mod conn;
mod core;
pub mod handshake;
pub mod proto;
pub mod queued;
mod reply;
pub mod server;
pub mod signal;
mod socket;
pub mod stats;
pub mod tls;
pub mod tracelog;
pub mod transmission;

pub use backend::BackendKind;
pub use server::{
    ContextMode, Listen, ServeConfig, ServeError, Server, DEFAULT_MAX_CONNECTIONS, DEFAULT_QUEUE_DEPTH,
};
pub use tls::{TlsConfig, TlsMode};
pub use tracelog::{TraceConfig, TraceFormat};

/// Parse a size with an optional binary suffix: `4096`, `64K`, `512M`, `2G`, `1T`
/// (`KiB`/`MiB`/... and lower case accepted).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suf) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("bad size `{s}`"))?;
    let shift = match suf.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        "t" | "tib" | "tb" => 40,
        _ => return Err(format!("bad size suffix in `{s}` (use K, M, G or T)")),
    };
    n.checked_mul(1u64 << shift).ok_or_else(|| format!("size `{s}` overflows"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_parse() {
        assert_eq!(super::parse_size("4096"), Ok(4096));
        assert_eq!(super::parse_size("64M"), Ok(64 << 20));
        assert_eq!(super::parse_size("2GiB"), Ok(2 << 30));
        assert!(super::parse_size("12Q").is_err());
        assert!(super::parse_size("").is_err());
    }
}
