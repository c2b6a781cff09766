//! Builds implementations against the suite: the engine's first half (the
//! runner is the second).
//!
//! One build makes two executables in the scratch workspace: the judge (the
//! behavioural suite compiled against the bridge's proxy, the same for every
//! implementation, so built once and then reused) and a server hosting every
//! implementation of the run as a crate of its own (mutant schemata: one build
//! for the reference and all its mutants, not one per mutant). An
//! implementation that does not compile is reported as unviable with the
//! compiler's messages, and the server is built again without it.
//!
//! Both executables are asked who they are before they are used: the judge
//! prints the build id of its sources and lists its tests, the server the hash of
//! every implementation it hosts. A stale binary cannot pass for a fresh one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::engine::cargo;
pub use crate::engine::policy::Servers;
use crate::engine::process::{self, Limits};
use crate::engine::scratch::{CrateDir, Pin, Scratch, hash_of};
use crate::error::{Error, ErrorKind};
use crate::lab::suite;

/// An implementation of the contract to build.
#[derive(Debug, Clone)]
pub struct Implementation {
    /// The path to show for its file in compiler messages and panics.
    pub shown_path: String,
    /// Its source: a file with the contract's API at its top level.
    pub source: String,
}

/// What became of one implementation.
#[derive(Debug, Clone, PartialEq)]
pub enum Hosting {
    /// Built; `server` serves it under `key`.
    Hosted { key: String, server: PathBuf },
    /// Did not compile; the compiler's messages, with its paths as shown paths.
    Unviable { errors: String },
}

/// The executables of a build, pinned in the scratch workspace for as long as
/// the build is kept (the garbage collector removes nothing of it before).
#[derive(Debug)]
pub struct Build {
    /// The behavioural suite, one libtest binary.
    pub judge: PathBuf,
    /// Per implementation, in the order given.
    pub hosting: Vec<Hosting>,
    pub duration: Duration,
    pub pin: Pin,
}

/// A build that ran out of time and was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut(pub Duration);

/// Dependency lines shared by the scratch crates; the versions are fencelab's
/// own (a unit test checks them against Cargo.toml).
const RUSQLITE: &str = r#"rusqlite = { version = "0.43.0", features = ["bundled"] }"#;
const SERDE: &str = r#"serde = { version = "1.0.229", features = ["derive"] }"#;
const SERDE_JSON: &str = r#"serde_json = "1.0.154""#;
const LIBC: &str = r#"libc = "0.2.191""#;
const TEMPFILE: &str = r#"tempfile = "3.27.0""#;

/// The name of the judge's test that prints its build id.
const BUILD_ID_TEST: &str = "fencelab_build_id";
const BUILD_ID_PREFIX: &str = "fencelab-build-id: ";

fn manifest(name: &str, extra: &str, dependencies: &[String]) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n{extra}\n\
         [dependencies]\n{}\n",
        dependencies.join("\n")
    )
}

fn path_dependency(krate: &CrateDir) -> String {
    format!("{} = {{ path = \"../{}\" }}", krate.name, krate.name)
}

/// The bridge crate: protocol, client, server and proxy, as fencelab compiles them.
fn write_bridge(scratch: &Scratch) -> Result<CrateDir, Error> {
    let deps = [RUSQLITE, SERDE, SERDE_JSON, LIBC].map(String::from);
    let files = vec![
        ("Cargo.toml".to_string(), manifest("bridge-NAME", "", &deps)),
        (
            "src/lib.rs".to_string(),
            include_str!("../bridge/mod.rs").to_string(),
        ),
        (
            "src/client.rs".to_string(),
            include_str!("../bridge/client.rs").to_string(),
        ),
        (
            "src/protocol.rs".to_string(),
            include_str!("../bridge/protocol.rs").to_string(),
        ),
        (
            "src/server.rs".to_string(),
            include_str!("../bridge/server.rs").to_string(),
        ),
        (
            "src/sandbox.rs".to_string(),
            include_str!("../bridge/sandbox.rs").to_string(),
        ),
        (
            "src/proxy.rs".to_string(),
            include_str!("../bridge/proxy.rs").to_string(),
        ),
    ];
    scratch.write_crate("bridge", &files)
}

