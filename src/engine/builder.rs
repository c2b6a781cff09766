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
//! Both executables are asked who they are before they are used (`identity`);
//! the crates themselves are written by `crates`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::crates::{
    key_of, shown_errors, write_bridge, write_implementation, write_judge, write_server,
};
use super::identity::{ServerProblem, check_judge, check_server};
use crate::bridge::protocol::{IMPL_ENV, SERVER_ENV, SHOWN_ENV};
use crate::bridge::server::SERVE_STDIN;
use crate::engine::cargo;
use crate::engine::policy::Servers;
use crate::engine::scratch::{CrateDir, Pin, Scratch};
use crate::error::{Error, ErrorKind};
use crate::lab::suite::{SuiteFiles, SuiteTest};

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
pub(crate) enum Hosting {
    /// Built, and served by `Host`.
    Hosted(Host),
    /// Did not compile; the compiler's messages, with its paths as shown paths.
    Unviable { errors: String },
}

/// How to start the server of a built implementation: all the rest of the
/// engine knows of an implementation's program (the runner starts it for a
/// trial, or tells the judge how to). Whatever language the implementation
/// is in, this is where it ends up: a program answering the bridge's
/// requests, and the key that selects the implementation in it. Today every
/// such program is a server crate built with the implementation (`crates`),
/// and the program is all its cage shows of the system besides the system's
/// own directories (`bridge::sandbox`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Host {
    /// The server's executable.
    pub program: PathBuf,
    /// The implementation's key in it.
    pub key: String,
    /// The path to show for the implementation's file, told to a server
    /// that does not know it when it starts (a Rust server: one is built per
    /// set of sources, wherever their files lie); `None` for one that does.
    pub shown: Option<String>,
}

impl Host {
    /// What fencelab's judge is given to start the server itself on its first
    /// call (`Launch::ByJudge`): the bridge's client runs `PROGRAM serve KEY
    /// [SHOWN]`.
    pub(super) fn for_judge(&self) -> Vec<(&'static str, &std::ffi::OsStr)> {
        let mut env = vec![
            (SERVER_ENV, self.program.as_os_str()),
            (IMPL_ENV, self.key.as_ref()),
        ];
        env.extend(self.shown.iter().map(|s| (SHOWN_ENV, s.as_ref())));
        env
    }

    /// The server that reads its implementation's key (and the path to show)
    /// from its standard input (`Launch::ByRunner`: nothing in its arguments
    /// or environment tells an untrusted judge which implementation it talks
    /// to), and the lines to write there.
    pub(super) fn serving_stdin(&self) -> (PathBuf, Vec<std::ffi::OsString>, String) {
        let mut lines = format!("{}\n", self.key);
        if let Some(shown) = &self.shown {
            // JSON: one line, whatever the path holds.
            lines.push_str(&format!("{}\n", serde_json::Value::from(shown.as_str())));
        }
        (self.program.clone(), vec![SERVE_STDIN.into()], lines)
    }
}

/// The executables of a build, pinned in the scratch workspace for as long as
/// the build is kept (the garbage collector removes nothing of it before).
#[derive(Debug)]
pub(crate) struct Build {
    /// The suite, one libtest binary.
    pub judge: PathBuf,
    /// The suite's tests, as the judge lists them (its helpers left out).
    pub tests: Vec<SuiteTest>,
    /// Per implementation, in the order given.
    pub hosting: Vec<Hosting>,
    pub(crate) pin: Pin,
}

/// How a build ended, when fencelab could do its part.
#[derive(Debug)]
pub(crate) enum Built {
    Done(Build),
    /// It ran out of time and was stopped.
    TimedOut(Duration),
    /// The suite itself does not compile (a learner's tests, say): the
    /// compiler's messages, with the suite's own paths.
    SuiteUnviable {
        errors: String,
    },
}

/// A server to build: its crate, its build id, the implementations (by
/// index) it hosts, and the keys it must say it hosts.
struct ServerPlan {
    krate: CrateDir,
    id: String,
    hosts: Vec<usize>,
    keys: Vec<String>,
}

/// The crates a server hosting `hosts` is written with, each once, in the
/// order of their first implementation. Equal sources share a crate (its name
/// is a hash of its files) wherever they stand in the list, so the keys the
/// server is checked against are these crates' names, never one per
/// implementation; each implementation's shown path is given to the server
/// when it starts (`Host::shown`).
fn hosted_crates(crates: &[CrateDir], hosts: &[usize]) -> Vec<CrateDir> {
    let mut hosted: Vec<CrateDir> = Vec::new();
    for &i in hosts {
        if !hosted.contains(&crates[i]) {
            hosted.push(crates[i].clone());
        }
    }
    hosted
}

