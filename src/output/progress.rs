//! The one shape in which a front end is told how its run goes, as nextest's
//! reporter is: the engine's events (`engine::Event`: the build, the trials,
//! each scenario as it finishes) as they come, and then each of the front
//! end's own results (a mutant's report, a submission's) as soon as the
//! front end has read it from its scenario. `verify`, `check`, `grade`,
//! `check --mine` and `grade --tests` all take a `&mut dyn Progress<_>`; the
//! printer is one (the build and the trials), a command's live display is
//! another (it adds its own lines per result and counts them itself), and a
//! test's recorder could be a third.

use crate::engine::Event;
use crate::output::printer::Printer;

/// Whoever follows a run. `Own` is what the front end says of its own as it
/// goes (`verify::Update`, a submission's report; `()`: nothing).
pub trait Progress<Own: ?Sized = ()> {
    /// What the engine says, as it says it.
    fn engine(&mut self, event: &Event<'_>);
    /// What the front end says, as soon as it knows it (a result it has
    /// read from a finished scenario, say).
    fn own(&mut self, _said: &Own) {}
}

/// A run whose trials alone are shown, each as `label: done/total` (judging a
/// learner's tests: its builds are quick and say nothing).
pub(crate) struct Trials<'p> {
    printer: &'p mut Printer,
    label: String,
}

impl<'p> Trials<'p> {
    pub(crate) fn new(printer: &'p mut Printer, label: impl Into<String>) -> Trials<'p> {
        Trials {
            printer,
            label: label.into(),
        }
    }
}

impl Progress for Trials<'_> {
    fn engine(&mut self, event: &Event<'_>) {
        if let Event::Trial { done, total } = event {
            let text = format!("{}: {done}/{total}", self.label);
            self.printer.progress(&text);
        }
    }
}

/// A run no one follows (a test's, say).
pub struct Silent;

impl<Own: ?Sized> Progress<Own> for Silent {
    fn engine(&mut self, _: &Event<'_>) {}
}

/// The printer follows a run as progress: the build (a ticker), the trials (a
/// count); a finished scenario is the front end's to show.
impl Progress for Printer {
    fn engine(&mut self, event: &Event<'_>) {
        match event {
            Event::Building {
                implementations,
                detail,
            } => self.build_started(*implementations, Some(detail)),
            Event::Built {
                implementations,
                secs,
            } => self.build_finished(*implementations, *secs),
            Event::Trial { done, total } => self.trials(*done, *total),
            Event::Finished { .. } => {}
        }
    }
}
