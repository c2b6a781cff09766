//! What `verify` prints: status lines while it runs (a line per mutant only
//! when verbose, or when it is not as declared), then, last, the summary: the
//! details of every mutant not as declared, the kill matrix (all of it when
//! verbose, the problem mutants' columns otherwise), the mutants by step and
//! the verdict. A green run fits one screen.

use std::fmt::Write as _;

use super::details::{outcome_label, render_baseline_failure, render_mutant_details};
use super::matrix::{render_kill_matrix, render_kill_matrix_of, render_killing_nothing};
use super::wheats::render_wheats;
use super::words::{self, words};
use super::{MutantReport, Report, Update};
use crate::engine::Event;
use crate::engine::outcome::MutantOutcome;
use crate::lab::mutant::Mutant;
use crate::lab::worksheet::SLUGS;
use crate::output::printer::{Layout, Printer, Verb};
use crate::output::progress::Progress;
use crate::output::width::{display_width, pad_right, truncate, wrap};

/// What `verify` prints last, on stdout.
pub fn render_verify_report(layout: &Layout, report: &Report) -> String {
    if !report.baseline.passed {
        return render_baseline_failure(layout, report);
    }
    let w = words(layout.lang);
    let mut out = String::new();
    let problems: Vec<usize> = (0..report.mutants.len())
        .filter(|&m| !report.mutants[m].as_declared)
        .collect();
    if layout.quiet() {
        for &m in &problems {
            let _ = writeln!(out, "{}", mutant_line(layout, &report.mutants[m]));
        }
    } else {
        for &m in &problems {
            out.push_str(&render_mutant_details(layout, &report.mutants[m]));
        }
        let matrix = if layout.verbose() {
            render_kill_matrix(layout, report)
        } else {
            render_kill_matrix_of(layout, report, &problems)
        };
        if !matrix.is_empty() {
            let _ = write!(out, "\n{matrix}");
        }
        if layout.verbose() {
            let nothing = render_killing_nothing(layout, report);
            if !nothing.is_empty() {
                let _ = write!(out, "\n{nothing}");
            }
        }
        out.push_str(&render_by_step(layout, report));
    }
    if !report.baseline.flaky.is_empty() {
        let _ = writeln!(
            out,
            "{} {} {}",
            layout.out.yellow("warning:"),
            w.flaky,
            report.baseline.flaky.join(", ")
        );
    }
    if let Some(wheats) = report
        .wheats
        .as_ref()
        .filter(|w| !layout.quiet() || !w.failed.is_empty())
    {
        out.push_str(&render_wheats(layout, wheats));
    }
    let s = &report.summary;
    let outcomes: Vec<String> = s
        .outcomes
        .iter()
        .map(|(k, v)| format!("{v} {}", super::words::outcome_named(layout.lang, k)))
        .collect();
    let separator = match layout.lang {
        crate::lab::lang::Lang::En => ", ",
        crate::lab::lang::Lang::Ja => "、",
    };
    let verdict = words::verdict(
        layout.lang,
        s.mutants,
        s.not_as_declared,
        &outcomes.join(separator),
    );
    // A wheat that fails the suite fails the run as a mutant not as
    // declared does: the verdict says so, in red.
    let wheats_failed = report.wheats.as_ref().map_or(0, |w| w.failed.len());
    let verdict = match (wheats_failed, layout.lang) {
        (0, _) => verdict,
        (n, crate::lab::lang::Lang::En) => format!(
            "{verdict}; {n} of the wheats fail{} the suite",
            if n == 1 { "s" } else { "" }
        ),
        (n, crate::lab::lang::Lang::Ja) => {
            format!("{verdict}。ただし正しい実装（wheat）{n} 個がスイートに通りません")
        }
    };
    let verdict = if s.not_as_declared == 0 && wheats_failed == 0 {
        layout.out.green(&verdict)
    } else {
        layout.out.red(&verdict)
    };
    let _ = writeln!(
        out,
        "\n{}",
        wrap(&format!("fencelab verify: {verdict}"), layout.width)
    );
    if s.not_as_declared > 0 {
        let ids: Vec<String> = problems
            .iter()
            .map(|&m| crate::output::paths::shell_word(&report.mutants[m].id))
            .collect();
        let _ = writeln!(
            out,
            "{} {} --exact {}",
            w.rerun,
            report.rerun,
            ids.join(" ")
        );
    } else if !layout.verbose() && !layout.quiet() {
        let _ = writeln!(
            out,
            "{}",
            layout.out.dim(&wrap(w.matrix_hint, layout.width))
        );
    }
    out
}

