//! A trial's space: one tmpfs for every process of the trial, bounded in total.

use super::*;
use crate::testing::{Entry, caged_in, entering};
use crate::{Cage, Layers, Need};
use std::process::Command;

#[test]
fn a_trials_space_is_one_tmpfs_for_all_its_processes_and_bounded_in_total() {
    if !Layers::test_needs(&[Need::Namespaces, Need::Space]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let space = Space::for_trial(&tmp, None).unwrap().unwrap();
    // A process of the trial, uncaged (a judge), writes a file; the
    // cage sees it and writes beside it; outside, the directory is empty.
    let mut judge = Command::new("sh");
    judge.args(["-c", "echo from-judge > given; pwd"]);
    entering(&mut judge, Some(space.join()), Entry::Nothing);
    let out = judge.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        tmp.display().to_string()
    );
    let done = caged_in(
        dir.path(),
        "cat given && echo from-cage > mine",
        None,
        Some(&space),
    );
    // The lighter cage of fencelab's own servers writes there too.
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    let trusted = Cage::trusted(&tmp, &sh).within(Some(&space));
    let mut server = Command::new(&sh);
    server.args(["-c", "cat mine && echo from-server > theirs"]);
    entering(
        &mut server,
        Some(space.join()),
        Entry::Cage(trusted.plan(), None),
    );
    let out = server.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "from-cage");
    assert_eq!(done.stdout.trim(), "from-judge", "{done:?}");
    assert!(
        std::fs::read_dir(&tmp).unwrap().next().is_none(),
        "seen outside"
    );
    assert!(!space.used_up());
    // Files of 200 MiB each, below the limit of a file, until refused.
    let fill = "n=0; while [ $n -lt 8 ]; do \
                head -c 209715200 /dev/zero > f$n || { echo refused $n; exit 3; }; \
                n=$((n+1)); done";
    let filled = caged_in(dir.path(), fill, None, Some(&space));
    assert!(filled.stdout.contains("refused 2"), "{filled:?}");
    assert!(space.used_up(), "{filled:?}");
    drop(space);
}
