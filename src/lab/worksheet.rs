//! The lab's worksheet as data: the framing sections and the eight steps, each
//! with its contract, rationale and question, in Japanese and English.
//!
//! The text lives in `worksheet/lab.toml` and `worksheet/steps.toml`. Both files
//! are compiled into the binary ([`Worksheet::builtin`]) and can also be read
//! from a directory at run time ([`Worksheet::load`]), e.g. while the text is
//! being edited. Both paths check the same rules: exactly eight steps, numbered
//! 1 to 8 in file order, with the slugs of [`SLUGS`] in that order, and no empty
//! text in either language. Every error names the file, the line and the column.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Location;
use crate::lab::edition::Edition;
pub use crate::lab::lang::{Lang, Text};

/// The file holding the framing sections, inside a worksheet directory.
pub(crate) const LAB_FILE: &str = "lab.toml";
/// The file holding the steps, inside a worksheet directory.
pub(crate) const STEPS_FILE: &str = "steps.toml";

/// The steps' slugs in order: the functions of the contract, one per step.
pub const SLUGS: [&str; 8] = [
    "init_db",
    "enqueue",
    "state",
    "claim",
    "renew",
    "complete",
    "release",
    "claim_many",
];

const BUILTIN_DIR: &str = "worksheet";
const BUILTIN_LAB: &str = include_str!("../../worksheet/lab.toml");
const BUILTIN_STEPS: &str = include_str!("../../worksheet/steps.toml");
/// The file holding the Python edition's texts, inside a worksheet directory.
pub(crate) const PYTHON_FILE: &str = "python.toml";
const BUILTIN_PYTHON: &str = include_str!("../../worksheet/python.toml");

/// One step of the worksheet: a function of the contract and what to think
/// about before running its tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// 1 to 8, in worksheet order.
    pub number: u32,
    /// The name of the function the step is about, e.g. `claim`.
    pub slug: String,
    pub title: Text,
    /// What the function must do, precisely, in terms of the Rust API.
    pub contract: Text,
    /// Why the contract is the way it is.
    pub rationale: Text,
    /// What the learner answers before running the step's tests.
    pub question: Text,
}

impl Step {
    fn texts(&self) -> [(&'static str, &Text); 4] {
        [
            ("title", &self.title),
            ("contract", &self.contract),
            ("rationale", &self.rationale),
            ("question", &self.question),
        ]
    }
}

/// The sections framing the steps (`lab.toml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Lab {
    pub title: Text,
    /// The lab in one sentence.
    pub summary: Text,
    /// The stale worker story: why leases alone are not enough.
    pub why: Text,
    /// How leases and fences work, with the little timeline.
    pub how: Text,
    /// How the worksheet is used: predict, run, compare.
    pub exercise: Text,
    /// What the lab leaves out in real deployments.
    pub in_the_field: Text,
    /// Where the steps lead, and the closing exercise.
    pub next: Text,
}

impl Lab {
    fn texts(&self) -> [(&'static str, &Text); 7] {
        [
            ("title", &self.title),
            ("summary", &self.summary),
            ("why", &self.why),
            ("how", &self.how),
            ("exercise", &self.exercise),
            ("in_the_field", &self.in_the_field),
            ("next", &self.next),
        ]
    }
}

/// The whole worksheet, checked: eight steps in order, no empty text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Worksheet {
    pub(crate) lab: Lab,
    pub steps: Vec<Step>,
}

/// The shape of `python.toml`: the Python edition's own texts, put in place
/// of the shared ones that speak Rust.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PythonFile {
    summary: Text,
    in_the_field: Text,
    #[serde(default)]
    step: Vec<PythonStep>,
}

/// One step's texts in `python.toml`: its contract always, its rationale and
/// question where the shared ones speak Rust.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PythonStep {
    number: u32,
    slug: String,
    contract: Text,
    rationale: Option<Text>,
    question: Option<Text>,
}

/// The shape of `steps.toml`: an array of `[[step]]` tables.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepsFile {
    // A file without steps is reported by the validation, which says how many
    // are expected, rather than as a missing key.
    #[serde(default)]
    step: Vec<Step>,
}

impl Worksheet {
    /// The worksheet compiled into the binary.
    ///
    /// # Panics
    ///
    /// Only if the built-in files are broken, which a unit test rules out.
    pub fn builtin() -> Worksheet {
        let dir = Path::new(BUILTIN_DIR);
        match Worksheet::parse(dir, BUILTIN_LAB, BUILTIN_STEPS) {
            Ok(worksheet) => worksheet,
            Err(err) => panic!("the built-in worksheet is broken: {err}"),
        }
    }

