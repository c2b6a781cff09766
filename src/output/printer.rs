//! Everything fencelab prints for people: progress on stderr (on a terminal
//! only), results on stdout. One place, so that every front end reads alike.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};

use crate::commands::verify::{Baseline, MutantReport, Progress, Report};
use crate::engine::outcome::{MutantOutcome, TestOutcome};
use crate::lab::suite;
use crate::output::style::{ColorChoice, Style};

/// Writes a front end's output.
pub struct Printer {
    pub out: Style,
    pub err: Style,
    /// Whether to draw a progress line on stderr.
    progress: bool,
    /// Whether a progress line is on screen now.
    drawn: bool,
}

impl Printer {
    pub fn new(color: ColorChoice) -> Printer {
        Printer {
            out: Style::stdout(color),
            err: Style::stderr(color),
            progress: std::io::stderr().is_terminal(),
            drawn: false,
        }
    }

    /// A printer that writes no progress and no colour (for tests and pipes).
    pub fn plain() -> Printer {
        Printer {
            out: Style::plain(),
            err: Style::plain(),
            progress: false,
            drawn: false,
        }
    }

    fn clear_progress(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[2K");
            self.drawn = false;
        }
    }

    /// A line of results on stdout.
    pub fn line(&mut self, text: &str) {
        self.clear_progress();
        println!("{text}");
    }

    /// A status line on stderr ("Building ...").
    pub fn status(&mut self, verb: &str, text: &str) {
        self.clear_progress();
        eprintln!("{:>12} {text}", self.err.green(&self.err.bold(verb)));
    }

    /// A transient progress line on stderr, on a terminal only.
    pub fn progress(&mut self, text: &str) {
        if self.progress {
            eprint!("\r\x1b[2K{}", self.err.dim(text));
            let _ = std::io::stderr().flush();
            self.drawn = true;
        }
    }

    /// A warning on stderr.
    pub fn warning(&mut self, text: &str) {
        self.clear_progress();
        eprintln!("{} {text}", self.err.yellow(&self.err.bold("warning:")));
    }

