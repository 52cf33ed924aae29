//! Fuzzing the real connection code: hostile byte streams against running servers, many
//! executions a second (issue 39).
//!
//! Two servers run for the whole test, one serving connections on threads of their own
//! and one as tasks. Each execution connects to one of them, optionally completes a
//! handshake, sends a generated sequence of chunks — raw bytes, request headers with
//! random fields (any command, flag, offset, length, with or without a payload after it),
//! handshake options of every kind with a byte changed, or well-formed requests — then
//! shuts its writing side and reads until the server closes. The server must close
//! within the deadline (never hang on input), and every 1,000 executions, and at the end,
//! a well-behaved client must be served by each server, whose memory must not have grown
//! past a bound. The servers' threads panicking fails the run at the end (the servers
//! return their result).
//!
//! `cargo test -p headway-nbd --test fuzz_connection` runs for `HEADWAY_FUZZ_SECS` seconds
//! (default 15, what `make test` runs) or `HEADWAY_FUZZ_EXECS` executions, whichever is
//! given (`HEADWAY_FUZZ_EXECS=10000000` for the long run in BENCHMARKS.md), from the seed
//! `HEADWAY_FUZZ_SEED` (default: the time). A failure prints the seed, the execution
//! number and the input.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use headway_nbd::handshake::{self as hs, ClientOption};
use headway_nbd::proto::*;
use headway_nbd::transmission::RequestHeader;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

mod common;
use common::Running;

const SIZE: u64 = 1 << 20;
/// A server must close a hostile connection within this (its handshake deadline is 1 s).
const DEADLINE: Duration = Duration::from_secs(5);
/// Resident memory the test process may grow by over the run.
const RSS_GROWTH_BOUND: u64 = 64 << 20;

#[derive(Clone, Debug)]
enum Chunk {
    Bytes(Vec<u8>),
    Header { flags: u16, ty: u16, offset: u64, len: u32, payload: bool },
    Option { which: u8, at: usize, xor: u8, truncate: bool },
}

fn option(which: u8) -> Vec<u8> {
    match which % 8 {
        0 => ClientOption::ExportName(String::new()).encode(),
        1 => ClientOption::List.encode(),
        2 => ClientOption::StructuredReply.encode(),
        3 => ClientOption::Info { go: true, name: String::new(), requests: vec![INFO_NAME, INFO_BLOCK_SIZE] }
            .encode(),
        4 => ClientOption::Info { go: false, name: "x".into(), requests: vec![INFO_DESCRIPTION] }.encode(),
        5 => ClientOption::StartTls.encode(),
        6 => ClientOption::Unknown(which as u32).encode(),
        _ => ClientOption::Abort.encode(),
    }
}

fn chunk() -> impl Strategy<Value = Chunk> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..96).prop_map(Chunk::Bytes),
        (any::<u16>(), 0u16..12, any::<u64>(), any::<u32>(), any::<bool>())
            .prop_map(|(flags, ty, offset, len, payload)| Chunk::Header { flags, ty, offset, len, payload }),
        (0u16..8, 0u16..8, 0u64..(SIZE + 8192), 0u32..16384, any::<bool>())
            .prop_map(|(flags, ty, offset, len, payload)| Chunk::Header { flags, ty, offset, len, payload }),
        (any::<u8>(), 0usize..64, any::<u8>(), any::<bool>())
            .prop_map(|(which, at, xor, truncate)| Chunk::Option { which, at, xor, truncate }),
    ]
}

#[derive(Debug)]
struct Input {
    to_task_server: bool,
    handshake: bool,
    client_flags: u32,
    chunks: Vec<Chunk>,
}

fn input() -> impl Strategy<Value = Input> {
    (
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(3u32), Just(1), any::<u32>()],
        prop::collection::vec(chunk(), 0..10),
    )
        .prop_map(|(to_task_server, handshake, client_flags, chunks)| Input {
            to_task_server,
            handshake,
            client_flags,
            chunks,
        })
}

fn bytes(c: &Chunk) -> Vec<u8> {
    match c {
        Chunk::Bytes(b) => b.clone(),
        Chunk::Header { flags, ty, offset, len, payload } => {
            let mut b = RequestHeader { flags: *flags, ty: *ty, cookie: 7, offset: *offset, len: *len }
                .encode()
                .to_vec();
            if *payload {
                b.resize(b.len() + (*len).min(16384) as usize, 0x5a);
            }
            b
        }
        Chunk::Option { which, at, xor, truncate } => {
            let mut b = option(*which);
            let i = at % b.len();
            b[i] ^= xor;
            if *truncate {
                b.truncate(i);
            }
            b
        }
    }
}

