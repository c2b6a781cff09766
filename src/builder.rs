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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::cargo;
use crate::error::{Error, ErrorKind};
use crate::scratch::{CrateDir, Scratch, hash_of};
use crate::suite;

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
    /// Built; the server serves it under this key.
    Hosted { key: String },
    /// Did not compile; the compiler's messages, with its paths as shown paths.
    Unviable { errors: String },
}

/// The executables of a build.
#[derive(Debug, Clone)]
pub struct Build {
    /// The behavioural suite, one libtest binary.
    pub judge: PathBuf,
    /// The server hosting the viable implementations (absent if none is).
    pub server: Option<PathBuf>,
    /// Per implementation, in the order given.
    pub hosting: Vec<Hosting>,
    pub duration: Duration,
}

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
            include_str!("bridge/mod.rs").to_string(),
        ),
        (
            "src/client.rs".to_string(),
            include_str!("bridge/client.rs").to_string(),
        ),
        (
            "src/protocol.rs".to_string(),
            include_str!("bridge/protocol.rs").to_string(),
        ),
        (
            "src/server.rs".to_string(),
            include_str!("bridge/server.rs").to_string(),
        ),
        (
            "src/proxy.rs".to_string(),
            include_str!("bridge/proxy.rs").to_string(),
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
            include_str!("bridge/dispatch.rs").to_string(),
        ),
    ];
    scratch.write_crate("impl", &files)
}

/// The server crate hosting `hosted` (crate, shown path), and its build id.
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
                "        {bridge_ident}::server::Hosted {{\n            key: {key:?},\n            source: {key:?},\n            \
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

/// Builds the judge and a server for `implementations`.
pub fn build(
    scratch: &Scratch,
    implementations: &[Implementation],
    time_limit: Option<Duration>,
) -> Result<Build, Error> {
    let start = Instant::now();
    let bridge = write_bridge(scratch)?;
    let (judge, judge_id) = write_judge(scratch, &bridge)?;
    let crates: Vec<CrateDir> = implementations
        .iter()
        .map(|i| write_implementation(scratch, &bridge, &i.source))
        .collect::<Result<_, _>>()?;
    let mut viable: Vec<usize> = (0..implementations.len()).collect();
    let mut unviable: Vec<(usize, String)> = Vec::new();
    let lock = scratch.lock()?;
    let (judge_exe, server_exe) = loop {
        let hosted: Vec<(CrateDir, String)> = viable
            .iter()
            .map(|&i| (crates[i].clone(), implementations[i].shown_path.clone()))
            .collect();
        let server = if hosted.is_empty() {
            None
        } else {
            Some(write_server(scratch, &bridge, &hosted)?)
        };
        let mut roots = vec![&judge];
        if let Some((server, _)) = &server {
            roots.push(server);
        }
        let mut members = roots.clone();
        members.push(&bridge);
        members.extend(viable.iter().map(|&i| &crates[i]));
        scratch.set_members(&lock, &members)?;
        scratch.touch(&members);
        let built = cargo::build(scratch, &roots, time_limit)?;
        let failed: Vec<usize> = viable
            .iter()
            .copied()
            .filter(|&i| built.errors.contains_key(&crates[i].name))
            .collect();
        let judge_exe = built
            .executables
            .get(&(judge.name.clone(), "behaviour".to_string()))
            .cloned();
        let server_exe = server.as_ref().and_then(|(s, _)| {
            built
                .executables
                .get(&(s.name.clone(), s.name.clone()))
                .cloned()
        });
        if !failed.is_empty() {
            for &i in &failed {
                let errors = built.errors[&crates[i].name].join("\n");
                let shown = &implementations[i].shown_path;
                let errors = errors
                    .replace(&format!("crates/{}/src/lib.rs", crates[i].name), shown)
                    .replace(
                        &format!("crates/{}/src/fencelab_dispatch.rs", crates[i].name),
                        "<fencelab's calls of the contract's API>",
                    );
                unviable.push((i, errors));
            }
            viable.retain(|i| !failed.contains(i));
            continue;
        }
        let Some(judge_exe) = judge_exe.filter(|_| built.success || server.is_none()) else {
            return Err(build_failure(&built));
        };
        match (&server, server_exe) {
            (Some((_, id)), Some(exe)) if built.success => {
                break (judge_exe, Some((exe, id.clone())));
            }
            (None, _) => break (judge_exe, None),
            _ => return Err(build_failure(&built)),
        }
    };
    scratch.collect_garbage(&lock);
    drop(lock);
    check_judge(&judge_exe, &judge_id)?;
    let keys: Vec<String> = viable.iter().map(|&i| crates[i].name.clone()).collect();
    if let Some((exe, id)) = &server_exe {
        check_server(exe, id, &keys)?;
    }
    let hosting = (0..implementations.len())
        .map(|i| match unviable.iter().find(|(u, _)| *u == i) {
            Some((_, errors)) => Hosting::Unviable {
                errors: errors.clone(),
            },
            None => Hosting::Hosted {
                key: crates[i].name.clone(),
            },
        })
        .collect();
    Ok(Build {
        judge: judge_exe,
        server: server_exe.map(|(exe, _)| exe),
        hosting,
        duration: start.elapsed(),
    })
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

/// Runs `exe` with `args` briefly and returns its stdout.
fn ask(exe: &Path, args: &[&str]) -> Result<String, Error> {
    let out = Command::new(exe)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .map_err(|e| Error::internal(format!("cannot run {}: {e}", exe.display())))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The judge must report the build id of the sources just written, and list
/// exactly the suite's tests.
fn check_judge(exe: &Path, expected: &str) -> Result<(), Error> {
    let printed = ask(
        exe,
        &[
            "--exact",
            BUILD_ID_TEST,
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ],
    )?;
    let id = printed
        .lines()
        .find_map(|l| l.split_once(BUILD_ID_PREFIX).map(|(_, id)| id.trim()));
    if id != Some(expected) {
        return Err(Error::internal(format!(
            "the judge at {} was built from other sources (build id {id:?}, expected {expected:?})",
            exe.display()
        )));
    }
    let listed: BTreeSet<String> = ask(exe, &["--list"])?
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

/// The server must report the build id of this run and host exactly `keys`.
fn check_server(exe: &Path, expected: &str, keys: &[String]) -> Result<(), Error> {
    let printed = ask(exe, &["--identify"])?;
    let identity: Identity = serde_json::from_str(printed.trim()).map_err(|e| {
        Error::internal(format!(
            "the server at {} cannot say what it hosts: {e}",
            exe.display()
        ))
    })?;
    let hosted: Vec<String> = identity.impls.into_iter().map(|i| i.key).collect();
    if identity.build != expected || hosted != keys {
        return Err(Error::internal(format!(
            "the server at {} was built for other implementations (build {}, expected {expected})",
            exe.display(),
            identity.build
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_dependencies_are_fencelabs_own() {
        let manifest: toml::Table = toml::from_str(include_str!("../Cargo.toml")).unwrap();
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
