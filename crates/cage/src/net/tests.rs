//! The trials of one implementation share a closed network and reach nothing
//! of each other's; another implementation's trials have one of their own.

use super::*;
use crate::testing::{Entry, entering};
use crate::{Cage, Layers, Need, Space, kill_cage};
use std::io::BufRead;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Command, Stdio};

/// What a caged Python program sees of the network: whether it can bind
/// UDP port 47011 (`inuse` when another process of its network holds
/// it), send to it, connect to the abstract socket `@fencelab-net`,
/// and which interfaces are up.
const PROBE: &str = r#"
import socket, errno, fcntl, struct
r = []
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.bind(("0.0.0.0", 47011)); r.append("bound")
except OSError as e:
    r.append("inuse" if e.errno == errno.EADDRINUSE else "bind%d" % e.errno)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 47011)); r.append("sent")
except OSError:
    r.append("unsent")
a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    a.connect("\0fencelab-net"); r.append("connected")
except OSError:
    r.append("refused")
up = []
for _, name in socket.if_nameindex():
    got = fcntl.ioctl(u.fileno(), 0x8913, struct.pack("256s", name.encode()))
    if struct.unpack("H", got[16:18])[0] & 1:
        up.append(name)
r.append("up=" + ",".join(up))
print(" ".join(r), flush=True)
"#;

/// The other trial: holds UDP port 47011 and the abstract socket
/// `@fencelab-net`, says so, and waits.
const HOLDER: &str = r#"
import socket, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("0.0.0.0", 47011))
a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); a.bind("\0fencelab-net"); a.listen(1)
print("holding", flush=True)
time.sleep(60)
"#;

/// `python` run caged in `space` (a trial's, in `tmp`): the child, once
/// it has printed its first line, and that line.
fn caged_python(tmp: &Path, space: &Space, python: &str) -> (std::process::Child, String) {
    let py = std::fs::canonicalize("/usr/bin/python3").unwrap();
    let cage = Cage::new(tmp, &py, &[]).within(Some(space));
    let (plan, join) = (cage.plan(), space.join());
    let mut command = Command::new(&py);
    command
        .args(["-c", python])
        .current_dir(tmp)
        .env_clear()
        .stdout(Stdio::piped());
    entering(&mut command, Some(join), Entry::Cage(plan, None));
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line.trim().to_string())
}

#[test]
fn the_trials_of_one_net_share_it_and_reach_nothing_of_each_others() {
    if !Layers::test_needs(&[Need::Namespaces, Need::Space, Need::Landlock6]) {
        return;
    }
    let net = Net::for_trials().unwrap().unwrap();
    let other_net = Net::for_trials().unwrap().unwrap();
    let trial = |net: &Net| {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let space = Space::for_trial(&tmp, Some(net)).unwrap().unwrap();
        (dir, tmp, space)
    };
    let (_a, tmp_a, space_a) = trial(&net);
    let (mut holder, said) = caged_python(&tmp_a, &space_a, HOLDER);
    assert_eq!(said, "holding");
    // Another trial of the same implementation: in the same network
    // (the port is taken: with a network of its own, it would bind it),
    // and still it reaches nothing: no interface is up, and Landlock
    // keeps the holder's abstract socket out of its reach.
    let (_b, tmp_b, space_b) = trial(&net);
    let (mut probe, seen) = caged_python(&tmp_b, &space_b, PROBE);
    probe.wait().unwrap();
    // Another implementation's trial: a network of its own.
    let (_c, tmp_c, space_c) = trial(&other_net);
    let (mut other, elsewhere) = caged_python(&tmp_c, &space_c, PROBE);
    other.wait().unwrap();
    kill_cage(holder.id() as libc::pid_t);
    holder.wait().unwrap();
    assert_eq!(seen, "inuse unsent refused up=");
    assert_eq!(elsewhere, "bound unsent refused up=");
}

#[test]
fn a_net_is_closed_and_the_machines_network_is_not() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: joining a network from a thread needs root");
        return;
    }
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    assert!(
        !closed_network(),
        "this test's own network is the machine's"
    );
    let net = Net::for_trials().unwrap().unwrap();
    // A thread of its own joins it (a network namespace is a thread's).
    let inside = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};
                move_into_link_name_space(net.net.as_fd(), Some(LinkNameSpaceType::Network))
                    .unwrap();
                closed_network()
            })
            .join()
            .unwrap()
    });
    assert!(inside, "a Net has no interface up");
}
