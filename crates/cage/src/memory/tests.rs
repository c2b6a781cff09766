//! The memory cgroup: every process of a cage in it, its OOM kills counted,
//! and what a killed run left swept.

use super::*;
use crate::testing::{caged_in, started};
use crate::{Cage, Layers, Need, kill_cage};
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn every_process_of_a_cage_is_in_its_memory_cgroup_which_goes_with_it() {
    if !Layers::test_needs(&[Need::Namespaces, Need::Memory]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    let memory = Memory::for_cage().unwrap().unwrap();
    let limit = if memory.v2 {
        "memory.max"
    } else {
        "memory.limit_in_bytes"
    };
    let set = std::fs::read_to_string(memory.path().join(limit)).unwrap();
    assert_eq!(set.trim(), MEMORY.to_string());
    let cage = Cage::new(dir.path(), &sh, &[]).bounded(Some(&memory));
    let mut child = started(&cage, &sh, "sleep 641 & echo started; exec sleep 642");
    // The watcher, the init, the program and what it started: all in it.
    let watcher = child.id();
    assert!(memory.holds(watcher), "the watcher is not in its cgroup");
    let procs = std::fs::read_to_string(memory.path().join("cgroup.procs")).unwrap();
    assert_eq!(procs.lines().count(), 4, "{procs}");
    assert!(!memory.ran_out());
    kill_cage(watcher as libc::pid_t);
    child.wait().unwrap();
    let path = memory.path().to_path_buf();
    drop(memory);
    assert!(!path.exists(), "{} was left behind", path.display());
}

#[test]
fn what_a_killed_fencelab_left_is_swept_and_nothing_else() {
    if !Layers::test_needs(&[Need::Memory]) {
        return;
    }
    let (parent, _) = own_memory_cgroup().expect("a memory cgroup, as probed");
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let stale = parent.join(format!("fencelab-{dead}-7"));
    let live = parent.join(format!("fencelab-{}-999999", std::process::id()));
    std::fs::create_dir(&stale).unwrap();
    std::fs::create_dir(&live).unwrap();
    sweep(&parent);
    let (stale_left, live_left) = (stale.exists(), live.exists());
    let _ = std::fs::remove_dir(&stale);
    std::fs::remove_dir(&live).unwrap();
    assert!(!stale_left, "{} was left", stale.display());
    assert!(live_left, "a live process's cgroup was removed");
}

#[test]
fn a_memory_bomb_across_processes_is_killed_in_its_cgroup_and_says_so() {
    if !Layers::test_needs(&[Need::Namespaces, Need::Memory]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::for_cage().unwrap().unwrap();
    // Eight processes of 256 MiB each, each within its address space:
    // twice the cage's memory.
    let bomb = "import time; b = bytearray(256 << 20); time.sleep(20)";
    let script =
        format!("for n in 1 2 3 4 5 6 7 8; do python3 -c '{bomb}' & done; wait; echo survived");
    let start = Instant::now();
    let done = caged_in(dir.path(), &script, Some(&memory), None);
    assert!(memory.ran_out(), "{done:?}");
    assert!(start.elapsed() < Duration::from_secs(40), "{done:?}");
    let path = memory.path().to_path_buf();
    drop(memory);
    assert!(!path.exists());
    // A cage without one is not said to have run out.
    let other = Memory::for_cage().unwrap().unwrap();
    let fine = caged_in(dir.path(), "echo fine", Some(&other), None);
    assert!(fine.success() && !other.ran_out(), "{fine:?}");
}

#[test]
fn the_memory_cgroup_is_found_in_v1_and_in_delegated_v2() {
    let mounts = "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                  31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
    let memory = |k: &str, o: &str| k == "cgroup" && o.split(',').any(|o| o == "memory");
    assert_eq!(
        cgroup_dir(mounts, memory, "/a/b"),
        Some(PathBuf::from("/sys/fs/cgroup/memory/a/b"))
    );
    // A container's view: the mount's root is its own cgroup.
    let inside = "30 25 0:26 /a /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
    assert_eq!(
        cgroup_dir(inside, memory, "/a/b"),
        Some(PathBuf::from("/sys/fs/cgroup/memory/b"))
    );
    assert_eq!(
        cgroup_dir(mounts, |k, _| k == "cgroup2", "/user.slice"),
        Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice"))
    );
    assert_eq!(cgroup_dir(mounts, |k, _| k == "nothing", "/"), None);
}