/// The mutants by step: how many, how many as declared.
fn render_by_step(layout: &Layout, report: &Report) -> String {
    let w = words(layout.lang);
    let mut out = String::new();
    let _ = writeln!(out, "\n{}", layout.out.bold(w.by_step));
    for (i, slug) in SLUGS.iter().enumerate() {
        let step = i as u32 + 1;
        let of_step: Vec<&MutantReport> =
            report.mutants.iter().filter(|m| m.step == step).collect();
        if of_step.is_empty() {
            continue;
        }
        let declared = of_step.iter().filter(|m| m.as_declared).count();
        let tally = words::step_tally(layout.lang, of_step.len(), declared);
        let tally = if declared == of_step.len() {
            layout.out.green(&tally)
        } else {
            layout.out.red(&tally)
        };
        let _ = writeln!(out, "  {} {step}  {} {tally}", w.step, pad_right(slug, 11));
    }
    out
}

/// A mutant's one line: its outcome, id, step, what killed it, and the
/// time its tests took, fitted to the width.
fn mutant_line(layout: &Layout, m: &MutantReport) -> String {
    let w = words(layout.lang);
    let mark = if m.as_declared {
        layout.out.green("✓")
    } else {
        layout.out.red("✗")
    };
    let head = format!(
        "{mark} {} {} {}",
        outcome_label(layout, m.outcome, m.as_declared, 9),
        layout.out.bold(&m.id),
        layout.out.dim(&format!("{} {}", w.step, m.step)),
    );
    let time = words::test_time(layout.lang, m.secs);
    let fixed = display_width(&head) + 1;
    // The time goes first when the line is short of room; a mutant that
    // ran no test (stale, unviable) has none.
    let ran = !m.tests.is_empty();
    let (time, fixed) = if ran && layout.width >= fixed + display_width(&time) + 30 {
        (
            format!(" {}", layout.out.dim(&time)),
            fixed + display_width(&time) + 1,
        )
    } else {
        (String::new(), fixed)
    };
    let room = layout.width.saturating_sub(fixed).max(10);
    let by = match m.outcome {
        MutantOutcome::Stale => w.find_not_once.to_string(),
        MutantOutcome::Unviable => w.does_not_compile.trim_end_matches(':').to_string(),
        MutantOutcome::Survived if m.equivalent.is_some() => {
            format!("{} ({})", w.every_test_passed, w.equivalent)
        }
        MutantOutcome::Survived => w.every_test_passed.to_string(),
        _ => {
            // As many killers as fit, then how many more.
            let names: Vec<&str> = m
                .killed_by
                .iter()
                .map(|k| k.test.split_once("::").map_or(k.test.as_str(), |(_, n)| n))
                .collect();
            let room = room.saturating_sub(display_width(w.by) + 1);
            let mut shown: Vec<&str> = Vec::new();
            for (i, name) in names.iter().enumerate() {
                let rest = names.len() - i - 1;
                let tail = if rest > 0 {
                    display_width(&words::more(layout.lang, rest))
                } else {
                    0
                };
                let used: usize = shown.iter().map(|n| n.len() + 2).sum();
                if shown.is_empty() || used + name.len() + tail <= room {
                    shown.push(name);
                } else {
                    break;
                }
            }
            let mut text = format!("{} {}", w.by, shown.join(", "));
            if shown.len() < names.len() {
                text.push_str(&words::more(layout.lang, names.len() - shown.len()));
            }
            if display_width(&text) > room && names.len() > 1 {
                // Not even one name fits with the count: the name cut short.
                let tail = words::more(layout.lang, names.len() - 1);
                let name = truncate(names[0], room.saturating_sub(display_width(&tail) + 1));
                text = format!("{} {name}{tail}", w.by);
            }
            text
        }
    };
    format!("{head} {}{time}", truncate(&by, room))
}