    /// An error, with its next step, on stderr.
    pub fn error(&mut self, err: &crate::error::Error) {
        self.clear_progress();
        let text = err.to_string();
        eprintln!("{} {text}", self.err.red(&self.err.bold("error:")));
    }

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

/// `text` with every line indented by `n` spaces.
pub fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Progress for Printer {
    fn started(&mut self, mutants: usize, implementation: &str, mutants_dir: &str) {
        self.status(
            "Verifying",
            &format!("{mutants} mutants of {implementation} from {mutants_dir}"),
        );
    }

    fn built(&mut self, implementations: usize, secs: f64) {
        self.status(
            "Built",
            &format!("the judge and {implementations} implementations in {secs:.1}s"),
        );
    }

    fn trial_done(&mut self, done: usize, total: usize) {
        if done.is_multiple_of(8) || done == total {
            self.progress(&format!("  running tests: {done}/{total}"));
        }
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
                "Baseline",
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

/// The words `check` prints around the worksheet's own text, per language.
struct CheckWords {
    not_started: &'static str,
    passing: &'static str,
    compile: &'static str,
    contract: &'static str,
    rationale: &'static str,
    failing: &'static str,
    observed: &'static str,
    expected: &'static str,
    actual: &'static str,
    rerun: &'static str,
    or_tests: &'static str,
    done: &'static str,
    start_here: &'static str,
    printed: &'static str,
}

fn check_words(lang: crate::lab::worksheet::Lang) -> CheckWords {
    match lang {
        crate::lab::worksheet::Lang::Ja => CheckWords {
            not_started: "未着手",
            passing: "合格",
            compile: "src/lib.rs がコンパイルできません。コンパイラのメッセージ:",
            contract: "契約",
            rationale: "判断の根拠",
            failing: "失敗しているテスト",
            observed: "観測",
            expected: "期待",
            actual: "実際",
            rerun: "このステップだけをもう一度",
            or_tests: "テストだけなら",
            done: "すべてのステップが合格しました。",
            start_here: "は未着手です。`todo!()` を契約どおりの実装に置き換えてください。",
            printed: "出力",
        },
        crate::lab::worksheet::Lang::En => CheckWords {
            not_started: "not started",
            passing: "passing",
            compile: "src/lib.rs does not compile. The compiler says:",
            contract: "Contract",
            rationale: "Why",
            failing: "Failing tests",
            observed: "observed",
            expected: "expected",
            actual: "actual",
            rerun: "Rerun just this step",
            or_tests: "or only its tests",
            done: "Every step passes.",
            start_here: "is not started: replace its `todo!()` with an implementation of the contract.",
            printed: "printed",
        },
    }
}

impl Printer {
    /// What `check` prints: progress per step, then what the first failing
    /// step needs.
    pub fn render_check(
        &self,
        checked: &crate::commands::check::Checked,
        worksheet: &crate::lab::worksheet::Worksheet,
        lang: crate::lab::worksheet::Lang,
    ) -> String {
        use crate::commands::check::Checked;
        use crate::lab::observation::Observation;
        let w = check_words(lang);
        let s = &self.out;
        let mut out = String::new();
        let steps = match checked {
            Checked::DoesNotCompile { errors } => {
                let _ = writeln!(out, "{}\n\n{}", s.red(w.compile), errors.trim_end());
                return out;
            }
            Checked::Ran { steps } => steps,
        };
        for step in steps {
            let slug = worksheet.step(step.step).map_or("", |st| st.slug.as_str());
            let status = if step.complete() {
                s.green(&format!("{}/{} {}", step.passed, step.total, w.passing))
            } else if step.not_started {
                s.dim(w.not_started)
            } else {
                s.yellow(&format!("{}/{}", step.passed, step.total))
            };
            let _ = writeln!(out, "  step {}  {slug:<11} {status}", step.step);
        }
        let Some(first) = checked.first_failing() else {
            let _ = writeln!(out, "\n{}", s.green(w.done));
            return out;
        };
        let Some(step) = worksheet.step(first.step) else {
            return out;
        };
        let _ = writeln!(
            out,
            "\n{} {}",
            s.bold(&format!(
                "── step {}: {}",
                step.number,
                step.title.get(lang)
            )),
            s.bold("──")
        );
        if first.not_started {
            let _ = writeln!(
                out,
                "{} {}",
                s.yellow(&format!("`{}`", step.slug)),
                w.start_here
            );
        }
        let _ = writeln!(out, "\n{}\n{}", s.bold(w.contract), step.contract.get(lang));
        let _ = writeln!(
            out,
            "\n{}\n{}",
            s.bold(w.rationale),
            step.rationale.get(lang)
        );
        if !first.not_started {
            let _ = writeln!(out, "\n{}", s.bold(w.failing));
            for (test, outcome) in &first.failures {
                let _ = writeln!(out, "\n  {} {}", s.red("✗"), s.bold(test));
                let message = outcome.message().unwrap_or_default();
                match Observation::parse(&message) {
                    Some(o) => {
                        let _ = writeln!(out, "    {}: {}", w.observed, o.what);
                        if o.expected.contains('\n') || o.actual.contains('\n') {
                            let diff = crate::output::diff::unified(
                                &(o.expected.clone() + "\n"),
                                &(o.actual.clone() + "\n"),
                                w.expected,
                                w.actual,
                                *s,
                            );
                            let _ = writeln!(out, "{}", indent(diff.trim_end(), 4));
                        } else {
                            let width = w.expected.chars().count().max(w.actual.chars().count());
                            let pad = |label: &str| " ".repeat(width - label.chars().count());
                            let _ = writeln!(
                                out,
                                "    {}:{} {}",
                                w.expected,
                                pad(w.expected),
                                s.green(&o.expected)
                            );
                            let _ = writeln!(
                                out,
                                "    {}:{} {}",
                                w.actual,
                                pad(w.actual),
                                s.red(&o.actual)
                            );
                        }
                        if let Some(at) = o.location {
                            let _ = writeln!(out, "    {}", s.dim(&format!("at {at}")));
                        }
                        // What was printed during the test (the learner's own
                        // println!s) comes before the panic.
                        let printed: Vec<&str> = message
                            .lines()
                            .take_while(|l| !l.starts_with("panicked at "))
                            .collect();
                        let printed = printed.join("\n");
                        if !printed.trim().is_empty() {
                            let _ = writeln!(out, "    {}:", w.printed);
                            let _ = writeln!(out, "{}", indent(printed.trim_end(), 6));
                        }
                    }
                    None => {
                        let _ = writeln!(out, "{}", indent(message.trim_end(), 4));
                    }
                }
            }
        }
        let _ = writeln!(
            out,
            "\n{}: fencelab check --step {}\n{}: cargo test --test behaviour step{}::",
            w.rerun, step.number, w.or_tests, step.number
        );
        out
    }
}

impl Printer {
    /// The predictions beside what happened, and the score.
    pub fn render_predictions(
        &self,
        card: &crate::commands::predict::Scorecard,
        mutants: &[crate::lab::mutant::Mutant],
        lang: crate::lab::worksheet::Lang,
    ) -> String {
        use crate::lab::worksheet::Lang;
        let s = &self.out;
        let (title, predicted, happened, nothing, score, why) = match lang {
            Lang::Ja => ("予想と結果", "予想", "結果", "（なし）", "得点", "解説"),
            Lang::En => (
                "Predictions",
                "you predicted",
                "what happened",
                "(nothing)",
                "Score",
                "Why",
            ),
        };
        let mut out = String::new();
        let _ = writeln!(out, "\n{}", s.bold(title));
        for m in &card.mutants {
            let mark = match m.points {
                2 => s.green("✓"),
                1 => s.yellow("~"),
                _ => s.red("✗"),
            };
            let _ = writeln!(
                out,
                "\n{mark} {} {}  {}/{}",
                s.bold(&m.mutant),
                s.dim(&format!("(step {})", m.step)),
                m.points,
                m.max_points
            );
            let mut guess: Vec<String> = m
                .predicted_observation
                .map(|o| o.name().to_string())
                .into_iter()
                .collect();
            guess.extend(m.predicted_tests.iter().cloned());
            let guess = if guess.is_empty() {
                nothing.to_string()
            } else {
                guess.join(" · ")
            };
            let _ = writeln!(out, "    {predicted}: {guess}");
            let kinds: Vec<&str> = m.observations.iter().map(|o| o.name()).collect();
            let killers = if m.killers.len() > 3 {
                format!("{} (+{})", m.killers[..3].join(", "), m.killers.len() - 3)
            } else {
                m.killers.join(", ")
            };
            let _ = writeln!(out, "    {happened}: {} · {killers}", kinds.join(", "));
            if m.points < m.max_points
                && let Some(mutant) = mutants.iter().find(|x| x.id == m.mutant)
            {
                let _ = writeln!(out, "    {}: {}", s.dim(why), mutant.explanation.get(lang));
            }
        }
        let percent = (card.points * 100)
            .checked_div(card.max_points)
            .unwrap_or(0);
        let _ = writeln!(
            out,
            "\n{score}: {}/{} ({percent}%)",
            card.points, card.max_points
        );
        out
    }
}

impl Printer {
    /// What `grade` prints: per submission its score, per step its tests, and
    /// each failing test with its observation; with several submissions a
    /// table of them first.
    pub fn render_grade(&self, report: &crate::commands::grade::GradeReport) -> String {
        let s = &self.out;
        let mut out = String::new();
        if report.submissions.len() > 1 {
            let _ = writeln!(out, "{}", s.bold("Submissions"));
            let width = report
                .submissions
                .iter()
                .map(|r| r.name.len())
                .max()
                .unwrap_or(10)
                .max(10);
            let _ = writeln!(
                out,
                "  {:width$}  {:>7}  gate  steps 1-8",
                "submission", "score"
            );
            for r in &report.submissions {
                let gate = if r.passed_gate {
                    s.green("pass")
                } else {
                    s.red("FAIL")
                };
                let steps: Vec<String> = if r.compile_errors.is_some() {
                    vec!["does not compile".to_string()]
                } else {
                    r.steps
                        .iter()
                        .map(|st| format!("{}/{}", st.passed, st.total))
                        .collect()
                };
                let _ = writeln!(
                    out,
                    "  {:width$}  {:>7.2}  {gate}  {}",
                    r.name,
                    r.score,
                    steps.join(" ")
                );
            }
            let _ = writeln!(out);
        }
        for r in &report.submissions {
            let _ = writeln!(
                out,
                "{} {}",
                s.bold(&r.name),
                s.dim(&format!("({})", r.file))
            );
            if let Some(errors) = &r.compile_errors {
                let _ = writeln!(
                    out,
                    "  {}\n{}",
                    s.red("does not compile:"),
                    indent(errors.trim_end(), 4)
                );
                continue;
            }
            for st in &r.steps {
                let status = if st.passed == st.total {
                    s.green(&format!("{}/{}", st.passed, st.total))
                } else {
                    s.yellow(&format!("{}/{}", st.passed, st.total))
                };
                let _ = writeln!(out, "  step {}  {:<11} {status}", st.step, st.slug);
            }
            let gate = if r.passed_gate {
                s.green("passed")
            } else {
                s.red("below")
            };
            let _ = writeln!(
                out,
                "  score {:.2} / 100 (gate {}: {gate})",
                r.score, report.min_score
            );
            for t in r.tests.iter().filter(|t| !t.outcome.passed()) {
                let _ = writeln!(out, "  {} {} ({})", s.red("✗"), t.test, t.outcome.label());
                if let Some(message) = t.outcome.message() {
                    let lines: Vec<&str> = message
                        .lines()
                        .filter(|l| !l.starts_with("panicked at"))
                        .take(6)
                        .collect();
                    let _ = writeln!(out, "{}", indent(&lines.join("\n"), 6));
                }
            }
        }
        out
    }
}
