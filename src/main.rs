//! The `fencelab` command: see `fencelab --help`.

fn main() -> std::process::ExitCode {
    fencelab::cli::main()
}
