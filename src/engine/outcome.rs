//! Outcomes: what happened to one test of one implementation, and what that
//! makes of a mutant. Every report (terminal, JSON, JUnit, Gradescope) is
//! written from these types.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::bridge::said::{self, Said};
use crate::engine::process::Finished;

/// What happened to one test. Reports hold it as a `Written` (below).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Written", from = "Written")]
pub enum TestOutcome {
    Passed,
    Failed {
        kind: FailureKind,
        /// fencelab's sentences as marked lines (`bridge::said`), written
        /// in English to reports, worded in a learner's language by `output`.
        message: String,
    },
    /// Stopped for time by a rule (`engine::hangs`), and, where `confirmed`,
    /// stopped again when run alone after the others.
    TimedOut {
        limit_secs: f64,
        /// The rule that stopped it: the wall-clock limit where a report
        /// predates the others.
        stopped_by: TimeRule,
        /// The processor time or the waiting that stopped it (not the limit).
        rule_secs: Option<f64>,
        confirmed: bool,
    },
    /// Stopped for time, and not run again alone to confirm it: its
    /// implementation's confirmations had spent their budget (`grade
    /// --budget`; `engine::hangs`). It fails all the same.
    OverBudget {
        budget_secs: f64,
        /// How long it had run when it was stopped; none when not started.
        stopped_after_secs: Option<f64>,
    },
}

/// A `TestOutcome` as a report writes it: a failure's `message` in English,
/// and, where it holds fencelab's sentences, `said`, the message with them
/// still marked, so a report read back is worded in any language.
#[derive(Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum Written {
    Passed,
    Failed {
        kind: FailureKind,
        message: String,
        /// The whole message rather than a list of sentences: it keeps
        /// where each sentence stands among the learner's lines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        said: Option<String>,
    },
    TimedOut {
        limit_secs: f64,
        #[serde(default, skip_serializing_if = "TimeRule::is_limit")]
        stopped_by: TimeRule,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule_secs: Option<f64>,
        #[serde(default)]
        confirmed: bool,
    },
    OverBudget {
        budget_secs: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stopped_after_secs: Option<f64>,
    },
}

impl From<TestOutcome> for Written {
    fn from(outcome: TestOutcome) -> Written {
        match outcome {
            TestOutcome::Passed => Written::Passed,
            TestOutcome::Failed { kind, message } => Written::Failed {
                kind,
                said: (!said::all(&message).is_empty()).then(|| message.clone()),
                message: english(&message),
            },
            TestOutcome::TimedOut {
                limit_secs,
                stopped_by,
                rule_secs,
                confirmed,
            } => Written::TimedOut {
                limit_secs,
                stopped_by,
                rule_secs,
                confirmed,
            },
            TestOutcome::OverBudget {
                budget_secs,
                stopped_after_secs,
            } => Written::OverBudget {
                budget_secs,
                stopped_after_secs,
            },
        }
    }
}

/// A report is input (a shard from another machine): its marks are read
/// back only where they decode, and only in `said`; every other is escaped.
impl From<Written> for TestOutcome {
    fn from(written: Written) -> TestOutcome {
        match written {
            Written::Passed => TestOutcome::Passed,
            Written::Failed {
                kind,
                message,
                said,
            } => TestOutcome::Failed {
                kind,
                message: match said {
                    Some(said) => said::reread(&said),
                    None => said::vouch(&message, ""),
                },
            },
            Written::TimedOut {
                limit_secs,
                stopped_by,
                rule_secs,
                confirmed,
            } => TestOutcome::TimedOut {
                limit_secs,
                stopped_by,
                rule_secs,
                confirmed,
            },
            Written::OverBudget {
                budget_secs,
                stopped_after_secs,
            } => TestOutcome::OverBudget {
                budget_secs,
                stopped_after_secs,
            },
        }
    }
}

/// What stopped a test for time (`engine::hangs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeRule {
    /// It ran past its wall-clock limit.
    #[default]
    Limit,
    /// Its implementation used more than its share of processor time.
    Spins,
    /// Its processes all waited, none running, for too long in all.
    Waits,
}

impl TimeRule {
    fn is_limit(&self) -> bool {
        *self == TimeRule::Limit
    }
}

/// `message` with each of fencelab's sentences in English.
pub(crate) fn english(message: &str) -> String {
    said::word_each(message, Said::to_string)
}