/// The judge crate: the suite, bound to the bridge's proxy.
fn write_judge(scratch: &Scratch, bridge: &CrateDir) -> Result<(CrateDir, String), Error> {
    let sources = suite::MODULES.iter().flat_map(|(p, c)| [*p, *c]);
    let build_id = hash_of(sources.chain([bridge.name.as_str()]));
    let mut root = suite::root_with(&format!("use {}::proxy as lease;", bridge.ident()));
    root.push_str(&format!(
        "\n/// Prints the id of the sources this judge was built from (run by fencelab).\n\
         #[test]\n#[ignore]\nfn {BUILD_ID_TEST}() {{\n    println!(\"{BUILD_ID_PREFIX}{build_id}\");\n}}\n"
    ));
    let deps = vec![
        path_dependency(bridge),
        RUSQLITE.to_string(),
        TEMPFILE.to_string(),
    ];
    let mut files = vec![
        ("Cargo.toml".to_string(), manifest("judge-NAME", "", &deps)),
        (
            "src/lib.rs".to_string(),
            "//! The judge's tests are in tests/.\n".to_string(),
        ),
        ("tests/behaviour.rs".to_string(), root),
    ];
    for (path, contents) in suite::MODULES {
        files.push((format!("tests/{path}"), contents.to_string()));
    }
    Ok((scratch.write_crate("judge", &files)?, build_id))
}

/// An implementation crate: its file verbatim as the crate root (so that any
/// line number in a message is the file's own), with the bridge's dispatch
/// appended as a hidden module.
fn write_implementation(
    scratch: &Scratch,
    bridge: &CrateDir,
    source: &str,
) -> Result<CrateDir, Error> {
    let mut lib = source.to_string();
    if !lib.ends_with('\n') {
        lib.push('\n');
    }
    lib.push_str(&format!(
        "\n#[doc(hidden)]\n#[allow(missing_docs, unused, clippy::all)]\npub mod __fencelab_bridge {{\n    \
         extern crate {} as bridge;\n    include!(\"fencelab_dispatch.rs\");\n}}\n",
        bridge.ident()
    ));
    let deps = vec![path_dependency(bridge), RUSQLITE.to_string()];
    let files = vec![
        ("Cargo.toml".to_string(), manifest("impl-NAME", "", &deps)),
        ("src/lib.rs".to_string(), lib),
        (
            "src/fencelab_dispatch.rs".to_string(),
            include_str!("../bridge/dispatch.rs").to_string(),
        ),
    ];
    scratch.write_crate("impl", &files)
}

/// The server crate hosting `hosted` (crate, shown path; a crate once), and
/// its build id.
fn write_server(
    scratch: &Scratch,
    bridge: &CrateDir,
    hosted: &[(CrateDir, String)],
) -> Result<(CrateDir, String), Error> {
    let build_id = hash_of(
        hosted
            .iter()
            .flat_map(|(c, shown)| [c.name.as_str(), shown.as_str()]),
    );
    let bridge_ident = bridge.ident();
    let entries: Vec<String> = hosted
        .iter()
        .map(|(krate, shown)| {
            format!(
                "        {bridge_ident}::server::Hosted {{\n            key: {key:?},\n            \
                 compiled_path: \"crates/{key}/src/lib.rs\",\n            shown_path: {shown:?},\n            \
                 dispatch: {ident}::__fencelab_bridge::dispatch,\n        }},",
                key = krate.name,
                ident = krate.ident(),
            )
        })
        .collect();
    let main = format!(
        "//! The server hosting this run's implementations (written by fencelab).\n\n\
         fn main() {{\n    {bridge_ident}::server::main(\n        {build_id:?},\n        &[\n{}\n        ],\n    )\n}}\n",
        entries.join("\n")
    );
    let mut deps = vec![path_dependency(bridge)];
    deps.extend(hosted.iter().map(|(krate, _)| path_dependency(krate)));
    let files = vec![
        ("Cargo.toml".to_string(), manifest("server-NAME", "", &deps)),
        ("src/main.rs".to_string(), main),
    ];
    Ok((scratch.write_crate("server", &files)?, build_id))
}

