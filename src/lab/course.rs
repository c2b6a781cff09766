//! The course file (`course.toml`): how one course grades the lab. `grade`,
//! the autograder bundles and `check --mine` read it; a flag given on the
//! command line wins over it. Every name in it is checked, and a wrong one is
//! refused with its line, so that a typo never grades a class silently.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::error::{Error, Location, at_line};
use crate::lab::predictions::did_you_mean;
use crate::lab::worksheet::SLUGS;

/// The file's name where fencelab looks for it (a lab's root, a bundle).
pub const FILE: &str = "course.toml";

/// What a course file says; what it leaves out is fencelab's default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Course {
    pub weights: Weights,
    pub limits: Limits,
    pub gradescope: Gradescope,
    pub reveal: Reveal,
}

/// Each step's weight in the score, in the worksheet's order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights(pub [f64; 8]);

impl Default for Weights {
    /// Every step weighs the same.
    fn default() -> Weights {
        Weights([1.0; 8])
    }
}

impl Weights {
    /// The weight of step `step` (1-based); 0 for a step the lab lacks.
    pub fn of(&self, step: u32) -> f64 {
        (step as usize)
            .checked_sub(1)
            .and_then(|i| self.0.get(i))
            .copied()
            .unwrap_or(0.0)
    }

    /// The weighted mean of `shares` (step, share from 0 to 1), 0 to 1.
    pub fn mean(&self, shares: impl IntoIterator<Item = (u32, f64)>) -> f64 {
        let (mut sum, mut weight) = (0.0, 0.0);
        for (step, share) in shares {
            sum += self.of(step) * share;
            weight += self.of(step);
        }
        if weight > 0.0 { sum / weight } else { 0.0 }
    }

    /// As reports write them: each step's slug and weight.
    pub fn by_slug(&self) -> BTreeMap<String, f64> {
        SLUGS
            .iter()
            .zip(self.0)
            .map(|(s, w)| (s.to_string(), w))
            .collect()
    }
}

/// Default limits, each replaced by its flag when one is given.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Limits {
    pub test_secs: Option<f64>,
    pub budget_secs: Option<f64>,
    pub build_secs: Option<f64>,
    pub min_score: Option<f64>,
}

/// When Gradescope shows something to students.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Visibility {
    Hidden,
    AfterDueDate,
    AfterPublished,
    #[default]
    Visible,
}

/// What Gradescope shows, and when.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gradescope {
    pub visibility: Option<Visibility>,
    pub stdout_visibility: Option<Visibility>,
    /// By a step's slug or a test's full name (`step4::x`).
    pub tests: BTreeMap<String, Visibility>,
}

impl Gradescope {
    /// When a test of step `slug` is shown: its own entry, else its step's,
    /// else the results' (`None`: Gradescope's rule for the results).
    pub fn test_visibility(&self, test: &str, slug: &str) -> Option<Visibility> {
        self.tests
            .get(test)
            .or_else(|| self.tests.get(slug))
            .copied()
    }
}

