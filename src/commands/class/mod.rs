//! `fencelab class`: after the deadline, what the class got wrong, from the
//! JSON reports `grade` and `grade --tests` wrote. Nothing is graded again.
//!
//! Implementations are grouped by the set of suite tests they fail, and each
//! group is matched to the mutants whose declared killers it fails and whose
//! survivors it passes. A group no mutant explains is a bug the bank lacks.
//! Learners' tests give, per mutant, the share of valid suites that catch it,
//! and their invalid tests grouped by what they assumed.
//!
//! The same reports give byte-identical JSON, whatever their order: every
//! list is sorted, and nothing depends on time or the machine.

mod html;
mod read;
mod render;
mod skeleton;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::edition::Edition;
use crate::lab::mutant::Mutant;
use crate::lab::worksheet::SLUGS;
use crate::output::printer::Printer;

pub(crate) use read::{Observed, Read, Submission};

#[derive(Debug, Args)]
pub(crate) struct ClassArgs {
    /// JSON reports of `grade --json` (or of `grade --tests --json`), or results directories of `grade --results DIR`.
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// Write the class report as JSON to FILE (schema in README.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the class report as one offline HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Name students by stable pseudonyms (student-1a2b3c), to share the page with the class.
    #[arg(long)]
    pub anonymize: bool,
    /// Write the mutant file each group no mutant explains starts from into DIR (found-1.toml, ...), to review.
    #[arg(long, value_name = "DIR")]
    pub skeletons: Option<PathBuf>,
    /// The language of the terminal and the page (ja or en) [default: the locale's].
    #[arg(long, value_parser = crate::commands::parse_lang)]
    pub lang: Option<crate::lab::lang::Lang>,
}

/// How many members of a group are named as examples.
const EXAMPLES: usize = 3;

/// How many tests represent a group of invalid tests.
const REPRESENTATIVES: usize = 2;

