//! `check --watch` as a learner runs it: each save of the learner's file
//! under a running watcher is checked again, and a step that turns green
//! says so at the top.

use std::io::BufRead as _;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use fencelab::commands::new as starter;
use fencelab::lab::reference::REFERENCE;
use fencelab::lab::worksheet::{Lang, Worksheet};

use crate::common::root;

/// The lines the watcher printed up to the next "watching" line (a check
/// ended). The limit only keeps a broken watcher from hanging the suite.
fn until_checked(lines: &mpsc::Receiver<String>) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(900))
            .unwrap_or_else(|e| panic!("{e}: the watcher said {seen:#?}"));
        let done = line.starts_with("watching src/lib.rs");
        seen.push(line);
        if done {
            return seen;
        }
    }
}

#[test]
fn a_save_under_check_watch_is_checked_again_and_its_step_turns_green() {
    let dir = tempfile::tempdir().unwrap();
    let lab = dir.path().join("lab");
    starter::create(&lab, &Worksheet::builtin(), Lang::En).unwrap();
    // The worksheet's step 4 fragment: a lease that has just ended is held.
    let broken = REFERENCE.replacen("if done || until > now {", "if done || until >= now {", 1);
    assert_ne!(broken, REFERENCE);
    std::fs::write(lab.join("src/lib.rs"), &broken).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["check", "--watch", "--step", "4", "--lang", "en"])
        .current_dir(&lab)
        .env("NO_COLOR", "1")
        .env("CARGO_TARGET_DIR", root().join("target"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let first = until_checked(&lines);
    let kill = |mut child: std::process::Child| {
        let _ = child.kill();
        let _ = child.wait();
    };
    if !first
        .iter()
        .any(|l| l.starts_with("first failing: step 4 (claim), "))
    {
        kill(child);
        panic!("{first:#?}");
    }
    // The learner saves the fix: checked again, without being asked.
    std::fs::write(lab.join("src/lib.rs"), REFERENCE).unwrap();
    let second = until_checked(&lines);
    kill(child);
    assert!(
        second.iter().any(|l| l == "✓ step 4 (claim) turned green")
            && second.iter().any(|l| l == "every step passes"),
        "{second:#?}"
    );
    // Announced once: the first check had nothing green to announce.
    assert!(
        !first.iter().any(|l| l.contains("turned green")),
        "{first:#?}"
    );
}
