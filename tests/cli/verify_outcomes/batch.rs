//! The outcomes fixture's one run, stored on disk (`common::stored`) for
//! every test of this module, in this process or another. A `Report` is not
//! read back: the batch holds the report as `--json` writes it, and each text
//! the tests check, rendered from the run.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use fencelab::commands::verify::{self, Report, Update};
use fencelab::engine::Event;
use fencelab::engine::outcome::TestOutcome;
use fencelab::lab::lang::Lang;
use fencelab::lab::mutant::Mutant;
use fencelab::output::printer::{Layout, Verbosity};
use fencelab::output::progress::Progress;

use crate::common::root;

/// The widths the kill matrix is rendered at.
pub(super) const WIDTHS: [usize; 4] = [120, 100, 80, 60];

/// How many copies of the fixture's mutants the HTML page holds (renamed
/// `ID-0`, `ID-1`...): the scale of a real run.
pub(super) const COPIES: usize = 12;

/// What the tests read of the run.
#[derive(Serialize, Deserialize)]
pub(super) struct Outcomes {
    /// The report as `verify --json` writes it.
    pub json: Value,
    /// The per-mutant progress lines, in the order they came.
    pub lines: Vec<String>,
    /// What a user reads of each mutant (`render_mutant_details`), by id.
    pub details: BTreeMap<String, String>,
    /// The report's screen at each verbosity and language (`screen`).
    pub screens: BTreeMap<String, String>,
    /// The kill matrix at each of `WIDTHS`.
    pub matrices: BTreeMap<usize, String>,
    /// Stryker's report, in English.
    pub stryker: Value,
    /// The HTML page of `COPIES` times the mutants, by language code.
    pub html: BTreeMap<String, String>,
    /// GitHub's annotations, as workflow commands too, and the step summary.
    pub annotations: Vec<Annotation>,
    pub commands: Vec<String>,
    pub summary: String,
}

/// A GitHub annotation's title and place.
#[derive(Serialize, Deserialize)]
pub(super) struct Annotation {
    pub title: String,
    pub file: Option<String>,
    pub line: Option<usize>,
}

/// One mutant's report, as the JSON has it.
#[derive(Debug, Deserialize)]
pub(super) struct MutantJson {
    pub id: String,
    pub title: String,
    /// As `MutantOutcome::label` names it.
    pub outcome: String,
    pub as_declared: bool,
    pub equivalent: Option<String>,
    pub killed_by: Vec<Kill>,
    pub missing_killers: Vec<String>,
    pub failed_survivors: Vec<String>,
    pub detail: Option<String>,
    pub tests: BTreeMap<String, TestOutcome>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Kill {
    pub test: String,
    pub outcome: String,
    pub message: String,
    pub observation: Option<KillObservation>,
}

#[derive(Debug, Deserialize)]
pub(super) struct KillObservation {
    pub expected: String,
    pub actual: String,
}

impl Outcomes {
    /// Every mutant's report, in the run's order.
    pub fn mutants(&self) -> Vec<MutantJson> {
        serde_json::from_value(self.json["mutants"].clone()).expect("the mutants' reports")
    }

    /// The screen at `verbosity` in `lang`.
    pub fn screen(&self, verbosity: Verbosity, lang: Lang) -> &str {
        &self.screens[&screen(verbosity, lang)]
    }
}

fn screen(verbosity: Verbosity, lang: Lang) -> String {
    format!("{verbosity:?} {}", lang.code())
}

/// The run, built once by whichever test needs it first.
pub(super) fn outcomes() -> &'static Outcomes {
    static READ: OnceLock<Outcomes> = OnceLock::new();
    READ.get_or_init(|| {
        let inputs = [
            &root().join("tests/fixtures/outcomes"),
            &root().join("src/lease.rs"),
        ];
        let inputs: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
        crate::common::stored::stored("verify-outcomes", &inputs, build)
    })
}

/// Collects the per-mutant lines as the terminal would show them.
#[derive(Default)]
struct Lines(Vec<String>);

impl Progress<Update> for Lines {
    fn engine(&mut self, _: &Event<'_>) {}
    fn own(&mut self, update: &Update) {
        if let Update::Mutant(report) = update {
            self.0
                .push(format!("{} {}", report.id, report.outcome.label()));
        }
    }
}

fn build() -> Outcomes {
    let options = super::options("tests/fixtures/outcomes");
    let mutants = verify::load(&options).expect("the fixture mutants load");
    let scratch = crate::common::scratch();
    let mut lines = Lines::default();
    let report = verify::run(&options, &mutants, &scratch, &mut lines).expect("verify runs");
    let mut screens = BTreeMap::new();
    for verbosity in [Verbosity::Quiet, Verbosity::Normal, Verbosity::Verbose] {
        for lang in Lang::ALL {
            let layout = Layout::plain().at(verbosity).in_lang(lang);
            screens.insert(
                screen(verbosity, lang),
                verify::render_verify_report(&layout, &report),
            );
        }
    }
    let (scaled, scaled_mutants) = scaled(&report, &mutants);
    let annotations = verify::github::annotations(&report, &mutants);
    Outcomes {
        json: serde_json::to_value(&report).unwrap(),
        lines: lines.0,
        details: report
            .mutants
            .iter()
            .map(|m| {
                let text = verify::render_mutant_details(&Layout::plain(), m);
                (m.id.clone(), text)
            })
            .collect(),
        screens,
        matrices: WIDTHS
            .into_iter()
            .map(|width| {
                let layout = Layout::plain().with_width(width);
                (width, verify::render_kill_matrix(&layout, &report))
            })
            .collect(),
        stryker: verify::stryker::report(&report, &mutants, Lang::En),
        html: Lang::ALL
            .into_iter()
            .map(|lang| {
                let page = verify::html::render(&scaled, &scaled_mutants, lang);
                (lang.code().to_string(), page)
            })
            .collect(),
        commands: fencelab::output::github::commands(&annotations),
        annotations: annotations
            .into_iter()
            .map(|a| Annotation {
                title: a.title,
                file: a.file,
                line: a.line,
            })
            .collect(),
        summary: verify::github::summary(&report),
    }
}

/// The report with `COPIES` times the fixture's mutants (renamed), for scale.
fn scaled(report: &Report, base: &[Mutant]) -> (Report, Vec<Mutant>) {
    let mut report = report.clone();
    let originals = std::mem::take(&mut report.mutants);
    report.mutants = (0..COPIES)
        .flat_map(|i| {
            originals.iter().map(move |m| {
                let mut m = m.clone();
                m.id = format!("{}-{i}", m.id);
                m
            })
        })
        .collect();
    let mutants = (0..COPIES)
        .flat_map(|i| {
            base.iter().map(move |m| {
                let mut m = m.clone();
                m.id = format!("{}-{i}", m.id);
                m
            })
        })
        .collect();
    (report, mutants)
}
