//! What `verify` prints: a line per mutant as it finishes, then the kill
//! matrix and the details of every mutant not killed as declared.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::{Baseline, MutantReport, Progress, Report};
use crate::engine::outcome::{MutantOutcome, TestOutcome};
use crate::lab::suite;
use crate::output::printer::{Printer, Verb, indent};

impl Printer {
    /// The outcome's label, padded to `width`, coloured by how it went.
    fn outcome_label(&self, outcome: MutantOutcome, as_declared: bool, width: usize) -> String {
        let label = format!("{:<width$}", outcome.label());
        match (outcome, as_declared) {
            (_, true) => self.out.green(&label),
            (MutantOutcome::Survived | MutantOutcome::Stale | MutantOutcome::Unviable, _) => {
                self.out.red(&label)
            }
            _ => self.out.yellow(&label),
        }
    }

    /// The end of `verify`: the summary, the kill matrix, and the details of
    /// every mutant not killed as declared.
    pub fn verify_report(&mut self, report: &Report) {
        self.clear_progress();
        print!("{}", self.render_verify_report(report));
    }

    /// What `verify_report` prints.
    pub fn render_verify_report(&self, report: &Report) -> String {
        let mut out = String::new();
        if !report.baseline.passed {
            return out;
        }
        let _ = writeln!(out);
        out.push_str(&self.render_kill_matrix(report));
        let problems: Vec<&MutantReport> =
            report.mutants.iter().filter(|m| !m.as_declared).collect();
        for m in &problems {
            out.push_str(&self.render_mutant_details(m));
        }
        let s = &report.summary;
        let outcomes: Vec<String> = s.outcomes.iter().map(|(k, v)| format!("{v} {k}")).collect();
        let verdict = if s.not_as_declared == 0 {
            self.out
                .green(&format!("all {} mutants killed as declared", s.mutants))
        } else {
            self.out.red(&format!(
                "{} of {} mutants not killed as declared",
                s.not_as_declared, s.mutants
            ))
        };
        let _ = writeln!(
            out,
            "\nfencelab verify: {verdict} ({})",
            outcomes.join(", ")
        );
        if !report.baseline.flaky.is_empty() {
            let _ = writeln!(
                out,
                "{} flaky in the baseline, not trusted for kills: {}",
                self.out.yellow("warning:"),
                report.baseline.flaky.join(", ")
            );
        }
        if s.not_as_declared > 0 {
            let ids: Vec<&str> = problems.iter().map(|m| m.id.as_str()).collect();
            let _ = writeln!(
                out,
                "rerun them with: fencelab verify --exact {}",
                ids.join(" ")
            );
        }
        out
    }

