//! The seam between the engine and the editions: the one place the engine
//! asks which language an implementation or a suite is written in.
//!
//! Two questions differ by edition. How a suite becomes a judge (`judge`):
//! Rust's is a crate cargo builds, Python's a runner over the learner's
//! file. How implementations are hosted (`host`): Rust's are built by cargo
//! with the judge, in one build; Python's are compiled and served by
//! `python`, whose servers the runner forks (`Piece::forking`).
//! A third edition is a module beside `python` and one arm in each `match`.

use std::collections::BTreeMap;
use std::time::Duration;

use super::builder::{self, Build, Built, Hosting, Implementation};
use super::scratch::{Pin, Scratch};
use super::{Request, cargo, python, timed_out};
use crate::error::Error;
use crate::lab::edition::Edition;
use crate::lab::suite::{SuiteFiles, SuiteTest};

/// A build (and the pin that keeps it) as the run uses it.
pub(super) struct Piece {
    pub judge: Option<std::path::PathBuf>,
    pub tests: Option<Vec<SuiteTest>>,
    pub hosting: Vec<Hosting>,
    /// What the runner forks an edition's servers with (`python::Forking`).
    pub forking: Option<python::Forking>,
    _pin: Option<Pin>,
}

impl From<Build> for Piece {
    fn from(build: Build) -> Piece {
        Piece {
            judge: Some(build.judge),
            tests: Some(build.tests),
            hosting: build.hosting,
            forking: None,
            _pin: Some(build.pin),
        }
    }
}

impl Piece {
    /// Implementations that could not be built in time.
    fn timed_out(implementations: usize, limit: Duration) -> Piece {
        Piece {
            judge: None,
            tests: None,
            hosting: vec![
                Hosting::Unviable {
                    errors: timed_out(limit),
                };
                implementations
            ],
            forking: None,
            _pin: None,
        }
    }

    /// What holds hostings (and their pin) but no judge.
    fn hosting(hosting: Vec<Hosting>, forking: Option<python::Forking>, pin: Option<Pin>) -> Piece {
        Piece {
            judge: None,
            tests: None,
            hosting,
            forking,
            _pin: pin,
        }
    }
}

/// What the builds of a run came to, when fencelab could do its part.
pub(super) enum Builds {
    /// The pieces, with one hosting per implementation between them, in order.
    Ready(Vec<Piece>),
    /// The suite itself does not compile: the compiler's messages (nothing
    /// can run).
    SuiteUnviable { errors: String },
}

/// The edition a suite is written in: its root file's says.
fn suite_edition(suite: &SuiteFiles) -> Edition {
    Edition::of_file(&suite.root)
}

/// Builds the judge and hosts every implementation, each by its edition;
/// the hostings come back in the request's order.
pub(super) fn build(
    scratch: &Scratch,
    request: &Request,
    detail: &cargo::Detail,
) -> Result<Builds, Error> {
    let mut at: BTreeMap<Edition, Vec<usize>> = BTreeMap::new();
    for (i, implementation) in request.implementations.iter().enumerate() {
        let edition = Edition::of_file(&implementation.shown_path);
        at.entry(edition).or_default().push(i);
    }
    let chosen = |indices: &[usize]| -> Vec<Implementation> {
        (indices.iter())
            .map(|&i| request.implementations[i].clone())
            .collect()
    };
    let suite = suite_edition(&request.suite);
    // Rust implementations are built by cargo with a Rust suite's judge:
    // one build for all.
    let with_judge = match suite {
        Edition::Rust => at.remove(&Edition::Rust).unwrap_or_default(),
        Edition::Python => Vec::new(),
    };
    let mut pieces = match judge(suite, scratch, request, &chosen(&with_judge), detail)? {
        Builds::Ready(pieces) => pieces,
        unviable => return Ok(unviable),
    };
    let mut order = with_judge;
    for (edition, indices) in at {
        pieces.push(host(
            edition,
            suite,
            scratch,
            request,
            &chosen(&indices),
            detail,
        )?);
        order.extend(indices);
    }
    Ok(Builds::Ready(in_order(pieces, &order)))
}

/// A suite made into a judge by its edition; a Rust judge's build hosts
/// the Rust implementations `implementations` too.
fn judge(
    suite: Edition,
    scratch: &Scratch,
    request: &Request,
    implementations: &[Implementation],
    detail: &cargo::Detail,
) -> Result<Builds, Error> {
    match suite {
        Edition::Rust => build_rust(scratch, request, implementations, detail),
        Edition::Python => Ok(match python::judge(scratch, &request.suite)? {
            python::Judge::Unviable { errors } => Builds::SuiteUnviable { errors },
            python::Judge::Ready {
                program,
                tests,
                pin,
            } => Builds::Ready(vec![Piece {
                judge: Some(program),
                tests: Some(tests),
                ..Piece::hosting(Vec::new(), None, Some(pin))
            }]),
        }),
    }
}

