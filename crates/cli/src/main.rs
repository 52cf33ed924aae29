//! The `headway` binary. The program is the library's [`headway_cli::main`] (src/lib.rs),
//! which the Python package's console script runs too: declare subcommand modules there.

fn main() -> std::process::ExitCode {
    headway_cli::main(std::env::args_os())
}
