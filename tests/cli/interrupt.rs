//! An interrupted `fencelab verify` (Ctrl-C or SIGKILL, in the middle of
//! running tests) changes nothing in the project (`git status` is as before)
//! and leaves no judge or implementation process running.

use std::process::Command;
use std::time::Duration;

use crate::common::{eventually_none, processes_under, root};

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

fn interrupt_with(signal: libc::c_int) {
    let before = git_status();
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .env("TMPDIR", tmp.path())
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
    // Wait until the mutant's hanging tests run (past the build and the baseline).
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    while !processes_under(tmp.path())
        .iter()
        .any(|c| c.contains("--exact step7::"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the hanging tests never started"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "verify ended before its tests hung"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a signal to our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run was interrupted");
    assert_eq!(git_status(), before, "the project's files are as they were");
    // Every process of the run got SIGKILL when fencelab ended (PDEATHSIG);
    // the dead may take a moment to be gone on a loaded machine.
    let left = eventually_none(|| processes_under(tmp.path()));
    assert!(left.is_empty(), "processes left running: {left:?}");
}

#[test]
fn an_interrupted_verify_changes_nothing_and_leaves_nothing_running() {
    interrupt_with(libc::SIGINT);
    interrupt_with(libc::SIGKILL);
}