/// `fencelab verify --list`: every mutant's id, step and title, without
/// building anything. Titles are cut to the width only on a terminal
/// (`cut`): piped, into `grep` say, every title is whole.
pub(crate) fn render_mutant_list(layout: &Layout, mutants: &[Mutant], cut: bool) -> String {
    let w = words(layout.lang);
    let id_width = mutants.iter().map(|m| m.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for m in mutants {
        let mark = if m.equivalent.is_some() {
            format!(" ({})", w.equivalent)
        } else {
            String::new()
        };
        let head = format!(
            "{}  {}  ",
            pad_right(&m.id, id_width),
            format_args!("{} {}", w.step, m.step)
        );
        let title = format!("{}{mark}", m.titles.get(layout.lang));
        let title = if cut {
            truncate(
                &title,
                layout.width.saturating_sub(display_width(&head)).max(20),
            )
        } else {
            title
        };
        let _ = writeln!(out, "{head}{title}");
    }
    out
}

/// `verify`'s live display: the printer's progress for the engine's events,
/// a status line when it starts and when the baseline passes, and per mutant
/// its line (when verbose, or when it is not as declared) or a count.
pub struct Live<'p> {
    printer: &'p mut Printer,
    done: usize,
    total: usize,
}

impl<'p> Live<'p> {
    pub(crate) fn new(printer: &'p mut Printer) -> Live<'p> {
        Live {
            printer,
            done: 0,
            total: 0,
        }
    }
}

impl Progress<Update> for Live<'_> {
    fn engine(&mut self, event: &Event<'_>) {
        self.printer.engine(event);
    }