/// A server to build: its crate, its build id, and the implementations (by
/// index) it hosts.
struct ServerPlan {
    krate: CrateDir,
    id: String,
    hosts: Vec<usize>,
}

/// Builds the judge and servers for `implementations`, within `time_limit`.
pub fn build(
    scratch: &Scratch,
    implementations: &[Implementation],
    time_limit: Option<Duration>,
    servers: Servers,
) -> Result<Result<Build, TimedOut>, Error> {
    let start = Instant::now();
    // Under the lock from the first file written: another run's garbage
    // collector cannot remove a crate between its writing and its build.
    let lock = scratch.lock()?;
    let bridge = write_bridge(scratch)?;
    let (judge, judge_id) = write_judge(scratch, &bridge)?;
    let crates: Vec<CrateDir> = implementations
        .iter()
        .map(|i| write_implementation(scratch, &bridge, &i.source))
        .collect::<Result<_, _>>()?;
    let mut viable: Vec<usize> = (0..implementations.len()).collect();
    // Compiler messages by crate (identical sources share a crate).
    let mut unviable: BTreeMap<String, String> = BTreeMap::new();
    let (judge_exe, plans, server_exes, pin) = loop {
        let groups: Vec<Vec<usize>> = match servers {
            Servers::Shared if viable.is_empty() => Vec::new(),
            Servers::Shared => vec![viable.clone()],
            Servers::Separate => viable.iter().map(|&i| vec![i]).collect(),
        };
        let mut plans = Vec::new();
        for hosts in groups {
            let mut hosted: Vec<(CrateDir, String)> = Vec::new();
            for &i in &hosts {
                if !hosted.iter().any(|(c, _)| *c == crates[i]) {
                    hosted.push((crates[i].clone(), implementations[i].shown_path.clone()));
                }
            }
            let (krate, id) = write_server(scratch, &bridge, &hosted)?;
            plans.push(ServerPlan { krate, id, hosts });
        }
        let mut roots: Vec<&CrateDir> = vec![&judge];
        roots.extend(plans.iter().map(|p| &p.krate));
        let mut members = roots.clone();
        members.push(&bridge);
        for &i in &viable {
            if !members.contains(&&crates[i]) {
                members.push(&crates[i]);
            }
        }
        scratch.set_members(&lock, &members)?;
        scratch.touch(&members);
        let built = cargo::build(scratch, &roots, time_limit)?;
        if built.timed_out {
            return Ok(Err(TimedOut(time_limit.unwrap_or_default())));
        }
        let failed: Vec<usize> = viable
            .iter()
            .copied()
            .filter(|&i| built.errors.contains_key(&crates[i].name))
            .collect();
        if !failed.is_empty() {
            for &i in &failed {
                unviable.insert(
                    crates[i].name.clone(),
                    built.errors[&crates[i].name].join("\n"),
                );
            }
            viable.retain(|i| !failed.contains(i));
            continue;
        }
        if !built.success {
            return Err(build_failure(&built));
        }
        let executable = |krate: &CrateDir, target: &str| {
            built
                .executables
                .get(&(krate.name.clone(), target.to_string()))
                .cloned()
        };
        let Some(judge_exe) = executable(&judge, "behaviour") else {
            return Err(build_failure(&built));
        };
        let server_exes: Vec<PathBuf> = plans
            .iter()
            .map(|p| executable(&p.krate, &p.krate.name).ok_or_else(|| build_failure(&built)))
            .collect::<Result<_, _>>()?;
        let pin = scratch.pin(&lock, &members)?;
        break (judge_exe, plans, server_exes, pin);
    };
    drop(lock);
    check_judge(&judge_exe, &judge_id)?;
    for (plan, exe) in plans.iter().zip(&server_exes) {
        let mut keys: Vec<String> = plan.hosts.iter().map(|&i| crates[i].name.clone()).collect();
        keys.dedup();
        match check_server(exe, &plan.id, &keys) {
            Ok(()) => {}
            // fencelab could not even start its own program: never the
            // implementation's fault.
            Err(ServerProblem::CannotRun(err)) => return Err(err),
            // Untrusted code runs before main: its server is its own failure.
            Err(ServerProblem::Misbehaved(problem)) if servers == Servers::Separate => {
                for &i in &plan.hosts {
                    unviable.insert(
                        crates[i].name.clone(),
                        format!("its program did not start: {problem}"),
                    );
                }
            }
            Err(ServerProblem::Misbehaved(problem)) => return Err(Error::internal(problem)),
        }
    }
    let hosting = (0..implementations.len())
        .map(|i| match unviable.get(&crates[i].name) {
            Some(errors) => Hosting::Unviable {
                errors: errors
                    .replace(
                        &format!("crates/{}/src/lib.rs", crates[i].name),
                        &implementations[i].shown_path,
                    )
                    .replace(
                        &format!("crates/{}/src/fencelab_dispatch.rs", crates[i].name),
                        "<fencelab's calls of the contract's API>",
                    ),
            },
            None => {
                let (plan, exe) = plans
                    .iter()
                    .zip(&server_exes)
                    .find(|(p, _)| p.hosts.contains(&i))
                    .expect("every viable implementation has a server");
                let _ = plan;
                Hosting::Hosted {
                    key: crates[i].name.clone(),
                    server: exe.clone(),
                }
            }
        })
        .collect();
    Ok(Ok(Build {
        judge: judge_exe,
        hosting,
        duration: start.elapsed(),
        pin,
    }))
}