    /// The kill matrix: rows are tests grouped by step, columns are mutants
    /// (numbered as listed below it).
    pub fn render_kill_matrix(&self, report: &Report) -> String {
        let mut out = String::new();
        let tests = suite::tests();
        let flaky: BTreeSet<&str> = report.baseline.flaky.iter().map(String::as_str).collect();
        let width = tests
            .iter()
            .map(|t| t.name.len())
            .max()
            .unwrap_or(10)
            .min(56);
        let _ = writeln!(out, "{}", self.out.bold("Kill matrix"));
        let _ = writeln!(
            out,
            "{}",
            self.out.dim("  K killed, as declared   k killed, not declared   x declared killer that passed\n  o declared survivor that passed   ! declared survivor that failed   . passed   - not run   ~ flaky")
        );
        let numbers: Vec<String> = (1..=report.mutants.len()).map(|n| n.to_string()).collect();
        let digits = numbers.last().map_or(1, String::len);
        for row in 0..digits {
            let header: String = numbers
                .iter()
                .map(|n| {
                    let padded = format!("{n:>digits$}");
                    format!("{} ", &padded[row..row + 1])
                })
                .collect();
            let _ = writeln!(out, "  {:width$}   {}", "", self.out.dim(&header));
        }
        let mut killing_nothing = Vec::new();
        let mut step = 0;
        for test in &tests {
            if test.step != step {
                step = test.step;
                let _ = writeln!(out, "  {}", self.out.cyan(&format!("step {step}")));
            }
            let mut kills = 0;
            let cells: String = report
                .mutants
                .iter()
                .map(|m| {
                    let killer = m.killers.contains(&test.name);
                    let survivor = m.survivors.contains(&test.name);
                    let cell = match m.tests.get(&test.name) {
                        None => self.out.dim("-"),
                        Some(_) if flaky.contains(test.name.as_str()) => self.out.yellow("~"),
                        Some(TestOutcome::Passed) if killer => self.out.red("x"),
                        Some(TestOutcome::Passed) if survivor => self.out.green("o"),
                        Some(TestOutcome::Passed) => self.out.dim("."),
                        Some(_) if survivor => {
                            kills += 1;
                            self.out.red("!")
                        }
                        Some(_) if killer => {
                            kills += 1;
                            self.out.green("K")
                        }
                        Some(_) => {
                            kills += 1;
                            self.out.yellow("k")
                        }
                    };
                    format!("{cell} ")
                })
                .collect();
            let name = test.name.split("::").nth(1).unwrap_or(&test.name);
            let name: String = name.chars().take(width - 2).collect();
            let _ = writeln!(out, "    {name:<w$} {cells}", w = width - 2);
            if kills == 0 {
                killing_nothing.push(test.name.clone());
            }
        }
        let _ = writeln!(out);
        for (n, m) in report.mutants.iter().enumerate() {
            let mark = if m.as_declared {
                self.out.green("✓")
            } else {
                self.out.red("✗")
            };
            let _ = writeln!(
                out,
                "  {:>digits$} {mark} {} {}",
                n + 1,
                m.id,
                self.out.dim(&format!("(step {})", m.step))
            );
        }
        if !killing_nothing.is_empty() && !report.filtered {
            let _ = writeln!(
                out,
                "\n{} ({}): {}",
                self.out.bold("Tests that kill no mutant"),
                killing_nothing.len(),
                killing_nothing.join(", ")
            );
        }
        out
    }

    /// Why a mutant was not killed as declared: its diff, what the compiler or
    /// the file said, and the relevant tests' messages.
    pub fn render_mutant_details(&self, m: &MutantReport) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\n{} {} {}  {}",
            self.out.bold("──"),
            self.out.bold(&m.id),
            self.out.dim(&format!("({}, step {})", m.path, m.step)),
            self.outcome_label(m.outcome, m.as_declared, 0)
        );
        let _ = writeln!(out, "{}", m.title);
        if !m.diff.is_empty() {
            // The report keeps the plain diff; colour it again here if allowed.
            for line in m.diff.lines() {
                let painted = if line.starts_with("---") || line.starts_with("+++") {
                    self.out.bold(line)
                } else if line.starts_with("@@") {
                    self.out.cyan(line)
                } else if line.starts_with('-') {
                    self.out.red(line)
                } else if line.starts_with('+') {
                    self.out.green(line)
                } else {
                    self.out.dim(line)
                };
                let _ = writeln!(out, "  {painted}");
            }
        }
        if let Some(detail) = &m.detail {
            let heading = match m.outcome {
                MutantOutcome::Unviable => "it does not compile:",
                _ => "it cannot be applied:",
            };
            let _ = writeln!(out, "{}", self.out.yellow(heading));
            for line in detail.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        for test in &m.missing_killers {
            match m.tests.get(test) {
                Some(TestOutcome::Passed) | None if !m.tests.is_empty() => {
                    let _ = writeln!(
                        out,
                        "{} {test} should kill it but passed",
                        self.out.red("✗")
                    );
                }
                _ if m.tests.is_empty() => {}
                _ => {
                    let _ = writeln!(
                        out,
                        "{} {test} should kill it but is flaky in the baseline",
                        self.out.red("✗")
                    );
                }
            }
        }
        for test in &m.failed_survivors {
            let _ = writeln!(
                out,
                "{} {test} should pass under it but did not:",
                self.out.red("✗")
            );
            if let Some(message) = m.tests.get(test).and_then(TestOutcome::message) {
                let _ = writeln!(out, "{}", indent(&message, 4));
            }
        }
        if !m.missing_killers.is_empty() && !m.killed_by.is_empty() {
            let _ = writeln!(out, "{}", self.out.yellow("it was killed by other tests:"));
        }
        if !m.as_declared {
            for kill in m
                .killed_by
                .iter()
                .filter(|k| !m.killers.contains(&k.test))
                .take(5)
            {
                let _ = writeln!(out, "  {} ({})", kill.test, kill.outcome);
                let _ = writeln!(out, "{}", indent(&kill.message, 4));
            }
        }
        out
    }
}