/// Why a test failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// An observation did not hold.
    Assertion,
    /// The implementation panicked inside a call.
    Panicked,
    /// The implementation reached a `todo!()`: the step is not started.
    NotStarted,
    /// The implementation's process ended during a call (abort, signal, exit),
    /// or took the judge's process with it.
    Crashed,
    /// The judge's process ended with success before it said the test passed:
    /// the test itself ended it (`std::process::exit(0)`, `sys.exit(0)`).
    NoVerdict,
}

impl TestOutcome {
    /// Stopped at its limit of `limit_secs`, unconfirmed.
    pub(crate) fn timed_out(limit_secs: f64) -> TestOutcome {
        TestOutcome::TimedOut {
            limit_secs,
            stopped_by: TimeRule::Limit,
            rule_secs: None,
            confirmed: false,
        }
    }

    pub fn passed(&self) -> bool {
        matches!(self, TestOutcome::Passed)
    }

    /// The one-word label reports use.
    pub fn label(&self) -> &'static str {
        match self {
            TestOutcome::Passed => "passed",
            TestOutcome::Failed {
                kind: FailureKind::Crashed,
                ..
            } => "crashed",
            TestOutcome::Failed {
                kind: FailureKind::NotStarted,
                ..
            } => "not started",
            TestOutcome::Failed {
                kind: FailureKind::NoVerdict,
                ..
            } => "no verdict",
            TestOutcome::Failed { .. } => "failed",
            TestOutcome::TimedOut { .. } => "timeout",
            TestOutcome::OverBudget { .. } => "over budget",
        }
    }

    /// The failure message, if any, in English (as reports write it).
    pub fn message(&self) -> Option<String> {
        self.marked_message().map(|m| english(&m))
    }

    /// The failure message with fencelab's sentences still marked, for
    /// `output` to word in a learner's language.
    pub fn marked_message(&self) -> Option<String> {
        match self {
            TestOutcome::Passed => None,
            TestOutcome::Failed { message, .. } => Some(message.clone()),
            TestOutcome::TimedOut {
                limit_secs,
                stopped_by,
                rule_secs,
                confirmed,
            } => {
                let secs = rule_secs.unwrap_or(*limit_secs);
                let why = match stopped_by {
                    TimeRule::Limit => Said::TimedOut { secs: *limit_secs },
                    TimeRule::Spins => Said::Spun { secs },
                    TimeRule::Waits => Said::Waited { secs },
                };
                Some(match confirmed {
                    true => format!("{}\n{}", why.marked(), Said::Confirmed.marked()),
                    false => why.marked(),
                })
            }
            TestOutcome::OverBudget { budget_secs, .. } => Some(over_budget_message(
                *budget_secs,
                crate::lab::lang::Lang::En,
            )),
        }
    }

    /// Reads the outcome of `test` from the judge process that ran it alone,
    /// whose trial's key was `key` (`said::vouch`). The verdict comes from
    /// the judge's exit status; its output only explains.
    pub(crate) fn from_judge(
        test: &str,
        finished: &Finished,
        limit: Duration,
        key: &str,
    ) -> TestOutcome {
        let Some(status) = finished.status else {
            return TestOutcome::timed_out(limit.as_secs_f64());
        };
        if status.success() && passed_one(&finished.stdout) {
            return TestOutcome::Passed;
        }
        if status.code() == Some(crate::bridge::held::LEFT_BEHIND_STATUS) {
            return TestOutcome::Failed {
                kind: FailureKind::Crashed,
                message: crate::bridge::held::LEFT_BEHIND.marked(),
            };
        }
        let mut message = said::vouch(&failure_text(&finished.stdout, test), key);
        let told = said::all(&message);
        let in_a_call = told.iter().any(|s| matches!(s, Said::FailedInCall { .. }));
        let kind = if status.success() {
            message = format!("{}\n{message}", Said::NoVerdict.marked());
            FailureKind::NoVerdict
        } else if status.code().is_none() {
            let how = crate::bridge::client::describe(status);
            message = format!("{}\n{message}", Said::TookJudgeDown { how }.marked());
            FailureKind::Crashed
        } else if told.iter().any(|s| {
            matches!(
                s,
                Said::ProcessEnded { .. } | Said::CouldNotStart { .. } | Said::StreamsCut { .. }
            )
        }) {
            FailureKind::Crashed
        } else if in_a_call && message.contains("not yet implemented") {
            FailureKind::NotStarted
        } else if in_a_call {
            FailureKind::Panicked
        } else {
            FailureKind::Assertion
        };
        if message.is_empty() {
            let status = status.to_string();
            message = Said::SaidNothing { status }.marked();
        }
        TestOutcome::Failed { kind, message }
    }
}

