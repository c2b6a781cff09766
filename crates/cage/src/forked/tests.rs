//! A server that goes on with the watcher's memory: the watcher's fork, under
//! an init that shares that memory.

use crate::testing::{Entry, live, output_entering};
use crate::{Cage, Layers, Need};
use std::os::fd::AsRawFd;

/// A server's cage whose program is not executed from it (a Python
/// server forked per trial goes on as it is: here `std` executes `sh`
/// after it) is `start_forked`'s: the program is the watcher's fork,
/// process 2 (its parent, the watcher, outside: 0), in the trial's
/// directory, its end the watcher's; the init, which shares the
/// watcher's memory, reaps the orphans of the namespace while the
/// program runs, and takes what is left with it when the program ends.
/// Fails where the program is not in the new root's trial directory,
/// where orphans stay zombies, or where the watcher misreports.
#[test]
fn a_server_that_goes_on_as_it_is_is_the_watchers_fork_under_an_init_sharing_its_memory() {
    use std::os::unix::process::ExitStatusExt;
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let sh = &std::fs::canonicalize("/bin/sh").unwrap();
    let listener = std::os::unix::net::UnixListener::bind(tmp.join("s")).unwrap();
    let serve = |script: &str| {
        let cage = Cage::new(&tmp, sh, &[]);
        let entry = Entry::Serving(listener.as_raw_fd(), cage.plan());
        let output = output_entering(sh, script, "/".as_ref(), entry).unwrap();
        drop(cage);
        output
    };
    let done = serve("echo $$ $PPID $(pwd) $(stat -c %d:%i /); exit 7");
    let said = String::from_utf8_lossy(&done.stdout);
    // Its root the cage's (the init's pivot moved the watcher's, which
    // it inherits), not the machine's.
    use std::os::unix::fs::MetadataExt;
    let machine = std::fs::metadata("/").unwrap();
    let machines = format!("{}:{}", machine.dev(), machine.ino());
    let words: Vec<&str> = said.split_whitespace().collect();
    assert_eq!(words[..3], ["2", "0", tmp.to_str().unwrap()], "{done:?}");
    assert!(words.len() == 4 && words[3] != machines, "{done:?}");
    assert_eq!(done.status.code(), Some(7), "{done:?}");
    let killed = serve("kill -SEGV $$");
    assert_eq!(killed.status.signal(), Some(libc::SIGSEGV), "{killed:?}");
    // Orphans that end are reaped while the program runs: gone from
    // /proc, where a zombie stays until its parent reaps it.
    let reaped = serve(
        "[ -r /proc/1/status ] || exit 9; (true & echo $! > p1); (true & echo $! > p2); \
         there() { [ -e /proc/$(cat p1) ] || [ -e /proc/$(cat p2) ]; }; i=0; \
         while there && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; \
         if there; then echo zombies; else echo reaped; fi",
    );
    assert_eq!(
        String::from_utf8_lossy(&reaped.stdout),
        "reaped\n",
        "{reaped:?}"
    );
    // What it left running ends with it.
    let left = serve("(sleep 667 &); echo started");
    assert_eq!(
        String::from_utf8_lossy(&left.stdout),
        "started\n",
        "{left:?}"
    );
    assert_eq!(left.status.code(), Some(0), "{left:?}");
    assert!(live("sleep 667").is_empty(), "{:?}", live("sleep 667"));
}