/// The implementations of `edition` hosted apart from the judge of a suite
/// of `suite`'s edition.
fn host(
    edition: Edition,
    suite: Edition,
    scratch: &Scratch,
    request: &Request,
    implementations: &[Implementation],
    detail: &cargo::Detail,
) -> Result<Piece, Error> {
    match edition {
        // Under a learner's Python tests the runner forks their servers.
        Edition::Python => {
            let forked_by_runner = suite == Edition::Python;
            host_python(scratch, request, implementations, forked_by_runner, detail)
        }
        // Only a Rust judge's build hosts them (`judge`).
        Edition::Rust => Err(Error::internal(
            "Python tests can only be judged against Python implementations",
        )),
    }
}

/// Python implementations, compiled and served by `python`. Under a
/// learner's Python tests the runner forks their servers with the bridge's
/// cdylib, built here when no run built it yet.
fn host_python(
    scratch: &Scratch,
    request: &Request,
    implementations: &[Implementation],
    forked_by_runner: bool,
    detail: &cargo::Detail,
) -> Result<Piece, Error> {
    let policy = &request.policy;
    if forked_by_runner && !implementations.is_empty() {
        python::build_library(scratch, policy.servers, Some(detail));
    }
    let hosted = python::host(
        scratch,
        implementations,
        policy.servers,
        policy.import_first,
    )?;
    Ok(Piece::hosting(hosted.hosting, hosted.forking, hosted.pin))
}

/// The pieces with their hostings moved into one last piece, in the
/// request's order: `order[k]` is the request's index of the k-th hosting.
fn in_order(mut pieces: Vec<Piece>, order: &[usize]) -> Vec<Piece> {
    if order.iter().enumerate().all(|(k, &i)| k == i) {
        return pieces;
    }
    let mut all: Vec<Option<Hosting>> = vec![None; order.len()];
    let hostings = (pieces.iter_mut()).flat_map(|p| std::mem::take(&mut p.hosting));
    for (&i, hosting) in order.iter().zip(hostings) {
        all[i] = Some(hosting);
    }
    let forking = pieces.iter_mut().find_map(|p| p.forking.take());
    pieces.push(Piece::hosting(
        (all.into_iter())
            .map(|h| h.expect("every implementation is hosted or unviable"))
            .collect(),
        forking,
        None,
    ));
    pieces
}

/// Builds the Rust implementations `implementations` with the suite's judge:
/// together, and, when that runs out of time and the policy allows, each
/// alone, so that one that makes the compiler loop fails alone at the cost of
/// its own limit (the others are cached by then).
fn build_rust(
    scratch: &Scratch,
    request: &Request,
    implementations: &[Implementation],
    detail: &cargo::Detail,
) -> Result<Builds, Error> {
    let policy = &request.policy;
    let plan = |implementations, time_limit| builder::Plan {
        suite: &request.suite,
        implementations,
        time_limit,
        servers: policy.servers,
        judge_caged: policy.judge_caged,
        detail: Some(detail),
    };
    match builder::build(scratch, &plan(implementations, policy.build_limit))? {
        Built::Done(build) => Ok(Builds::Ready(vec![build.into()])),
        Built::SuiteUnviable { errors } => Ok(Builds::SuiteUnviable { errors }),
        Built::TimedOut(limit) if policy.build_alone_on_timeout => {
            let mut pieces = Vec::new();
            for one in implementations {
                match builder::build(scratch, &plan(std::slice::from_ref(one), Some(limit)))? {
                    Built::Done(build) => pieces.push(build.into()),
                    Built::SuiteUnviable { errors } => {
                        return Ok(Builds::SuiteUnviable { errors });
                    }
                    Built::TimedOut(limit) => pieces.push(Piece::timed_out(1, limit)),
                }
            }
            Ok(Builds::Ready(pieces))
        }
        Built::TimedOut(limit) => Err(Error::environment(timed_out(limit))
            .with_next("raise the limit with --build-timeout SECS")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(marks: &[&str]) -> Vec<Hosting> {
        (marks.iter())
            .map(|m| Hosting::Unviable {
                errors: m.to_string(),
            })
            .collect()
    }

    fn marks(pieces: &[Piece]) -> Vec<String> {
        (pieces.iter().flat_map(|p| &p.hosting))
            .map(|h| match h {
                Hosting::Unviable { errors } => errors.clone(),
                Hosting::Hosted(_) => unreachable!(),
            })
            .collect()
    }

    /// A run of both editions: the judge's build hosts the request's
    /// implementations 1 and 3, the other edition's 0 and 2.
    #[test]
    fn hostings_of_two_editions_come_back_in_the_requests_order() {
        let pieces = vec![
            Piece::hosting(marked(&["one", "three"]), None, None),
            Piece::hosting(marked(&["zero", "two"]), None, None),
        ];
        let ordered = in_order(pieces, &[1, 3, 0, 2]);
        assert_eq!(marks(&ordered), ["zero", "one", "two", "three"]);
    }

    #[test]
    fn hostings_already_in_order_are_left_where_they_are() {
        let pieces = vec![Piece::hosting(marked(&["zero", "one"]), None, None)];
        let ordered = in_order(pieces, &[0, 1]);
        assert_eq!(
            (ordered.len(), marks(&ordered)),
            (1, vec!["zero".into(), "one".into()])
        );
    }
}
