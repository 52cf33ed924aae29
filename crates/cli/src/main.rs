//! The `headway` binary: the program is [`headway_command::main`] (crates/command), which
//! the Python package's console script runs too. This crate holds the binary and its
//! end-to-end tests (tests/), nothing else.

fn main() -> std::process::ExitCode {
    // Rust ignores SIGPIPE, so printing to a closed pipe (`headway schedulers | head -1`)
    // would panic; a command-line tool should end quietly instead, as `cat` does. Only the
    // binary does this: the Python package runs the same `main` inside Python's process.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    headway_command::main(std::env::args_os())
}