/// How to build: where the suite and the servers come from, how long it may
/// take, and whether the judge is untrusted (it is then caged even while it
/// says who it is).
#[derive(Debug, Clone)]
pub(crate) struct Plan<'a> {
    pub suite: &'a SuiteFiles,
    pub implementations: &'a [Implementation],
    pub time_limit: Option<Duration>,
    pub servers: Servers,
    pub judge_caged: bool,
    /// Where to say what cargo compiles while it builds.
    pub detail: Option<&'a cargo::Detail>,
}

/// Builds the judge and servers of `plan`.
pub(crate) fn build(scratch: &Scratch, plan: &Plan) -> Result<Built, Error> {
    let Plan {
        suite,
        implementations,
        time_limit,
        servers,
        judge_caged,
        detail,
    } = *plan;
    // Under the lock from the first file written: another run's garbage
    // collector cannot remove a crate between its writing and its build.
    let lock = scratch.lock()?;
    let bridge = write_bridge(scratch)?;
    let (judge, judge_id) = write_judge(scratch, &bridge, suite)?;
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
            let hosted = hosted_crates(&crates, &hosts);
            let (krate, id) = write_server(scratch, &bridge, &hosted)?;
            let keys = hosted.iter().map(key_of).collect();
            plans.push(ServerPlan {
                krate,
                id,
                hosts,
                keys,
            });
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
        let built = cargo::build(scratch, &roots, &suite.target, time_limit, detail)?;
        let unfinished = built.unfinished();
        let bombed = |name: &String, finished: bool| {
            if built.out_of_memory.contains(name) {
                Some(format!(
                    "the build used more than {} GiB of memory and was stopped",
                    cargo::BUILD_MEMORY >> 30
                ))
            } else if built.timed_out && !finished {
                Some(format!(
                    "the build took longer than {:.0} s and was stopped",
                    time_limit.unwrap_or_default().as_secs_f64()
                ))
            } else {
                None
            }
        };
        // A learner's tests that do not compile, or whose compiler ran out
        // of memory or time, are that learner's failure alone.
        if !suite.builtin {
            if let Some(errors) = built.errors.get(&judge.name) {
                let errors = errors
                    .join("\n")
                    .replace(&format!("crates/{}/", judge.name), "");
                return Ok(Built::SuiteUnviable { errors });
            }
            // Its test target, not its package: the package's library may
            // be built while its tests are not.
            let tests_built = built
                .executables
                .contains_key(&(judge.name.clone(), suite.target.clone()));
            if built.started().contains(&judge.name)
                && let Some(errors) = bombed(&judge.name, tests_built)
            {
                return Ok(Built::SuiteUnviable { errors });
            }
        }
        // An implementation that does not compile, or whose compiler ran out
        // of memory or time, fails alone, with its reason; the others are
        // built again without it. So a bomb costs about one build limit,
        // however many there are (as many at once as cargo compiles).
        let failed: Vec<(usize, String)> = viable
            .iter()
            .filter_map(|&i| {
                let name = &crates[i].name;
                let why = if let Some(errors) = built.errors.get(name) {
                    let dir = format!("crates/{name}/");
                    let errors: Vec<String> =
                        errors.iter().map(|e| cargo::about_crate(e, &dir)).collect();
                    errors.join("\n")
                } else {
                    bombed(name, !unfinished.contains(name))?
                };
                Some((i, why))
            })
            .collect();
        if !failed.is_empty() {
            for (i, why) in &failed {
                unviable.insert(crates[*i].name.clone(), why.clone());
            }
            viable.retain(|i| !failed.iter().any(|(f, _)| f == i));
            continue;
        }
        if built.timed_out {
            return Ok(Built::TimedOut(time_limit.unwrap_or_default()));
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
        let Some(judge_exe) = executable(&judge, &suite.target) else {
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
    let tests = check_judge(&judge_exe, &judge_id, suite, judge_caged)?;
    for (plan, exe) in plans.iter().zip(&server_exes) {
        match check_server(exe, &plan.id, &plan.keys) {
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
                errors: shown_errors(&crates[i], errors, &implementations[i].shown_path),
            },
            None => {
                let (_, exe) = plans
                    .iter()
                    .zip(&server_exes)
                    .find(|(p, _)| p.hosts.contains(&i))
                    .expect("every viable implementation has a server");
                Hosting::Hosted(Host {
                    program: exe.clone(),
                    key: key_of(&crates[i]),
                    shown: Some(implementations[i].shown_path.clone()),
                })
            }
        })
        .collect();
    Ok(Built::Done(Build {
        judge: judge_exe,
        tests,
        hosting,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::policy::{Policy, Trust};
    use crate::engine::runner::{Runner, Trial};
    use crate::exit::ExitCode;

    /// A server is keyed by the crates it hosts alone: one source shown
    /// under two paths (graded from two directories, say) is built into one
    /// server, and each run's panics still name its own path, whether the
    /// judge starts the server (`serve KEY SHOWN`) or the runner does
    /// (`serve-stdin`).
    #[test]
    fn one_source_under_two_paths_is_one_server_and_each_panic_names_its_path() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let scratch = Scratch::locate(&root.join("target")).expect("the scratch workspace");
        let head = "pub fn init_db(path: impl AsRef<Path>) -> Result<(), LeaseError> {\n";
        let source = crate::lab::reference::REFERENCE.replacen(
            head,
            &format!("{head}    if !path.as_ref().as_os_str().is_empty() {{\n        panic!(\"shown path\");\n    }}\n"),
            1,
        );
        assert_ne!(source, crate::lab::reference::REFERENCE);
        for trust in [Trust::Submissions, Trust::LearnerTests] {
            let policy = Policy::of(trust);
            let mut programs = Vec::new();
            for shown in ["one/lease.rs", "two/lease.rs"] {
                let plan = Plan {
                    suite: &SuiteFiles::builtin(),
                    implementations: &[Implementation {
                        shown_path: shown.into(),
                        source: source.clone(),
                    }],
                    time_limit: None,
                    servers: policy.servers,
                    judge_caged: policy.judge_caged,
                    detail: None,
                };
                let Built::Done(build) = build(&scratch, &plan).unwrap() else {
                    panic!("no build limit, a correct suite");
                };
                let Hosting::Hosted(host) = &build.hosting[0] else {
                    panic!("it compiles");
                };
                let runner = Runner::new(build.judge.clone(), 1, &policy);
                let trial = Trial {
                    host: host.clone(),
                    test: "step1::creates_the_six_columns".into(),
                    limit: Duration::from_secs(60),
                };
                let mut outcome = String::new();
                runner
                    .run(&[trial], |_, r| {
                        outcome = r.outcome.message().unwrap_or_default()
                    })
                    .unwrap();
                // A server for a learner's tests (`serve-stdin`) never says
                // where: a mutant's lines differ from the reference's.
                let located = outcome.contains(&format!(" at {shown}:"));
                assert_eq!(
                    located,
                    trust == Trust::Submissions,
                    "{trust:?}, {shown}: {outcome}"
                );
                assert!(
                    outcome.contains("shown path") && !outcome.contains("crates/"),
                    "{trust:?}, {shown}: {outcome}"
                );
                programs.push(host.program.clone());
            }
            assert_eq!(
                programs[0], programs[1],
                "{trust:?}: one server for one source, wherever its file lies"
            );
        }
    }

    #[test]
    fn a_server_lost_during_a_run_is_fencelabs_failure_not_the_submissions() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let scratch = Scratch::locate(&root.join("target")).expect("the scratch workspace");
        let source = format!("{}\n// lost server\n", crate::lab::reference::REFERENCE);
        let policy = Policy::of(Trust::Submissions);
        let plan = Plan {
            suite: &SuiteFiles::builtin(),
            implementations: &[Implementation {
                shown_path: "lost.rs".into(),
                source,
            }],
            time_limit: None,
            servers: policy.servers,
            judge_caged: policy.judge_caged,
            detail: None,
        };
        let Built::Done(build) = build(&scratch, &plan).unwrap() else {
            panic!("no build limit, a correct suite");
        };
        let Hosting::Hosted(host) = &build.hosting[0] else {
            panic!("the reference builds");
        };
        // Its program goes away (a bug, or someone cleaning the target directory).
        std::fs::remove_file(&host.program).unwrap();
        let runner = Runner::new(build.judge.clone(), 1, &policy);
        let trial = Trial {
            host: host.clone(),
            test: "step1::creates_the_six_columns".into(),
            limit: Duration::from_secs(60),
        };
        let err = runner
            .run(&[trial], |_, r| panic!("no outcome: {r:?}"))
            .unwrap_err();
        assert_eq!(err.exit_code(), ExitCode::ToolFailed);
        assert!(
            err.message.contains("could not start") && err.message.contains("No such file"),
            "{}",
            err.message
        );
    }
}
