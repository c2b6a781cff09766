//! The `fencelab` command: see `fencelab --help`.

fn main() -> std::process::ExitCode {
    // Like other Unix tools: `fencelab verify | head` ends quietly when the
    // reader goes, instead of panicking on a closed pipe.
    // SAFETY: restores the default action of one signal at start-up.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    fencelab::cli::main()
}
