//! # headway-nbd — an NBD block server that schedules real I/O
//!
//! `headway serve` exports a file over the Network Block Device protocol (fixed newstyle,
//! doc/proto.md of the NBD project) and runs every data request through one headway
//! scheduler per export, driven by the wall clock — the same `Scheduler` objects the
//! simulator drives with simulated time.
//!
//! Modules: [`proto`] (wire constants), [`handshake`] and [`transmission`] (pure codec, no
//! I/O, property-tested), [`backend`] (where requests go, and the export's syncs),
//! [`server`] (threads, FLUSH/FUA; its part `execute` runs dispatched requests and answers
//! them), [`depth`] (the default queue depth), [`memory`] (the server-wide budget of
//! request data), and the private parts `admission` (which connections are taken and
//! kept), `core` (the scheduling core and its timer), `conn` (a connection's handshake and
//! request reading), `reply` (the reply path) and `socket`; [`signal`] (SIGINT/SIGTERM →
//! graceful shutdown), [`tls`] (STARTTLS with X.509 or PSK) and [`tracelog`] (`--trace
//! OUT`: every request recorded as blkparse text or a fio iolog, for `headway replay`).
//! [`calibrate`] is `headway calibrate`: service time against seek distance measured on a
//! real device, fitted, and the curve file `headway serve --estimator FILE` loads.
//!
//! ```no_run
//! use std::sync::{Arc, atomic::AtomicBool};
//! use headway_nbd::{ServeConfig, Listen, Server};
//! let mut cfg = ServeConfig::new("disk.img".into(), Listen::Unix("/tmp/hw.sock".into()));
//! cfg.size = Some(64 << 20);
//! let server = Server::bind(cfg).unwrap();
//! server.run(Arc::new(AtomicBool::new(false))).unwrap();
//! ```

mod admission;
pub mod backend;
pub mod calibrate;
mod conn;
mod core;
pub mod depth;
pub mod handshake;
pub mod memory;
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
    ContextMode, Listen, ServeConfig, ServeError, Server, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_HANDSHAKES,
    DEFAULT_QUEUE_DEPTH,
};
pub use tls::{TlsConfig, TlsMode};
pub use tracelog::{TraceConfig, TraceFormat};