/// A failed build that is not an implementation's fault.
fn build_failure(built: &cargo::Built) -> Error {
    let errors: Vec<&String> = built.errors.values().flatten().collect();
    let detail = if errors.is_empty() {
        built
            .stderr
            .lines()
            .filter(|l| l.contains("error"))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        errors
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let offline = built.stderr.contains("offline") || built.stderr.contains("no matching package");
    let next = if offline {
        "fetch fencelab's dependencies once with `cargo fetch` in the fencelab project, then run again"
    } else {
        "this is a bug in fencelab or a broken toolchain: run `cargo build` in the fencelab project to see"
    };
    Error::new(
        ErrorKind::Environment,
        format!("the scratch build failed:\n{}", detail.trim()),
    )
    .with_next(next)
}

/// Runs `exe` with `args` (at most 30 s, in a process group of its own, in
/// the implementation's cage when `caged`: a server runs submissions'
/// constructors even to say who it is) and returns its stdout.
fn ask(exe: &Path, args: &[&str], caged: bool) -> Result<String, Asked> {
    let dir = tempfile::tempdir().map_err(|e| {
        Asked::CannotRun(Error::io("create a directory in", &std::env::temp_dir(), e))
    })?;
    let cage = caged.then(|| crate::bridge::sandbox::Cage::new(dir.path()));
    let mut command = Command::new(exe);
    command
        .args(args)
        .current_dir(dir.path())
        .env_clear()
        .env("RUST_BACKTRACE", "0");
    let limits = Limits {
        time: Some(Duration::from_secs(30)),
        output_cap: 1024 * 1024,
        file_size: Some(1024 * 1024),
        cage: cage.as_ref().map(|c| c.ruleset_fd()),
    };
    let finished = process::run(command, dir.path(), &limits).map_err(|e| {
        Asked::CannotRun(
            Error::environment(format!("cannot run {}: {e}", exe.display())).with_next(
                "run again (fencelab builds again what is missing); if it happens again, \
                 report it with the command you ran",
            ),
        )
    })?;
    if finished.timed_out() {
        return Err(Asked::TimedOut);
    }
    Ok(finished.stdout)
}

/// Why a program fencelab built did not say who it is.
enum Asked {
    /// It could not be started at all (a missing or broken file).
    CannotRun(Error),
    /// It did not answer within the limit.
    TimedOut,
}

/// Why a server cannot be used.
enum ServerProblem {
    /// fencelab cannot start it: fencelab's failure.
    CannotRun(Error),
    /// It started and did not identify itself as this build: with untrusted
    /// implementations, the fault of the code that runs before `main`.
    Misbehaved(String),
}

/// The judge must report the build id of the sources just written, and list
/// exactly the suite's tests.
fn check_judge(exe: &Path, expected: &str) -> Result<(), Error> {
    let ask = |args: &[&str]| {
        ask(exe, args, false).map_err(|asked| match asked {
            Asked::CannotRun(err) => err,
            Asked::TimedOut => Error::internal(format!(
                "the judge {} did not say who it is within 30 s",
                exe.display()
            )),
        })
    };
    let printed = ask(&[
        "--exact",
        BUILD_ID_TEST,
        "--ignored",
        "--nocapture",
        "--test-threads",
        "1",
    ])?;
    let id = printed
        .lines()
        .find_map(|l| l.split_once(BUILD_ID_PREFIX).map(|(_, id)| id.trim()));
    if id != Some(expected) {
        return Err(Error::internal(format!(
            "the judge at {} was built from other sources (build id {id:?}, expected {expected:?})",
            exe.display()
        )));
    }
    let listed: BTreeSet<String> = ask(&["--list"])?
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .filter(|name| *name != BUILD_ID_TEST)
        .map(String::from)
        .collect();
    let mut expected_tests = suite::test_names();
    expected_tests.extend(suite::helper_names());
    if listed != expected_tests {
        return Err(Error::internal(format!(
            "the judge lists other tests than the suite: {:?}",
            listed
                .symmetric_difference(&expected_tests)
                .collect::<Vec<_>>()
        )));
    }
    Ok(())
}

#[derive(serde::Deserialize)]
struct Identity {
    build: String,
    impls: Vec<HostedIdentity>,
}

#[derive(serde::Deserialize)]
struct HostedIdentity {
    key: String,
}

/// The server must report the build id of this run and host exactly `keys`;
/// otherwise, what went wrong.
fn check_server(exe: &Path, expected: &str, keys: &[String]) -> Result<(), ServerProblem> {
    let printed = match ask(exe, &["--identify"], true) {
        Ok(printed) => printed,
        Err(Asked::TimedOut) => {
            return Err(ServerProblem::Misbehaved(
                "code that runs before main (a constructor, say) did not finish within 30 s"
                    .to_string(),
            ));
        }
        Err(Asked::CannotRun(err)) => return Err(ServerProblem::CannotRun(err)),
    };
    let identity: Identity = serde_json::from_str(printed.trim()).map_err(|e| {
        ServerProblem::Misbehaved(format!(
            "it ended before it could say what it hosts ({e}); it printed {:?}",
            printed.trim()
        ))
    })?;
    let hosted: Vec<String> = identity.impls.into_iter().map(|i| i.key).collect();
    if identity.build != expected || hosted != keys {
        return Err(ServerProblem::Misbehaved(format!(
            "it says it was built for other implementations (build {}, expected {expected})",
            identity.build
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_cannot_be_run_is_fencelabs_failure_not_the_implementations() {
        let missing = Path::new("/nonexistent/fencelab/server-0000000000000000");
        match check_server(missing, "build", &[]) {
            Err(ServerProblem::CannotRun(err)) => {
                assert_eq!(err.exit_code(), crate::error::EXIT_TOOL_FAILED);
                assert!(err.message.contains("cannot run"), "{}", err.message);
            }
            Err(ServerProblem::Misbehaved(p)) => panic!("blamed on the implementation: {p}"),
            Ok(()) => panic!("a missing server cannot identify itself"),
        }
    }

    #[test]
    fn scratch_dependencies_are_fencelabs_own() {
        let manifest: toml::Table = toml::from_str(include_str!("../../Cargo.toml")).unwrap();
        let deps = manifest["dependencies"].as_table().unwrap();
        for line in [RUSQLITE, SERDE, SERDE_JSON, LIBC, TEMPFILE] {
            let ours: toml::Table = toml::from_str(line).unwrap();
            let (name, spec) = ours.iter().next().unwrap();
            let version = |v: &toml::Value| match v {
                toml::Value::String(s) => s.clone(),
                other => other["version"].as_str().unwrap().to_string(),
            };
            assert_eq!(version(spec), version(&deps[name]), "{name}");
        }
    }
}