/// One execution: the server must close the connection within the deadline.
fn run_one(sock: &std::path::Path, inp: &Input) -> Result<(), String> {
    let mut c = UnixStream::connect(sock).map_err(|e| format!("connect: {e}"))?;
    c.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut greet = [0u8; 18];
    c.read_exact(&mut greet).map_err(|e| format!("greeting: {e}"))?;
    let mut out = inp.client_flags.to_be_bytes().to_vec();
    if inp.handshake {
        out = (FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes().to_vec();
        out.extend_from_slice(&ClientOption::ExportName(String::new()).encode());
    }
    for ch in &inp.chunks {
        out.extend_from_slice(&bytes(ch));
    }
    // the server may hang up at any point: allowed
    let _ = c.write_all(&out);
    let _ = c.shutdown(std::net::Shutdown::Write);
    let t0 = Instant::now();
    let mut sink = [0u8; 64 << 10];
    loop {
        match c.read(&mut sink) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Ok(()),
            Err(e) => return Err(format!("no close after {:?}: {e}", t0.elapsed())),
        }
    }
}

/// A well-behaved client gets its read answered.
fn served(sock: &std::path::Path) -> Result<(), String> {
    let mut c = UnixStream::connect(sock).map_err(|e| e.to_string())?;
    c.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut greet = [0u8; 18];
    c.read_exact(&mut greet).map_err(|e| e.to_string())?;
    if greet != hs::greeting() {
        return Err("bad greeting".into());
    }
    c.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    c.write_all(&ClientOption::ExportName(String::new()).encode()).unwrap();
    let mut r = [0u8; 10];
    c.read_exact(&mut r).map_err(|e| e.to_string())?;
    c.write_all(&RequestHeader { flags: 0, ty: CMD_READ, cookie: 9, offset: 4096, len: 512 }.encode())
        .unwrap();
    let mut reply = [0u8; 16 + 512];
    c.read_exact(&mut reply).map_err(|e| e.to_string())?;
    if u32::from_be_bytes(reply[4..8].try_into().unwrap()) != 0 {
        return Err("the read failed".into());
    }
    Ok(())
}

fn rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let l = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() << 10
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| v.parse().unwrap_or_else(|_| panic!("{name}={v}: not a number")))
}

#[test]
fn hostile_streams_never_hurt_the_servers() {
    let start = |threads: usize| {
        Running::start(|cfg| {
            cfg.size = Some(SIZE);
            cfg.scheduler = "noop".into();
            cfg.handshake_timeout = Duration::from_secs(1);
            cfg.connection_threads = threads;
        })
    };
    let (on_threads, as_tasks) = (start(4), start(0));
    let seed = env_u64("HEADWAY_FUZZ_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
    });
    let execs = env_u64("HEADWAY_FUZZ_EXECS");
    let secs = env_u64("HEADWAY_FUZZ_SECS").unwrap_or(15);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner =
        TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes));
    let strategy = input();
    let (t0, rss0) = (Instant::now(), rss());
    let mut n = 0u64;
    let done = |n: u64| match execs {
        Some(e) => n >= e,
        None => t0.elapsed() >= Duration::from_secs(secs),
    };
    while !done(n) {
        let inp = strategy.new_tree(&mut runner).unwrap().current();
        let srv = if inp.to_task_server { &as_tasks } else { &on_threads };
        if let Err(e) = run_one(&srv.sock, &inp) {
            panic!("seed {seed}, execution {n}: {e}\ninput: {inp:?}");
        }
        n += 1;
        if n % 1000 == 0 {
            for s in [&on_threads, &as_tasks] {
                served(&s.sock).unwrap_or_else(|e| panic!("seed {seed}, after execution {n}: {e}"));
            }
            let grown = rss().saturating_sub(rss0);
            assert!(grown < RSS_GROWTH_BOUND, "seed {seed}, after {n}: memory grew by {} MiB", grown >> 20);
        }
        if n % 1_000_000 == 0 {
            eprintln!("{n} executions in {:.0?}", t0.elapsed());
        }
    }
    for s in [&on_threads, &as_tasks] {
        served(&s.sock).unwrap_or_else(|e| panic!("seed {seed}, at the end: {e}"));
    }
    let took = t0.elapsed();
    eprintln!(
        "fuzz: seed {seed}: {n} executions in {took:.1?} ({:.0}/s), memory grown by {} KiB",
        n as f64 / took.as_secs_f64(),
        rss().saturating_sub(rss0) >> 10
    );
    on_threads.stop();
    as_tasks.stop();
}
