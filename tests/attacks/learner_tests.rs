//! The reading and reaching attacks, and the hogs, as a learner's tests
//! (`check --mine`, `grade --tests`): the suite is the untrusted side,
//! judged against the reference, the wheats and the instructor's mutants.

use std::path::PathBuf;

use fencelab::judging::{self as mine, Judges, TestsReport};

use crate::common::{eventually_none, processes_named, root};
use crate::{MUTANTS_TEXT, OUT_OF_SPACE, Targets};
use fencelab::bridge::sandbox::{Layers, Need};

/// Judges `source` as the tests of a lab crate (`tests/mine/main.rs`)
/// against `judges`, `jobs` at a time, each test within `timeout`.
fn judge(source: &str, judges: &Judges, jobs: usize, timeout: u64) -> TestsReport {
    let lab = tempfile::tempdir().unwrap();
    let dir = lab.path().join("tests/mine");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        lab.path().join("Cargo.toml"),
        "[package]\nname = \"lab\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("main.rs"), source).unwrap();
    let tests = mine::read(lab.path()).unwrap_or_else(|e| panic!("{e}"));
    let scratch = crate::common::scratch();
    let options = mine::Options {
        jobs,
        timeout: Some(std::time::Duration::from_secs(timeout)),
        build_timeout: None,
        weights: Default::default(),
    };
    mine::judge(
        &tests,
        judges,
        &options,
        &scratch,
        &mut fencelab::output::progress::Silent,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The reading and reaching attacks as a learner's tests (`check --mine`,
/// `grade --tests`): the suite is the untrusted side, judged against the
/// reference, the wheats and the instructor's mutants.
const AS_TESTS: &str = r#"
use lab as lease;

#[test]
fn reads_the_instructors_files() {
    let mut seen = String::new();
    for dir in ["ROOT/mutants", "ROOT/wheats", "ROOT/tests/behaviour", "ROOT/target/fencelab"] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            seen.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    panic!("STOLEN [{seen}]");
}

#[test]
fn reads_other_processes() {
    let mut seen = String::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        for file in ["cmdline", "environ"] {
            let text = std::fs::read(e.path().join(file)).unwrap_or_default();
            seen.push_str(&String::from_utf8_lossy(&text));
        }
    }
    panic!("STOLEN [{seen}]");
}

#[test]
fn reads_the_environment() {
    let seen: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
    panic!("STOLEN [{}]", seen.join(" "));
}

#[test]
fn reaches_out() {
    use std::io::Write;
    use std::net::ToSocketAddrs;
    let tcp = std::net::TcpStream::connect("TCP_ADDR").map(|mut s| s.write_all(b"LEAK"));
    let udp = std::net::UdpSocket::bind("0.0.0.0:0").and_then(|s| s.send_to(b"LEAK", "UDP_ADDR"));
    let dns = "localhost:80".to_socket_addrs().map(|a| a.count());
    let unix = std::os::unix::net::UnixStream::connect("UNIX_PATH").map(|mut s| s.write_all(b"LEAK"));
    panic!("NET tcp={} udp={} dns={} unix={}", tcp.is_ok(), udp.is_ok(), dns.is_ok(), unix.is_ok());
}

#[test]
fn escapes_and_writes_outside() {
    let _ = std::process::Command::new("setsid").args(["env", "-i", "sleep", "306"]).spawn();
    let _ = std::fs::write("/tmp/fencelab-attack-test-tmp", "x");
    let _ = std::fs::write("ROOT/target/fencelab-attack-test-cache", "x");
    let _ = lease::init_db(std::env::temp_dir().join("jobs.db"));
}
"#;

#[test]
fn a_learners_tests_see_only_their_own_trial() {
    let targets = Targets::new();
    let judges = Judges::load(None, None).unwrap();
    let report = judge(
        &targets.fill(AS_TESTS),
        &judges,
        fencelab::engine::runner::default_jobs(),
        10,
    );
    let said = |name: &str| -> String {
        let t = report
            .tests
            .iter()
            .find(|t| t.test.ends_with(name))
            .unwrap();
        t.wrong_on
            .iter()
            .map(|w| w.message.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let all = serde_json::to_string(&report).unwrap();
    for secret in [
        MUTANTS_TEXT,
        "CARGO_",
        "fn holder_extends_a_live_lease",
        "FENCELAB_IMPL",
    ] {
        assert!(!all.contains(secret), "{secret} reached the report");
    }
    assert!(said("reads_the_instructors_files").contains("STOLEN []"));
    assert!(said("reads_other_processes").contains("STOLEN []"));
    // The learner's tests are a judge: they see the system's PATH, never
    // the grader's own (this process's, where it is another).
    let environment = said("reads_the_environment");
    assert!(environment.contains("STOLEN ["));
    assert!(
        environment
            .split([' ', '[', ']'])
            .any(|word| word == "PATH=/usr/local/bin:/usr/bin:/bin"),
        "{environment}"
    );
    let own = std::env::var("PATH").unwrap_or_default();
    if own != "/usr/local/bin:/usr/bin:/bin" {
        assert!(!environment.contains(&own), "{environment}");
    }
    assert!(
        said("reaches_out").contains("NET tcp=false udp=false dns=false unix=false"),
        "{}",
        said("reaches_out")
    );
    assert!(
        targets.tcp.accept().is_err(),
        "a TCP connection got through"
    );
    assert!(
        targets.udp.recv(&mut [0u8; 16]).is_err(),
        "a datagram got through"
    );
    assert!(
        targets.unix.accept().is_err(),
        "the grader's socket was reached"
    );
    assert!(eventually_none(|| processes_named("sleep 306")).is_empty());
    for path in [
        PathBuf::from("/tmp/fencelab-attack-test-tmp"),
        root().join("target/fencelab-attack-test-cache"),
    ] {
        assert!(!path.exists(), "{} was written", path.display());
    }
}

/// A learner's tests that use up their memory or their trial's space, beside
/// a valid one: judged against the reference, one wheat and two mutants.
const HOGS_AS_TESTS: &str = r#"
use lab as lease;

#[test]
fn a_job_is_claimed_renewed_and_completed() {
    let db = std::env::temp_dir().join("jobs.db");
    lease::init_db(&db).unwrap();
    assert!(lease::enqueue(&db, "job").unwrap());
    let fence = lease::claim(&db, "job", "a", 1.0, 10.0).unwrap().unwrap();
    assert!(lease::renew(&db, "job", "a", fence, 2.0, 10.0).unwrap());
    assert!(lease::complete(&db, "job", "a", fence, 3.0, "done").unwrap());
}

#[test]
fn memory_bomb_across_processes() {
    use std::os::unix::process::ExitStatusExt;
    let mut hogs: Vec<std::process::Child> = (0..16)
        .filter_map(|_| {
            std::process::Command::new("dd")
                .args(["if=/dev/zero", "bs=512M", "count=1", "status=none"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .ok()
        })
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut killed = 0;
    while killed == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        killed = hogs
            .iter_mut()
            .filter_map(|h| h.try_wait().ok().flatten())
            .filter(|s| s.signal() == Some(9))
            .count();
    }
    panic!("HOGGED {} killed {killed}", hogs.len());
}

#[test]
fn disk_fill_across_files() {
    use std::io::Write;
    let chunk = vec![7u8; 1 << 20];
    for n in 0..40 {
        let Ok(mut f) = std::fs::File::create(std::env::temp_dir().join(format!("many{n}"))) else { continue };
        for _ in 0..200 {
            if f.write_all(&chunk).is_err() { break; }
        }
    }
}
"#;

#[test]
fn a_learners_tests_that_use_up_memory_or_space_fail_alone() {
    if !Layers::test_needs(&[Need::Memory, Need::Space]) {
        return;
    }
    let mut judges = Judges::load(None, None).unwrap();
    judges.wheats.wheats.truncate(1);
    judges.mutants.truncate(2);
    // The bombs take the CPU of the trials beside them: 30 s each.
    let judge = |source: &str| judge(source, &judges, 4, 30);
    let report = judge(HOGS_AS_TESTS);
    let test = |name: &str| {
        let found = report.tests.iter().find(|t| t.test.ends_with(name));
        found.unwrap_or_else(|| panic!("no {name}: {:?}", report.compile_errors))
    };
    let said = |name: &str| -> String {
        let t = test(name);
        assert!(!t.valid && !t.wrong_on.is_empty(), "{name}: {t:?}");
        t.wrong_on
            .iter()
            .map(|w| w.message.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let memory = said("memory_bomb_across_processes");
    assert!(
        memory.contains("fencelab: the test ran out of memory"),
        "{memory}"
    );
    let disk = said("disk_fill_across_files");
    assert!(
        disk.contains(&format!("fencelab: the test {OUT_OF_SPACE}")),
        "{disk}"
    );
    // The valid test beside them is judged as it is alone.
    let valid = "a_job_is_claimed_renewed_and_completed";
    let alone_source =
        HOGS_AS_TESTS[..HOGS_AS_TESTS.find("#[test]\nfn memory_bomb").unwrap()].to_string();
    let alone = judge(&alone_source);
    let alone = alone
        .tests
        .iter()
        .find(|t| t.test.ends_with(valid))
        .unwrap();
    assert!(test(valid).valid, "{:?}", test(valid));
    assert_eq!(test(valid).catches, alone.catches);
    assert_eq!(test(valid).valid, alone.valid);
    assert!(eventually_none(|| processes_named("dd if=/dev/zero bs=512M")).is_empty());
}