/// The class report, as `--json` writes it (schema 1, in README.md).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct ClassReport {
    pub schema: u32,
    /// `implementations` (from `grade`) or `tests` (from `grade --tests`).
    pub kind: &'static str,
    /// `rust` or `python`.
    pub edition: &'static str,
    pub submissions: usize,
    /// Those graded (the others did not compile or could not be graded).
    pub graded: usize,
    /// The names of the others.
    pub not_graded: Vec<String>,
    /// Per step: how many graded submissions pass it whole.
    pub steps: Vec<StepRow>,
    /// Implementations only: groups by the tests they fail, the ones no
    /// mutant explains first.
    pub groups: Vec<Group>,
    /// Learners' tests only: per mutant, how many valid suites catch it,
    /// the least caught first.
    pub mutants: Vec<MutantRow>,
    /// Learners' tests only: invalid tests grouped by why.
    pub invalid: Vec<InvalidGroup>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct StepRow {
    pub step: u32,
    pub slug: &'static str,
    pub passed_whole: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Group {
    pub size: usize,
    /// The suite tests every member fails.
    pub fails: Vec<String>,
    /// The mutants that fail the same way, the closest first.
    pub matches: Vec<Match>,
    pub members: Vec<String>,
    /// For a group no mutant explains: its first member's change and a
    /// mutant file to start from (left out with `--anonymize`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub representative: Option<skeleton::Representative>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Match {
    pub mutant: String,
    pub step: u32,
    pub title: crate::lab::lang::Text,
    /// The group fails exactly the mutant's declared killers.
    pub exact: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct MutantRow {
    pub mutant: String,
    pub step: u32,
    pub title: crate::lab::lang::Text,
    pub caught_by: usize,
    pub valid_suites: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct InvalidGroup {
    /// Why, as `grade --tests` says it ("assumes claim-many-winner").
    pub reason: String,
    /// What its tests share: `verdicts` (the correct implementations they
    /// fail on), `observation` (what they contradict on the reference), or
    /// `reason` alone (a report of an older fencelab).
    pub by: &'static str,
    /// The verdict vector: the reference and the variants every test fails on.
    pub fails_on: Vec<String>,
    /// The freedoms they assume, each with the contract's clause.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub freedoms: Vec<FreedomRow>,
    /// What they contradict: the reference's answer where they expected another.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<Observed>,
    /// The mutants whose behaviour they expect, as the judge named them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub misconceptions: Vec<String>,
    pub tests: usize,
    pub suites: usize,
    /// Two of them, as `suite: test`, from two suites where there are.
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct FreedomRow {
    pub freedom: String,
    /// What a test failing for it assumed.
    pub assumed: crate::lab::lang::Text,
    /// The contract's clause that leaves it free.
    pub contract: String,
}

pub(crate) fn main(args: ClassArgs, printer: &mut Printer) -> Result<ExitCode, Error> {
    if let Some(lang) = args.lang {
        printer.lang = lang;
    }
    let read = read::reports(&args.reports)?;
    let report = class(&read, args.anonymize);
    let text = render::render(&printer.layout(), &report);
    printer.line(text.trim_end());
    use crate::output::report_file::{json, write};
    if let Some(path) = &args.json {
        write(path, &json(&report), "write")?;
    }
    if let Some(path) = &args.html {
        write(path, &html::page(&report, printer.lang), "write")?;
    }
    if let Some(dir) = &args.skeletons {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::io("create", dir, e)
                .with_next("give --skeletons a directory this user may write")
        })?;
        let found = report
            .groups
            .iter()
            .filter_map(|g| g.representative.as_ref());
        for (i, r) in found.enumerate() {
            write(
                &dir.join(format!("found-{}.toml", i + 1)),
                &r.mutant,
                "write",
            )?;
        }
    }
    Ok(ExitCode::Success)
}

/// The class report of what was read.
pub(crate) fn class(read: &Read, anonymize: bool) -> ClassReport {
    let edition = read.edition();
    let mutants = match edition {
        Edition::Rust => crate::lab::mutant::builtin(),
        Edition::Python => crate::lab::python::mutants(),
    };
    let name = |n: &str| match anonymize {
        true => pseudonym(n),
        false => n.to_string(),
    };
    let graded: Vec<&Submission> = read.submissions.iter().filter(|s| s.graded).collect();
    let steps = (1..=SLUGS.len() as u32)
        .map(|step| StepRow {
            step,
            slug: SLUGS[step as usize - 1],
            passed_whole: graded.iter().filter(|s| s.passes_step(step)).count(),
        })
        .collect();
    let (groups, mutant_rows, invalid) = match read.tests {
        false => {
            let mut groups = groups(&graded, &mutants, &name);
            if !anonymize {
                represent(&mut groups, read, edition);
            }
            (groups, Vec::new(), Vec::new())
        }
        true => (
            Vec::new(),
            mutant_rows(&graded, &mutants),
            invalid_groups(read, edition, &name),
        ),
    };
    ClassReport {
        schema: 1,
        kind: if read.tests {
            "tests"
        } else {
            "implementations"
        },
        edition: edition.code(),
        submissions: read.submissions.len(),
        graded: graded.len(),
        not_graded: (read.submissions.iter())
            .filter(|s| !s.graded)
            .map(|s| name(&s.name))
            .collect(),
        steps,
        groups,
        mutants: mutant_rows,
        invalid,
    }
}

/// A stable pseudonym for a submission's name: the same name, the same one.
fn pseudonym(name: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(name.as_bytes());
    let hex: String = digest[..3].iter().map(|b| format!("{b:02x}")).collect();
    format!("student-{hex}")
}

/// Implementations grouped by the tests they fail (those that fail none
/// are not a group), each matched to the mutants that fail that way.
fn groups(graded: &[&Submission], mutants: &[Mutant], name: &dyn Fn(&str) -> String) -> Vec<Group> {
    let mut by_fails: BTreeMap<BTreeSet<String>, Vec<String>> = BTreeMap::new();
    for s in graded {
        if !s.failed.is_empty() {
            by_fails
                .entry(s.failed.clone())
                .or_default()
                .push(name(&s.name));
        }
    }
    let mut groups: Vec<Group> = by_fails
        .into_iter()
        .map(|(fails, mut members)| {
            members.sort();
            Group {
                size: members.len(),
                matches: matches(&fails, mutants),
                fails: fails.into_iter().collect(),
                members,
                representative: None,
            }
        })
        .collect();
    // What no mutant explains first, then the largest; ties by the tests.
    groups.sort_by(|a, b| {
        (!a.matches.is_empty(), std::cmp::Reverse(a.size), &a.fails).cmp(&(
            !b.matches.is_empty(),
            std::cmp::Reverse(b.size),
            &b.fails,
        ))
    });
    groups
}

/// Each group no mutant explains gets its first member whose source is
/// found as its representative.
fn represent(groups: &mut [Group], read: &Read, edition: Edition) {
    for g in groups.iter_mut().filter(|g| g.matches.is_empty()) {
        g.representative = g.members.iter().find_map(|member| {
            let s = read.submissions.iter().find(|s| s.name == *member)?;
            let source = skeleton::source(&s.file, &read.files)?;
            Some(skeleton::representative(member, &source, edition, &g.fails))
        });
    }
}

/// The mutants that fail as `fails` does: all their declared killers in it,
/// none of their survivors; the closest (fewest tests beyond) first, two at most.
fn matches(fails: &BTreeSet<String>, mutants: &[Mutant]) -> Vec<Match> {
    let mut found: Vec<(usize, &Mutant)> = mutants
        .iter()
        .filter(|m| !m.killers.is_empty())
        .filter(|m| m.killers.iter().all(|k| fails.contains(k)))
        .filter(|m| !m.survivors.iter().any(|s| fails.contains(s)))
        .map(|m| (fails.len() - m.killers.len(), m))
        .collect();
    found.sort_by(|a, b| (a.0, &a.1.id).cmp(&(b.0, &b.1.id)));
    found
        .into_iter()
        .take(2)
        .map(|(beyond, m)| Match {
            mutant: m.id.clone(),
            step: m.step,
            title: m.titles.clone(),
            exact: beyond == 0,
        })
        .collect()
}

/// Per mutant, how many valid suites catch it; the least caught first.
fn mutant_rows(graded: &[&Submission], mutants: &[Mutant]) -> Vec<MutantRow> {
    let valid: Vec<&&Submission> = graded.iter().filter(|s| s.invalid.is_empty()).collect();
    let mut rows: Vec<MutantRow> = mutants
        .iter()
        .map(|m| MutantRow {
            mutant: m.id.clone(),
            step: m.step,
            title: m.titles.clone(),
            caught_by: (valid.iter())
                .filter(|s| s.passed.contains(&format!("step{}::{}", m.step, m.id)))
                .count(),
            valid_suites: valid.len(),
        })
        .collect();
    rows.sort_by(|a, b| (a.caught_by, a.step, &a.mutant).cmp(&(b.caught_by, b.step, &b.mutant)));
    rows
}

/// What an invalid test is grouped by: its verdicts on the reference and
/// the variants, or what it contradicts on the reference; the reason
/// alone from an older report. A full wheat's `claim_many` races for
/// real, so its verdicts may be chance: they are no part of the key.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    by: &'static str,
    fails_on: Vec<String>,
    observation: Option<Observed>,
    assumed: Vec<String>,
    /// Only of an older report's test.
    reason: Option<String>,
}

/// A test of a group: (suite, test, why, its misconceptions).
type Member = (String, String, String, Vec<String>);

/// Invalid tests grouped, the largest group first.
fn invalid_groups(
    read: &Read,
    edition: Edition,
    name: &dyn Fn(&str) -> String,
) -> Vec<InvalidGroup> {
    let mut by_key: BTreeMap<Key, Vec<Member>> = BTreeMap::new();
    for s in &read.submissions {
        for (test, why) in &s.invalid {
            let judged = s.learner_tests.iter().find(|t| t.test == *test);
            let key = match judged {
                None => Key {
                    by: "reason",
                    fails_on: Vec::new(),
                    observation: None,
                    assumed: Vec::new(),
                    reason: Some(why.clone()),
                },
                Some(t) => {
                    let contradicts = t.verdict == "fails-on-reference" && t.observation.is_some();
                    Key {
                        by: if contradicts {
                            "observation"
                        } else {
                            "verdicts"
                        },
                        fails_on: match contradicts {
                            true => Vec::new(),
                            false => (t.fails_on.iter())
                                .filter(|f| read.scheduled(&f.implementation))
                                .map(read::FailsOn::shown)
                                .collect(),
                        },
                        observation: t.observation.clone().filter(|_| contradicts),
                        assumed: t.assumed.clone(),
                        reason: None,
                    }
                }
            };
            let misconceptions = judged.map(|t| t.misconceptions.clone()).unwrap_or_default();
            by_key.entry(key).or_default().push((
                name(&s.name),
                test.clone(),
                why.clone(),
                misconceptions,
            ));
        }
    }
    let builtin = match edition {
        Edition::Rust => crate::lab::wheat::Wheats::builtin(),
        Edition::Python => crate::lab::wheat::Wheats::builtin_python(),
    };
    let freedom = |id: &String| -> FreedomRow {
        let (assumed, contract) = match (read.freedoms.get(id), builtin.freedom(id)) {
            (Some(f), _) => (f.assumed.clone(), f.contract.clone()),
            (None, Some(f)) => (f.assumed.clone(), f.contract.clone()),
            (None, None) => (
                crate::lab::lang::Text {
                    en: id.clone(),
                    ja: id.clone(),
                },
                String::new(),
            ),
        };
        FreedomRow {
            freedom: id.clone(),
            assumed,
            contract,
        }
    };
    let mut groups: Vec<InvalidGroup> = by_key
        .into_iter()
        .map(|(key, mut tests)| {
            tests.sort();
            let suites: BTreeSet<&String> = tests.iter().map(|t| &t.0).collect();
            let mut misconceptions: Vec<String> =
                tests.iter().flat_map(|t| t.3.iter().cloned()).collect();
            misconceptions.sort();
            misconceptions.dedup();
            InvalidGroup {
                reason: most_common(tests.iter().map(|t| &t.2)),
                by: key.by,
                fails_on: key.fails_on,
                freedoms: key.assumed.iter().map(freedom).collect(),
                observation: key.observation,
                misconceptions,
                tests: tests.len(),
                suites: suites.len(),
                examples: representatives(&tests),
            }
        })
        .collect();
    groups.sort_by(|a, b| {
        (
            std::cmp::Reverse(a.tests),
            &a.reason,
            &a.fails_on,
            &a.observation,
        )
            .cmp(&(
                std::cmp::Reverse(b.tests),
                &b.reason,
                &b.fails_on,
                &b.observation,
            ))
    });
    groups
}

/// The reason most of a group's tests give (the first in order on a tie):
/// a racy run of a full wheat may word one test's otherwise.
fn most_common<'a>(reasons: impl Iterator<Item = &'a String>) -> String {
    let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
    for r in reasons {
        *counts.entry(r).or_default() += 1;
    }
    let most = counts.values().copied().max().unwrap_or_default();
    (counts.into_iter())
        .find(|(_, n)| *n == most)
        .map(|(r, _)| r.clone())
        .unwrap_or_default()
}

/// Two tests of a group, from two suites where it has them: the first, and
/// the first of another suite.
fn representatives(tests: &[Member]) -> Vec<String> {
    let mut chosen: Vec<&Member> = tests.iter().take(1).collect();
    let other = (tests.iter()).find(|t| chosen.iter().all(|c| c.0 != t.0));
    chosen.extend(other.or_else(|| tests.get(1)));
    (chosen.iter().take(REPRESENTATIVES))
        .map(|t| format!("{}: {}", t.0, t.1))
        .collect()
}

#[cfg(test)]
mod tests;
