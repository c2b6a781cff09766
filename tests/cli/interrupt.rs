//! An interrupted run (Ctrl-C or SIGKILL, in the middle of running tests)
//! changes nothing in the project (`git status` is as before) and leaves no
//! judge or implementation process running.
//!
//! `cargo test` interrupts `grade` of a submission whose every test hangs at
//! its first call: its tests hang as soon as the build is done. `verify`
//! runs its baseline (every test, twice) before its mutants' tests, so the
//! same check on `verify` (a mutant's hanging tests) waits for ~190 trials
//! first: `.ci/run`'s second step. Both go through the one engine and its
//! runner, which kills what it started.

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

/// Starts fencelab with `args` in the project, interrupts it with `signal`
/// once a test whose command line has `hanging` is running, and checks what
/// is left.
fn interrupt_with(signal: libc::c_int, args: &[&str], hanging: &str) {
    let before = git_status();
    let tmp = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_fencelab"));
    // Ctrl-C reaches a program whose SIGINT is the default; a test run
    // started in the background of a script inherits it ignored, and so
    // would fencelab, which inherits this process's.
    cage::sys::set_signal(libc::SIGINT, cage::sys::Disposition::Default).unwrap();
    let mut child = command
        .env("TMPDIR", tmp.path())
        .args(["--color", "never"])
        .args(args)
        .current_dir(root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the hanging tests run (past the build, and verify's baseline).
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    while !processes_under(tmp.path())
        .iter()
        .any(|c| c.contains(hanging))
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
    let signal = rustix::process::Signal::from_named_raw(signal).unwrap();
    let _ = rustix::process::kill_process(rustix::process::Pid::from_child(&child), signal);
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run was interrupted");
    assert_eq!(git_status(), before, "the project's files are as they were");
    // Every process of the run got SIGKILL when fencelab ended (PDEATHSIG);
    // the dead may take a moment to be gone on a loaded machine.
    let left = eventually_none(|| processes_under(tmp.path()));
    assert!(left.is_empty(), "processes left running: {left:?}");
}

/// A submission whose every test hangs in its first call (`init_db`), with
/// a long limit: at the interrupt its tests are blocked, and would stay so
/// if nothing killed them.
#[test]
fn an_interrupted_grade_changes_nothing_and_leaves_nothing_running() {
    let reference = fencelab::lab::reference::REFERENCE;
    let find = "pub fn init_db(path: impl AsRef<Path>) -> Result<(), LeaseError> {\n";
    assert!(reference.contains(find));
    let hangs = reference.replacen(
        find,
        &format!("{find}    std::thread::sleep(std::time::Duration::from_secs(600));\n"),
        1,
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hangs_in_init_db.rs");
    std::fs::write(&file, hangs).unwrap();
    let file = file.to_str().unwrap();
    let args = ["grade", file, "--timeout", "120", "--budget", "1000"];
    interrupt_with(libc::SIGINT, &args, "serve impl-");
    interrupt_with(libc::SIGKILL, &args, "serve impl-");
}

/// The same on `verify`, interrupted in its mutant's hanging tests (past the
/// build and the baseline).
#[test]
#[ignore = "slow: .ci/run step 2"]
fn an_interrupted_verify_changes_nothing_and_leaves_nothing_running() {
    // A mutant that hangs, with a long limit.
    let args = [
        "verify",
        "--mutants",
        "tests/fixtures/outcomes",
        "--timeout",
        "120",
        "hangs",
    ];
    interrupt_with(libc::SIGINT, &args, "--exact step7::");
    interrupt_with(libc::SIGKILL, &args, "--exact step7::");
}