/// How much a learner's test report says about the mutants it misses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Reveal {
    /// How many per step, as Examplar does: the learner finds which.
    Count,
    /// Each one's title and the observation that exposes it.
    #[default]
    Titles,
    /// Titles, and each mutant's change as a diff.
    Diffs,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    weights: BTreeMap<Spanned<String>, Spanned<f64>>,
    #[serde(default)]
    limits: LimitsFile,
    #[serde(default)]
    gradescope: GradescopeFile,
    #[serde(default)]
    mine: MineFile,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct LimitsFile {
    timeout: Option<Spanned<f64>>,
    budget: Option<Spanned<f64>>,
    build_timeout: Option<Spanned<f64>>,
    min_score: Option<Spanned<f64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct GradescopeFile {
    visibility: Option<Visibility>,
    stdout_visibility: Option<Visibility>,
    #[serde(default)]
    tests: BTreeMap<Spanned<String>, Visibility>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MineFile {
    #[serde(default)]
    reveal: Reveal,
}

const FIX: &str = "fix the course file at that line and run again";

impl Course {
    /// Reads and checks the course file at `path`.
    pub fn load(path: &Path) -> Result<Course, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::io("read the course file", path, e)
                .with_next("give --course the course.toml to grade by (README, \"A course file\")")
        })?;
        Course::parse(path, &text)
    }

    /// `course.toml` in `dir` when there is one (a lab's root, a bundle).
    pub fn find_in(dir: &Path) -> Result<Option<Course>, Error> {
        let path = dir.join(FILE);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => Course::load(&path).map(Some),
            Ok(_) => Err(Error::input(format!(
                "{}: the course file is not a plain file",
                path.display()
            ))
            .with_next("make it a file (not a link or a directory), or remove it")),
            Err(_) => Ok(None),
        }
    }

    /// `--course FILE`, else `course.toml` in `dir` when there is one.
    pub fn given_or_in(given: Option<&PathBuf>, dir: &Path) -> Result<Course, Error> {
        match given {
            Some(path) => Course::load(path),
            None => Ok(Course::find_in(dir)?.unwrap_or_default()),
        }
    }

    /// Parses `text`, the course file at `path`, checking every name in it.
    pub fn parse(path: &Path, text: &str) -> Result<Course, Error> {
        let problem = |offset: usize, message: String| {
            Error::input(at_line(path, &Location::at(text, offset), &message)).with_next(FIX)
        };
        let file: File = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            match e.span() {
                Some(span) => problem(span.start, message),
                None => Error::input(format!("{}: {message}", path.display())).with_next(FIX),
            }
        })?;
        let slugs: BTreeSet<String> = SLUGS.iter().map(|s| s.to_string()).collect();
        let mut weights = Weights::default();
        for (slug, weight) in &file.weights {
            let Some(i) = SLUGS.iter().position(|s| s == slug.get_ref()) else {
                return Err(problem(
                    slug.span().start,
                    format!(
                        "there is no step `{}`{}",
                        slug.get_ref(),
                        did_you_mean(slug.get_ref(), &slugs)
                    ),
                )
                .with_next(format!("name a step by its function: {}", SLUGS.join(", "))));
            };
            let w = *weight.get_ref();
            // Points are shared in thousandths of a weight.
            let thousandths = (w * 1000.0).round();
            if !(w.is_finite() && (0.0..=1000.0).contains(&w))
                || (thousandths - w * 1000.0).abs() > 1e-6
            {
                return Err(problem(
                    weight.span().start,
                    format!(
                        "weight {w}: give a number from 0 to 1000, with at most three decimals"
                    ),
                ));
            }
            weights.0[i] = w;
        }
        if weights.0.iter().all(|w| *w == 0.0) {
            let at = file.weights.keys().next().map_or(0, |k| k.span().start);
            return Err(problem(
                at,
                "every step weighs 0: nothing could be scored".into(),
            ));
        }
        let secs = |value: &Option<Spanned<f64>>, what: &str| -> Result<Option<f64>, Error> {
            let Some(value) = value else { return Ok(None) };
            let v = *value.get_ref();
            if v.is_finite() && v > 0.0 && v <= 86_400.0 {
                Ok(Some(v))
            } else {
                Err(problem(
                    value.span().start,
                    format!("{what} = {v}: give a number of seconds above 0 (at most a day)"),
                ))
            }
        };
        let limits = Limits {
            test_secs: secs(&file.limits.timeout, "timeout")?,
            budget_secs: secs(&file.limits.budget, "budget")?,
            build_secs: secs(&file.limits.build_timeout, "build_timeout")?,
            min_score: match &file.limits.min_score {
                Some(m) if !(0.0..=100.0).contains(m.get_ref()) => {
                    return Err(problem(
                        m.span().start,
                        format!("min_score = {}: give a score from 0 to 100", m.get_ref()),
                    ));
                }
                m => m.as_ref().map(|m| *m.get_ref()),
            },
        };
        let names: BTreeSet<String> = crate::lab::suite::test_names()
            .into_iter()
            .chain(slugs.iter().cloned())
            .collect();
        let mut tests = BTreeMap::new();
        for (name, visibility) in file.gradescope.tests {
            if !names.contains(name.get_ref()) {
                return Err(problem(
                    name.span().start,
                    format!(
                        "`{}` is neither a step nor a test of the suite{}",
                        name.get_ref(),
                        did_you_mean(name.get_ref(), &names)
                    ),
                )
                .with_next(
                    "name a step by its function (claim_many) or a test in full (step8::many_owners_repeatedly); `fencelab check --list` lists every test",
                ));
            }
            tests.insert(name.into_inner(), visibility);
        }
        Ok(Course {
            weights,
            limits,
            gradescope: Gradescope {
                visibility: file.gradescope.visibility,
                stdout_visibility: file.gradescope.stdout_visibility,
                tests,
            },
            reveal: file.mine.reveal,
        })
    }
}

#[cfg(test)]
mod tests;
