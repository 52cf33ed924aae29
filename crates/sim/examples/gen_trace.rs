//! Write a synthetic blkparse trace to standard output, generated as it is written (see
//! `headway_sim::trace::synthetic`): `gen_trace REQUESTS [READERS [GAP_NS]]`.
//!
//! ```sh
//! cargo run --release -p headway-sim --example gen_trace -- 10000000 \
//!     | headway replay - --format blkparse --mode closed --scheduler stream
//! ```

use std::io::Write;

use headway_sim::trace::synthetic::Synthetic;

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("numbers")).collect();
    let s = Synthetic {
        requests: args.first().copied().unwrap_or(1_000_000),
        readers: args.get(1).copied().unwrap_or(4) as u32,
        spacing: 100 << 30,
        gap_ns: args.get(2).copied().unwrap_or(1_000),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut r = s.reader();
    if let Err(e) = std::io::copy(&mut r, &mut out).and_then(|_| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("gen_trace: {e}");
            std::process::exit(1);
        }
    }
}