    /// The worksheet of the Python edition, compiled into the binary: the
    /// shared texts, with `python.toml`'s in place of those that speak Rust.
    ///
    /// # Panics
    ///
    /// Only if the built-in files are broken, which a unit test rules out.
    pub fn python() -> Worksheet {
        let path = Path::new(BUILTIN_DIR).join(PYTHON_FILE);
        match Worksheet::builtin().in_python(&path, BUILTIN_PYTHON) {
            Ok(worksheet) => worksheet,
            Err(err) => panic!("the built-in Python worksheet is broken: {err}"),
        }
    }

    /// The built-in worksheet of `edition`.
    pub(crate) fn of(edition: Edition) -> Worksheet {
        match edition {
            Edition::Rust => Worksheet::builtin(),
            Edition::Python => Worksheet::python(),
        }
    }

    /// This worksheet with the texts of `src` (a `python.toml`) in place:
    /// one entry per step, in order, none empty.
    fn in_python(mut self, path: &Path, src: &str) -> Result<Worksheet, WorksheetError> {
        let file: PythonFile = from_toml(path, src)?;
        let invalid = |key: Vec<Key>, message: String| WorksheetError::Invalid {
            path: path.to_owned(),
            at: locate_key(src, &key),
            message,
        };
        if file.step.len() != self.steps.len() {
            return Err(invalid(
                vec![Key::Name("step")],
                format!(
                    "found {} steps, expected {}: one [[step]] per step, in order",
                    file.step.len(),
                    self.steps.len()
                ),
            ));
        }
        self.lab.summary = file.summary;
        self.lab.in_the_field = file.in_the_field;
        for (index, (step, python)) in self.steps.iter_mut().zip(file.step).enumerate() {
            if python.number != step.number || python.slug != step.slug {
                return Err(invalid(
                    vec![Key::Name("step"), Key::Index(index), Key::Name("number")],
                    format!(
                        "entry {} is step {} ({}), expected step {} ({}): the steps in order",
                        index + 1,
                        python.number,
                        python.slug,
                        step.number,
                        step.slug
                    ),
                ));
            }
            step.contract = python.contract;
            if let Some(rationale) = python.rationale {
                step.rationale = rationale;
            }
            if let Some(question) = python.question {
                step.question = question;
            }
        }
        self.validate().map_err(|problem| {
            // Every text in the Python file is checked here (the shared ones
            // were before); the key names the entry.
            invalid(problem.key, problem.message)
        })?;
        Ok(self)
    }

    /// Reads `lab.toml` and `steps.toml` from `dir` and checks them (the
    /// unit tests' way to try a worksheet's files; the binary uses the built-in one).
    #[cfg(test)]
    fn load(dir: &Path) -> Result<Worksheet, WorksheetError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|source| WorksheetError::Read { path, source })
        };
        let lab = read(LAB_FILE)?;
        let steps = read(STEPS_FILE)?;
        Worksheet::parse(dir, &lab, &steps)
    }

    /// The step with this number (1 to 8).
    pub fn step(&self, number: u32) -> Option<&Step> {
        self.steps.iter().find(|step| step.number == number)
    }

    /// The step about the function `slug`, e.g. `"claim"`.
    pub(crate) fn step_by_slug(&self, slug: &str) -> Option<&Step> {
        self.steps.iter().find(|step| step.slug == slug)
    }

    fn parse(dir: &Path, lab_src: &str, steps_src: &str) -> Result<Worksheet, WorksheetError> {
        let lab_path = dir.join(LAB_FILE);
        let steps_path = dir.join(STEPS_FILE);
        let lab: Lab = from_toml(&lab_path, lab_src)?;
        let steps: StepsFile = from_toml(&steps_path, steps_src)?;
        let worksheet = Worksheet {
            lab,
            steps: steps.step,
        };
        worksheet.validate().map_err(|problem| {
            let (path, src) = match problem.file {
                File::Lab => (lab_path, lab_src),
                File::Steps => (steps_path, steps_src),
            };
            WorksheetError::Invalid {
                at: locate_key(src, &problem.key),
                path,
                message: problem.message,
            }
        })?;
        Ok(worksheet)
    }

    fn validate(&self) -> Result<(), Problem> {
        for (section, text) in self.lab.texts() {
            check_text(text).map_err(|lang| Problem {
                file: File::Lab,
                key: vec![Key::Name(section), Key::Name(lang.code())],
                message: format!(
                    "[{section}] has no {lang} text: write the {lang} version of this section"
                ),
            })?;
        }

        let order = SLUGS.join(", ");
        if self.steps.len() != SLUGS.len() {
            let missing: Vec<&str> = SLUGS
                .iter()
                .copied()
                .filter(|slug| self.step_by_slug(slug).is_none())
                .collect();
            let (key, hint) = if self.steps.len() > SLUGS.len() {
                let extra = vec![Key::Name("step"), Key::Index(SLUGS.len())];
                (extra, "remove the steps after the eighth".to_owned())
            } else if missing.is_empty() {
                (vec![Key::Name("step")], format!("the steps are {order}"))
            } else {
                let hint = format!("add a [[step]] for {}", missing.join(", "));
                (vec![Key::Name("step")], hint)
            };
            return Err(Problem {
                file: File::Steps,
                key,
                message: format!(
                    "found {} steps, expected {}: {hint}",
                    self.steps.len(),
                    SLUGS.len()
                ),
            });
        }

        for (index, (step, slug)) in self.steps.iter().zip(SLUGS).enumerate() {
            let at =
                |field: &'static str| vec![Key::Name("step"), Key::Index(index), Key::Name(field)];
            let position = index + 1;
            if usize::try_from(step.number) != Ok(position) {
                return Err(Problem {
                    file: File::Steps,
                    key: at("number"),
                    message: format!(
                        "step {position} in file order has number {}: number the steps 1 to 8 in the order they appear",
                        step.number
                    ),
                });
            }
            if step.slug != slug {
                return Err(Problem {
                    file: File::Steps,
                    key: at("slug"),
                    message: format!(
                        "step {position} has slug `{}`, expected `{slug}`: the slugs are {order}, in that order",
                        step.slug
                    ),
                });
            }
            for (field, text) in step.texts() {
                check_text(text).map_err(|lang| {
                    let mut key = at(field);
                    key.push(Key::Name(lang.code()));
                    Problem {
                        file: File::Steps,
                        key,
                        message: format!(
                            "step {position} ({slug}) has no {lang} {field}: write the {lang} text"
                        ),
                    }
                })?;
            }
        }
        Ok(())
    }
}