/// Why a test is over its implementation's budget, in `lang`. No time it
/// ran is said: what a learner is told is the same on every run.
pub(crate) fn over_budget_message(budget_secs: f64, lang: crate::lab::lang::Lang) -> String {
    use crate::lab::lang::Lang;
    match lang {
        Lang::En => format!(
            "stopped for time, and not run again alone to confirm it: the budget of \
             {budget_secs} s for confirming its implementation's tests was spent"
        ),
        Lang::Ja => format!(
            "時間切れで停止し、単独での再実行による確認はしませんでした: \
             実装のテストを確認する予算 {budget_secs} 秒を使い切りました"
        ),
    }
}

/// Whether libtest's output says that the one test it ran passed.
pub(crate) fn passed_one(stdout: &str) -> bool {
    stdout
        .lines()
        .any(|l| l.starts_with("test result: ok. 1 passed;"))
}

/// The part of libtest's output that explains a failure: the test's captured
/// output and panic message, with the scratch crate's paths made the project's.
pub(crate) fn failure_text(stdout: &str, test: &str) -> String {
    let header = format!("---- {test} stdout ----");
    let body = match stdout.find(&header) {
        Some(start) => {
            let rest = &stdout[start + header.len()..];
            &rest[..rest.find("\nfailures:\n").unwrap_or(rest.len())]
        }
        None => stdout,
    };
    body.lines()
        // Rust's note on backtraces, a claimer process's (in an observed
        // value, indented) included: nothing a learner can act on.
        .filter(|l| !l.trim_start().starts_with("note: run with `RUST_BACKTRACE"))
        // Where the bridge panicked (its client, or the proxy of a Python
        // implementation) says nothing to anyone, and names a scratch crate:
        // the next line says what the implementation did.
        .filter(|l| !l.contains("panicked at crates/bridge-"))
        .map(
            |line| match (line.starts_with("thread '"), line.find("panicked at ")) {
                (true, Some(at)) => unscratch(&line[at..]),
                _ => unscratch(line),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// `crates/judge-0123…/tests/behaviour/step4.rs` → `tests/behaviour/step4.rs`;
/// and the judge of a learner's Python tests by its file's name alone
/// (`/home/u/.cache/fencelab/…/crates/pyjudge-0123…/fencelab_tests.py` →
/// `fencelab_tests.py`: in a traceback or `sys.argv` the test printed).
fn unscratch(line: &str) -> String {
    let line = match line.find("crates/judge-") {
        Some(start) => match line[start..].find("/tests/") {
            Some(rel) => format!("{}{}", &line[..start], &line[start + rel + 1..]),
            None => line.to_string(),
        },
        None => line.to_string(),
    };
    let mut out = String::new();
    let mut rest = line.as_str();
    let pyjudge = format!("crates/{}-", super::python::JUDGE_CRATE);
    while let Some(at) = rest.find(&pyjudge) {
        let Some(end) = rest[at + pyjudge.len()..].find('/') else {
            break;
        };
        // The path starts after the last character no path of ours holds.
        let start = rest[..at]
            .rfind(|c: char| c.is_whitespace() || "\"'([{=,:".contains(c))
            .map_or(0, |i| i + 1);
        out.push_str(&rest[..start]);
        rest = &rest[at + pyjudge.len() + end + 1..];
    }
    out.push_str(rest);
    out
}

/// One step's tests, tallied: what `check` shows and `grade` scores.
#[derive(Debug, Clone)]
pub struct StepTally {
    pub step: u32,
    pub passed: usize,
    pub total: usize,
    /// No test passed and some test reached a `todo!()`.
    pub not_started: bool,
    /// (test, outcome) for each test that did not pass, in suite order.
    pub failures: Vec<(String, TestOutcome)>,
}

impl StepTally {
    pub fn complete(&self) -> bool {
        self.passed == self.total
    }

    /// The tallies of the steps that have tests among `results` (suite order).
    pub(crate) fn of<'a>(
        results: impl IntoIterator<Item = (&'a crate::lab::suite::SuiteTest, &'a TestOutcome)>,
    ) -> Vec<StepTally> {
        let mut steps: Vec<StepTally> = Vec::new();
        for (test, outcome) in results {
            if steps.last().is_none_or(|s| s.step != test.step) {
                steps.push(StepTally {
                    step: test.step,
                    passed: 0,
                    total: 0,
                    not_started: false,
                    failures: Vec::new(),
                });
            }
            let step = steps.last_mut().expect("pushed above");
            step.total += 1;
            if outcome.passed() {
                step.passed += 1;
            } else {
                step.failures.push((test.name.clone(), outcome.clone()));
            }
        }
        // A step's random test counts only where its other tests all pass:
        // it finds what they miss, and a bug they name costs the step once
        // (and is said by them).
        for step in &mut steps {
            let others_fail = step.failures.iter().any(|(name, _)| !is_random(name));
            if others_fail && let Some(at) = step.failures.iter().position(|(n, _)| is_random(n)) {
                step.failures.remove(at);
                step.total -= 1;
            }
        }
        // Not started: nothing passes and a test reached a `todo!()` (other
        // tests of the step may fail earlier, on an earlier step's bug).
        for step in &mut steps {
            step.not_started = step.passed == 0
                && step.failures.iter().any(|(_, o)| {
                    matches!(
                        o,
                        TestOutcome::Failed {
                            kind: FailureKind::NotStarted,
                            ..
                        }
                    )
                });
        }
        steps
    }
}

/// The name of each step's test of random calls (`tests/behaviour/random.rs`).
pub(crate) const RANDOM_TEST: &str = "random_calls_agree_with_the_contract";

/// Whether `test` is a step's test of random calls.
pub(crate) fn is_random(test: &str) -> bool {
    test.rsplit("::").next() == Some(RANDOM_TEST)
}

/// The tests of `tests` (name, step, passed) that do not count: a step's
/// random test that failed where another test of the step failed too.
pub(crate) fn uncounted<'a>(tests: &[(&'a str, u32, bool)]) -> Vec<&'a str> {
    tests
        .iter()
        .filter(|(name, step, passed)| {
            is_random(name)
                && !passed
                && tests
                    .iter()
                    .any(|(other, s, p)| s == step && !p && !is_random(other))
        })
        .map(|(name, _, _)| *name)
        .collect()
}

