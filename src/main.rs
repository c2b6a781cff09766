//! The `fencelab` command: see `fencelab --help`.

fn main() -> std::process::ExitCode {
    // Like other Unix tools: `fencelab verify | head` ends quietly when the
    // reader goes, instead of panicking on a closed pipe.
    let _ = cage::sys::set_signal(libc::SIGPIPE, cage::sys::Disposition::Default);
    fencelab::cli::main()
}