impl Progress for Printer {
    fn started(&mut self, mutants: usize, implementation: &str, mutants_dir: &str) {
        self.status(
            Verb::Verifying,
            &format!("{mutants} mutants of {implementation} from {mutants_dir}"),
        );
    }

    fn building(&mut self, implementations: usize) {
        self.build_started(implementations);
    }

    fn built(&mut self, implementations: usize, secs: f64) {
        self.build_finished(implementations, secs);
    }

    fn trial_done(&mut self, done: usize, total: usize) {
        self.trials(done, total);
    }

    fn baseline(&mut self, baseline: &Baseline) {
        if let Some(errors) = &baseline.compile_errors {
            self.line(&format!(
                "{} the implementation does not compile, so no mutant can be judged:\n{}",
                self.out.red("baseline failed:"),
                errors.trim_end()
            ));
            return;
        }
        let failing: Vec<&str> = baseline
            .tests
            .iter()
            .filter(|t| !t.runs.iter().any(TestOutcome::passed))
            .map(|t| t.test.as_str())
            .collect();
        if failing.is_empty() {
            self.status(
                Verb::Baseline,
                &format!(
                    "all {} tests pass on the unmutated implementation, twice ({:.1}s)",
                    baseline.tests.len(),
                    baseline.secs
                ),
            );
            return;
        }
        self.line(&format!(
            "{} {} of {} tests fail on the unmutated implementation, so no mutant can be judged:",
            self.out.red("baseline failed:"),
            failing.len(),
            baseline.tests.len()
        ));
        for t in baseline
            .tests
            .iter()
            .filter(|t| !t.runs.iter().any(TestOutcome::passed))
        {
            self.line(&format!("  {} ({})", t.test, t.runs[0].label()));
            if let Some(message) = t.runs[0].message() {
                self.line(&indent(&message, 4));
            }
        }
    }

    fn mutant(&mut self, m: &MutantReport) {
        let killers: Vec<&str> = m.killed_by.iter().map(|k| k.test.as_str()).collect();
        let shown = if killers.len() > 4 {
            format!(
                "{}, and {} more",
                killers[..4].join(", "),
                killers.len() - 4
            )
        } else {
            killers.join(", ")
        };
        let by = match m.outcome {
            MutantOutcome::Stale => {
                "its find text is not in the implementation exactly once".to_string()
            }
            MutantOutcome::Unviable => "it does not compile".to_string(),
            MutantOutcome::Survived => "every test passed".to_string(),
            _ => format!("by {shown}"),
        };
        let declared = if m.as_declared {
            String::new()
        } else {
            format!(" {}", self.out.red("(not as declared)"))
        };
        let line = format!(
            "{} {} {} {}{declared} {}",
            self.outcome_label(m.outcome, m.as_declared, 9),
            self.out.bold(&m.id),
            self.out.dim(&format!("step {}", m.step)),
            by,
            self.out.dim(&format!("{:.1}s", m.secs))
        );
        self.line(&line);
    }
}
