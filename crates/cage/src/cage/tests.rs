//! The cage against what caged code tries: reads, writes, the network, sockets,
//! /proc, signals to the caller's processes, capabilities.

use super::*;
use crate::testing::run;
use crate::{Layers, Need};
use std::io::Read;
use std::process::Command;

/// Set in the environment of `attacker` when the test below runs it caged.
const ATTACK_ENV: &str = "FENCELAB_SANDBOX_ATTACK";

/// What caged code tries, one line each: `name ok` or `name refused`.
/// A helper, not a test: `--ignored` alone runs it, and it does nothing
/// unless `the_cage_holds_against_reads_network_and_sockets` started it.
#[test]
#[ignore = "run by the_cage_holds_against_reads_network_and_sockets"]
fn attacker() {
    let Ok(targets) = std::env::var(ATTACK_ENV) else {
        return;
    };
    let t: Vec<&str> = targets.split('|').collect();
    let (secret, tcp, udp, socket, outsider) = (t[0], t[1], t[2], t[3], t[4]);
    let report =
        |name: &str, ok: bool| println!("ATTACK {name} {}", if ok { "ok" } else { "refused" });
    report("read-secret", std::fs::read_to_string(secret).is_ok());
    report("read-etc", std::fs::read_to_string("/etc/hostname").is_ok());
    report("list-root", std::fs::read_dir("/").is_ok());
    report("proc", std::fs::read_to_string("/proc/1/cmdline").is_ok());
    report("proc-link", std::fs::read_link("/proc/1/cwd").is_ok());
    report(
        "parent-link",
        std::fs::read_link(format!("/proc/{}/cwd", std::os::unix::process::parent_id())).is_ok(),
    );
    report("current-exe", std::env::current_exe().is_ok());
    report(
        "tcp",
        std::net::TcpStream::connect_timeout(
            &tcp.parse().unwrap(),
            std::time::Duration::from_secs(2),
        )
        .is_ok(),
    );
    let udp_sent = std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.send_to(b"leak", udp))
        .is_ok();
    report("udp", udp_sent);
    report(
        "unix",
        std::os::unix::net::UnixStream::connect(socket).is_ok(),
    );
    report(
        "write-tmp",
        std::fs::write("/tmp/fencelab-cage-probe", "x").is_ok(),
    );
    // Signal 0 only asks whether the process could be signalled.
    let outsider = rustix::process::Pid::from_raw(outsider.parse().unwrap()).unwrap();
    report(
        "signal-outside",
        rustix::process::test_kill_process(outsider).is_ok(),
    );
    // capget: /proc/self/status is refused to caged code.
    let held = rustix::thread::capabilities(None).map(|sets| {
        !(sets.effective.is_empty() && sets.permitted.is_empty() && sets.inheritable.is_empty())
    });
    report("capabilities", held.unwrap_or(true));
    let here = std::env::current_dir().unwrap().join("mine");
    report("write-trial", std::fs::write(here, "x").is_ok());
}

#[test]
fn the_cage_holds_against_reads_network_and_sockets() {
    if !Layers::test_needs(&[Need::Namespaces, Need::Landlock]) {
        return;
    }
    let layers = Layers::probe();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "the other submission").unwrap();
    let socket = outside.path().join("grader.sock");
    let _unix = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let trial = tempfile::tempdir().unwrap();
    let tmp = trial.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let me = std::env::current_exe().unwrap();
    // A process of the caller's, which caged code must not reach.
    let mut outsider = Command::new("sleep").arg("60").spawn().unwrap();
    let cage = Cage::new(&tmp, &me, &[]);
    let mut command = Command::new(&me);
    command
        .args([
            "--exact",
            "cage::tests::attacker",
            "--ignored",
            "--nocapture",
        ])
        .current_dir(&tmp)
        .env(
            ATTACK_ENV,
            format!(
                "{}|{}|{}|{}|{}",
                secret.display(),
                tcp.local_addr().unwrap(),
                udp.local_addr().unwrap(),
                socket.display(),
                outsider.id()
            ),
        );
    let finished = run(command, cage.plan(), None);
    let _ = outsider.kill();
    let _ = outsider.wait();
    let said = |name: &str| {
        finished
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("ATTACK {name} ")))
            .unwrap_or("missing")
            .to_string()
    };
    assert_eq!(said("write-trial"), "ok", "{finished:?}");
    if layers.landlock.is_some() {
        // /proc is there (a test may run its own binary again), but
        // nothing of another process's.
        assert_eq!(said("current-exe"), "ok", "{finished:?}");
    }
    for attack in ["proc-link", "parent-link"] {
        assert_eq!(said(attack), "refused", "{attack}: {finished:?}");
    }
    for attack in [
        "read-secret",
        "read-etc",
        "list-root",
        "proc",
        "write-tmp",
        "unix",
    ] {
        assert_eq!(said(attack), "refused", "{attack}: {finished:?}");
    }
    // No capability, caged as root or not (the attack suite's
    // `untrusted_code_holds_no_capability`, without fencelab above).
    assert_eq!(said("capabilities"), "refused", "{finished:?}");
    if layers.namespaces {
        // A PID namespace: no process outside it can be named.
        assert_eq!(said("signal-outside"), "refused", "{finished:?}");
    }
    if layers.namespaces || layers.landlock >= Some(4) {
        assert_eq!(said("tcp"), "refused", "{finished:?}");
    }
    let mut got = [0u8; 16];
    let received = udp.recv(&mut got).is_ok();
    if layers.namespaces {
        assert!(!received, "a datagram got out");
        assert_eq!(said("udp"), "refused", "{finished:?}");
    }
    let mut leaked = String::new();
    let _ =
        std::fs::File::open("/tmp/fencelab-cage-probe").map(|mut f| f.read_to_string(&mut leaked));
    assert!(leaked.is_empty() || !std::path::Path::new("/tmp/fencelab-cage-probe").exists());
}