    fn own(&mut self, update: &Update) {
        let printer = &mut *self.printer;
        let lang = printer.lang;
        match update {
            Update::Started {
                mutants,
                implementation,
                mutants_dir,
            } => {
                self.done = 0;
                self.total = *mutants;
                let text = words::verifying(lang, *mutants, implementation, mutants_dir);
                printer.status(Verb::Verifying, &text);
            }
            // A failed baseline is the summary's to show, last.
            Update::Baseline(baseline) if baseline.passed => {
                let text = words::baseline_passed(lang, baseline.tests.len(), baseline.secs);
                printer.status(Verb::Baseline, &text);
            }
            Update::Baseline(_) => {}
            Update::Mutant(m) => {
                self.done += 1;
                let layout = printer.layout();
                if layout.verbose() || (!m.as_declared && !layout.quiet()) {
                    printer.line(&mutant_line(&layout, m));
                } else {
                    let text = format!(
                        "  {}/{} · {} {}",
                        self.done,
                        self.total,
                        words::outcome(m.outcome, lang),
                        m.id
                    );
                    printer.progress(&text);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::super::Baseline;
    use super::super::report::{LimitInfo, finish, summarize};
    use super::*;
    use crate::engine::outcome::{FailureKind, TestOutcome};
    use crate::lab::lang::Lang;
    use crate::lab::mutant;
    use crate::output::printer::Verbosity;

    /// A report of the built-in mutant `killed`, killed as declared, and
    /// `stale`, whose `find` is no longer in the reference.
    fn report(killed: &str, stale: &str) -> Report {
        let all = mutant::builtin();
        let of = |id: &str| all.iter().find(|m| m.id == id).unwrap().clone();
        let killed = of(killed);
        let tests: BTreeMap<String, TestOutcome> = crate::lab::suite::test_names()
            .into_iter()
            .map(|t| {
                let outcome = if killed.killers.contains(&t) {
                    TestOutcome::Failed {
                        kind: FailureKind::Assertion,
                        message: "observation: x\nexpected: 1\nactual: 2".into(),
                    }
                } else {
                    TestOutcome::Passed
                };
                (t, outcome)
            })
            .collect();
        let mut killed = finish(
            &killed,
            MutantOutcome::Killed,
            &tests,
            &BTreeSet::new(),
            String::new(),
            None,
        );
        killed.secs = 1.0;
        let stale = finish(
            &of(stale),
            MutantOutcome::Stale,
            &BTreeMap::new(),
            &BTreeSet::new(),
            String::new(),
            Some("its `find` text does not occur in src/lease.rs".into()),
        );
        assert!(killed.as_declared && !stale.as_declared);
        let mutants = vec![killed, stale];
        Report {
            schema: 1,
            implementation: "src/lease.rs".into(),
            file: "src/lease.rs".into(),
            mutants_dir: "mutants".into(),
            build_secs: 1.0,
            baseline: Baseline {
                passed: true,
                compile_errors: None,
                tests: Vec::new(),
                flaky: Vec::new(),
                secs: 1.0,
            },
            limit: LimitInfo {
                fixed_secs: None,
                floor_secs: 10.0,
                factor: 5,
            },
            summary: summarize(&mutants),
            mutants,
            filtered: false,
            predictions: None,
            wheats: None,
            secs: 2.0,
            source: String::new(),
            rerun: "fencelab verify".into(),
        }
    }

    #[test]
    fn a_stale_mutant_gets_no_kill_matrix_block_of_its_own() {
        let report = report("claim-expiry-inclusive", "release-resets-fence");
        for lang in Lang::ALL {
            let normal = render_verify_report(&Layout::plain().in_lang(lang), &report);
            let heading = words(lang).kill_matrix;
            assert!(!normal.contains(heading), "{normal}");
            assert!(
                normal.contains("release-resets-fence"),
                "its details: {normal}"
            );
            // The whole matrix has the column of the mutant that ran, not the other's.
            let verbose = render_verify_report(
                &Layout::plain().in_lang(lang).at(Verbosity::Verbose),
                &report,
            );
            let matrix = &verbose[verbose.find(heading).unwrap()..];
            assert!(matrix.contains("1 ✓ claim-expiry-inclusive"), "{matrix}");
            assert!(!matrix.contains("2 ✗ release-resets-fence"), "{matrix}");
        }
    }

    #[test]
    fn a_mutant_that_ran_no_test_has_no_test_time() {
        let report = report("claim-expiry-inclusive", "release-resets-fence");
        let printer = Layout::plain();
        let killed = mutant_line(&printer, &report.mutants[0]);
        assert!(killed.ends_with("1.0s of tests"), "{killed}");
        let stale = mutant_line(&printer, &report.mutants[1]);
        assert!(!stale.contains("of tests"), "{stale}");
        assert!(display_width(&stale) <= 80, "{stale}");
    }

    #[test]
    fn a_green_run_fits_80_columns_in_both_languages() {
        let mut report = report("claim-expiry-inclusive", "release-resets-fence");
        report.mutants.pop();
        report.summary = summarize(&report.mutants);
        for lang in Lang::ALL {
            let text = render_verify_report(&Layout::plain().in_lang(lang).with_width(80), &report);
            for line in text.lines() {
                assert!(display_width(line) <= 80, "{line}");
            }
        }
    }

    #[test]
    fn a_wheat_that_fails_the_suite_is_in_the_verdict() {
        use crate::commands::verify::report::{WheatFailure, WheatsChecked};
        let mut report = report("claim-expiry-inclusive", "release-resets-fence");
        report.mutants.pop();
        report.summary = summarize(&report.mutants);
        report.wheats = Some(WheatsChecked {
            checked: 2,
            passed: 1,
            failed: vec![WheatFailure {
                id: "broken".into(),
                path: "wheats/broken.toml".into(),
                tests: vec!["step4::reclaims_at_exact_expiry".into()],
                detail: String::new(),
            }],
        });
        let verdict = |report: &Report, lang| {
            let text = render_verify_report(&Layout::plain().in_lang(lang).with_width(80), report);
            let at = text.find("fencelab verify:").expect("a verdict");
            text[at..].replace('\n', " ")
        };
        let en = verdict(&report, Lang::En);
        assert!(en.contains("1 of the wheats fails the suite"), "{en}");
        assert!(verdict(&report, Lang::Ja).contains("wheat）1 個がスイートに通りません"));
        report.wheats = None;
        assert!(!verdict(&report, Lang::En).contains("wheats"));
    }

    #[test]
    fn the_list_cuts_titles_only_on_a_terminal() {
        let mutants = mutant::builtin();
        let printer = Layout::plain().with_width(80);
        let piped = render_mutant_list(&printer, &mutants, false);
        assert!(!piped.contains('…'), "{piped}");
        for m in &mutants {
            assert!(piped.contains(&m.title), "{} is whole", m.id);
        }
        let terminal = render_mutant_list(&printer, &mutants, true);
        assert!(
            terminal.contains('…'),
            "some title is longer than 80 columns"
        );
        assert!(
            terminal.lines().all(|l| display_width(l) <= 80),
            "{terminal}"
        );
    }
}
