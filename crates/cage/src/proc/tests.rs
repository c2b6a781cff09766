use super::*;

/// A stat line as the kernel writes it, the name given.
fn line(name: &[u8]) -> Vec<u8> {
    let after: Vec<String> = (4..=52).map(|n| n.to_string()).collect();
    [
        b"42 (".as_slice(),
        name,
        b") S ",
        after.join(" ").as_bytes(),
        b"\n",
    ]
    .concat()
}

#[test]
fn a_stat_reads_the_same_whatever_its_name_holds() {
    let expected = Stat {
        name: Vec::new(),
        state: 'S',
        ppid: 4,
        pgrp: 5,
        times: [14, 15, 16, 17],
        started: 22,
        arguments: (48, 49),
        environment: (50, 51),
    };
    for name in [
        &b"sh"[..],
        b"a) R 1 2 (b",
        b"))",
        b"with spaces  and\nnewline",
        b"\xff\xfe not utf-8",
        b"",
    ] {
        assert_eq!(
            Stat::parse(&line(name)),
            Some(Stat {
                name: name.to_vec(),
                ..expected.clone()
            }),
            "{name:?}"
        );
    }
}

#[test]
fn a_stat_cut_short_or_hostile_is_none_and_never_a_panic() {
    let whole = line(b"x");
    for cut in 0..whole.len() {
        // Cut before field 22 it is none; after, the places read as zero.
        let parsed = Stat::parse(&whole[..cut]);
        let field_22 = whole.windows(4).position(|w| w == b" 22 ").unwrap();
        assert_eq!(parsed.is_some(), cut > field_22 + 1, "cut at {cut}");
    }
    for hostile in [&b"42 x S 4 5"[..], b")", b"1 (a) S -1 5", b"\xff)\xff"] {
        assert_eq!(Stat::parse(hostile), None, "{hostile:?}");
    }
    // A place too large for this machine reads as none (zero).
    let huge = String::from_utf8(line(b"x"))
        .unwrap()
        .replace(" 48 ", " 99999999999999999999 ");
    assert_eq!(Stat::parse(huge.as_bytes()).unwrap().arguments, (0, 49));
}

#[test]
fn this_process_and_its_child_read_as_they_are() {
    let own = own_stat().expect("own stat");
    assert!(own.live());
    assert_eq!(
        own.ppid,
        rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get())
    );
    let pid = std::process::id() as libc::pid_t;
    assert_eq!(stat(pid).map(|s| s.pgrp), Some(own.pgrp));
    let status = status(pid).expect("own status");
    assert_eq!(status.field("Pid"), Some(pid.to_string().as_str()));
    assert_eq!(status.field("Pi"), None, "a name is whole");
    assert!(pids().contains(&pid));

    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .env("FENCELAB_PROC_TEST", "here")
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    let child_pid = child.id() as libc::pid_t;
    // The child's environment is its own once it has executed `sleep`.
    let environ = (0..500)
        .map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            environ(child_pid).unwrap_or_default()
        })
        .find(|vars| vars.iter().any(|v| v == b"FENCELAB_PROC_TEST=here"));
    let seen_children = children(pid);
    let seen_cwd = cwd(child_pid);
    let seen_ppid = stat(child_pid).map(|s| s.ppid);
    let child_threads = threads(child_pid);
    let thread = thread_stat(child_pid, child_pid);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(environ.is_some(), "the child's environment");
    assert!(seen_children.contains(&child_pid), "{seen_children:?}");
    assert_eq!(
        seen_cwd.as_deref(),
        Some(dir.path().canonicalize().unwrap().as_path())
    );
    assert_eq!(seen_ppid, Some(pid));
    assert_eq!(child_threads, [child_pid], "sleep has one thread");
    assert_eq!(thread.map(|s| s.ppid), Some(pid));
    // This thread has run, and the clock only goes forward.
    let me = rustix::thread::gettid().as_raw_nonzero().get();
    let (ran, queued) = thread_run_time(pid, me).expect("its schedstat");
    let (later, queued_later) = thread_run_time(pid, me).unwrap();
    assert!(later >= ran && ran > 0 && queued_later >= queued);
    assert!(threads(pid).contains(&me));
}

#[test]
fn a_read_is_capped_and_a_link_at_its_end_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(CAP + 10).unwrap();
    assert_eq!(read(&big).map(|b| b.len() as u64), Some(CAP));
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&big, &link).unwrap();
    assert_eq!(read(&link), None);
    assert_eq!(read(dir.path().join("none")), None);
}

#[test]
fn this_processs_descriptors_and_namespaces_are_found() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("open");
    let file = std::fs::File::create(&path).unwrap();
    let open = own_descriptors();
    let path = path.canonicalize().unwrap();
    assert!(open.contains(&(file.as_raw_fd(), path)), "{open:?}");
    // The listing's own descriptor is closed by the time its links are read.
    assert!(!open.iter().any(|(_, p)| p.ends_with("fd")), "{open:?}");
    let net = own_namespace("net").unwrap();
    use std::os::unix::fs::MetadataExt;
    let seen = std::fs::metadata("/proc/self/ns/net").unwrap();
    assert_eq!(net.metadata().unwrap().ino(), seen.ino());
    assert!(own_namespace("none").is_err());
}