/// The first language whose text is empty (after trimming), if any.
fn check_text(text: &Text) -> Result<(), Lang> {
    match Lang::ALL
        .into_iter()
        .find(|&lang| text.get(lang).is_empty())
    {
        Some(lang) => Err(lang),
        None => Ok(()),
    }
}

fn from_toml<T: for<'de> Deserialize<'de>>(path: &Path, src: &str) -> Result<T, WorksheetError> {
    toml::from_str(src).map_err(|err| WorksheetError::Parse {
        path: path.to_owned(),
        at: err.span().map(|span| Location::at(src, span.start)),
        message: err.message().trim().to_owned(),
    })
}

/// Which of the two files a validation problem is in.
enum File {
    Lab,
    Steps,
}

/// One step of a path to a value inside a TOML document.
enum Key {
    Name(&'static str),
    Index(usize),
}

/// A rule of the worksheet that a well-formed file breaks.
struct Problem {
    file: File,
    /// The value the problem is about; the nearest existing parent is shown if
    /// the value itself is missing.
    key: Vec<Key>,
    message: String,
}

/// Where the value at `key` starts in `src`, or where its nearest existing
/// parent does. `None` only if the document has none of it.
fn locate_key(src: &str, key: &[Key]) -> Option<Location> {
    let doc = toml::de::DeTable::parse(src).ok()?;
    let mut value = doc.get_ref().get(match key.first()? {
        Key::Name(name) => *name,
        Key::Index(_) => return None,
    })?;
    for part in &key[1..] {
        let next = match part {
            Key::Name(name) => value.get_ref().get(*name),
            Key::Index(index) => value.get_ref().get(*index),
        };
        match next {
            Some(next) => value = next,
            None => break,
        }
    }
    Some(Location::at(src, value.span().start))
}

/// Why a worksheet directory could not be loaded.
#[derive(Debug)]
pub(crate) enum WorksheetError {
    /// A file could not be read.
    #[cfg(test)]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file is not TOML, or not in the worksheet's shape (e.g. an unknown key).
    Parse {
        path: PathBuf,
        at: Option<Location>,
        message: String,
    },
    /// A file is in the worksheet's shape but breaks one of its rules.
    Invalid {
        path: PathBuf,
        at: Option<Location>,
        message: String,
    },
}

impl fmt::Display for WorksheetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, at, message, next) = match self {
            #[cfg(test)]
            WorksheetError::Read { path, source } => {
                return write!(
                    f,
                    "cannot read {}: {source}\n  next: give a directory that holds {LAB_FILE} and {STEPS_FILE}",
                    path.display()
                );
            }
            WorksheetError::Parse { path, at, message } => (
                path,
                at,
                message,
                "fix the file at that line (its header comment lists the keys it takes) and run again",
            ),
            WorksheetError::Invalid { path, at, message } => {
                (path, at, message, "fix the file at that line and run again")
            }
        };
        match at {
            Some(at) => {
                let line = at.line;
                write!(f, "{}:{line}:{}: {message}", path.display(), at.column)?;
                write!(f, "\n  {line} | {}", at.source_line)?;
            }
            None => write!(f, "{}: {message}", path.display())?,
        }
        write!(f, "\n  next: {next}")
    }
}

impl From<WorksheetError> for crate::error::Error {
    fn from(err: WorksheetError) -> crate::error::Error {
        // Its text already ends with the next step.
        crate::error::Error::input(err.to_string())
    }
}

impl std::error::Error for WorksheetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            #[cfg(test)]
            WorksheetError::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
