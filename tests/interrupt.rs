//! An interrupted `fencelab verify` (Ctrl-C or SIGKILL, in the middle of
//! running tests) changes nothing in the project (`git status` is as before)
//! and leaves no judge or implementation process running.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn git_status() -> Option<String> {
    let out = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(root())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Processes started by a fencelab run: judges and servers carry
/// FENCELAB_SERVER in their environment.
fn fencelab_processes() -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("environ")).is_ok_and(|env| {
                env.split(|b| *b == 0)
                    .any(|v| v.starts_with(b"FENCELAB_SERVER="))
            })
        })
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .collect()
}

fn interrupt_with(signal: libc::c_int) {
    let before = git_status();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        // A mutant that hangs, with a long limit: at the interrupt its tests are
        // blocked, and would stay so if nothing killed them.
        .args([
            "verify",
            "--color",
            "never",
            "--mutants",
            "tests/fixtures/outcomes",
            "--timeout",
            "120",
            "hangs",
        ])
        .current_dir(root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Past the build and the baseline, into the hanging tests.
    std::thread::sleep(Duration::from_secs(6));
    // SAFETY: a signal to our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run was interrupted");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(git_status(), before, "the project's files are as they were");
    let left = fencelab_processes();
    assert!(left.is_empty(), "processes left running: {left:?}");
}

#[test]
fn an_interrupted_verify_changes_nothing_and_leaves_nothing_running() {
    interrupt_with(libc::SIGINT);
    interrupt_with(libc::SIGKILL);
}