/// What a mutant came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum MutantOutcome {
    /// At least one test failed.
    Killed,
    /// Only crashes exposed it (it counts as a kill, shown apart).
    Crashed,
    /// Only time limits exposed it.
    Timeout,
    /// Every test passed.
    Survived,
    /// It does not compile.
    Unviable,
    /// Its `find` text is not in the implementation exactly once.
    Stale,
}

impl MutantOutcome {
    pub fn label(self) -> &'static str {
        match self {
            MutantOutcome::Killed => "killed",
            MutantOutcome::Crashed => "crashed",
            MutantOutcome::Timeout => "timeout",
            MutantOutcome::Survived => "survived",
            MutantOutcome::Unviable => "unviable",
            MutantOutcome::Stale => "stale",
        }
    }

    /// The outcome of a mutant whose tests ended as `outcomes`.
    pub(crate) fn from_tests<'a>(
        outcomes: impl IntoIterator<Item = &'a TestOutcome>,
    ) -> MutantOutcome {
        let (mut failed, mut crashed, mut timed_out) = (false, false, false);
        for outcome in outcomes {
            match outcome {
                TestOutcome::Passed => {}
                TestOutcome::Failed {
                    kind: FailureKind::Crashed,
                    ..
                } => crashed = true,
                TestOutcome::Failed { .. } => failed = true,
                // Were a mutant over its budget, time would have exposed it.
                TestOutcome::TimedOut { .. } | TestOutcome::OverBudget { .. } => timed_out = true,
            }
        }
        if failed {
            MutantOutcome::Killed
        } else if crashed {
            MutantOutcome::Crashed
        } else if timed_out {
            MutantOutcome::Timeout
        } else {
            MutantOutcome::Survived
        }
    }
}

#[cfg(test)]
mod tests;
