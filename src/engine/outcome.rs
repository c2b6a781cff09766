//! Outcomes: what happened to one test of one implementation, and what that
//! makes of a mutant. Every report (terminal, JSON, JUnit, Gradescope) is
//! written from these types.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::bridge::said::{self, Said};
use crate::engine::process::Finished;

/// What happened to one test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum TestOutcome {
    Passed,
    Failed {
        kind: FailureKind,
        /// fencelab's sentences as marked lines (`bridge::said`), written
        /// in English to reports, worded in a learner's language by `output`.
        #[serde(serialize_with = "in_english")]
        message: String,
    },
    /// Stopped for time by a rule (`engine::hangs`), and, where `confirmed`,
    /// stopped again when run alone after the others.
    TimedOut {
        limit_secs: f64,
        /// The rule that stopped it: the wall-clock limit where a report
        /// predates the others.
        #[serde(default, skip_serializing_if = "TimeRule::is_limit")]
        stopped_by: TimeRule,
        /// The processor time or the waiting that stopped it (not the limit).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule_secs: Option<f64>,
        #[serde(default)]
        confirmed: bool,
    },
    /// Stopped for time, and not run again alone to confirm it: its
    /// implementation's confirmations had spent their budget (`grade
    /// --budget`; `engine::hangs`). It fails all the same.
    OverBudget {
        budget_secs: f64,
        /// How long it had run when it was stopped; none when not started.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stopped_after_secs: Option<f64>,
    },
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

/// A message, its marked lines in English: reports keep their words.
pub(crate) fn in_english<S: serde::Serializer>(
    message: &str,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&english(message))
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
        if status.code() == Some(crate::bridge::client::LEFT_BEHIND_STATUS) {
            return TestOutcome::Failed {
                kind: FailureKind::Crashed,
                message: crate::bridge::client::LEFT_BEHIND.marked(),
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
mod tests {
    use super::*;

    const LIBTEST_FAILURE: &str = "\nrunning 1 test\ntest step4::x ... FAILED\n\nfailures:\n\n---- step4::x stdout ----\n\nthread 'step4::x' (19433) panicked at crates/judge-d1847bc7452d6721/tests/behaviour/step4.rs:106:5:\nobservation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)\n\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n\nfailures:\n    step4::x\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 92 filtered out; finished in 0.01s\n";

    #[test]
    fn the_failure_text_is_the_panic_with_project_paths() {
        assert_eq!(
            failure_text(LIBTEST_FAILURE, "step4::x"),
            "panicked at tests/behaviour/step4.rs:106:5:\nobservation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)"
        );
    }

    #[test]
    fn a_python_judges_scratch_directory_is_left_out() {
        let dir = "/home/u/.cache/fencelab/ws/crates/pyjudge-df1fcc4a461366f8";
        let stdout = format!(
            "---- test_a stdout ----\n  File \"{dir}/fencelab_tests.py\", line 120, in run_one\n\
             ['{dir}/fencelab_tests.py', '--exact'] crates/pyjudge-x\n[{dir}/api/lease.py]\n\nfailures:\n"
        );
        assert_eq!(
            failure_text(&stdout, "test_a"),
            "File \"fencelab_tests.py\", line 120, in run_one\n\
             ['fencelab_tests.py', '--exact'] crates/pyjudge-x\n[api/lease.py]"
        );
    }

    #[test]
    fn where_the_bridge_panicked_is_left_out() {
        for file in ["client.rs:210:9", "proxy.rs:82:17"] {
            let stdout = LIBTEST_FAILURE.replace(
                "crates/judge-d1847bc7452d6721/tests/behaviour/step4.rs:106:5:\nobservation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)",
                &format!(
                    "crates/bridge-4842e0297bd32c04/src/{file}:\nthe implementation returned an error the contract does not have: ValueError: x"
                ),
            );
            assert_ne!(stdout, LIBTEST_FAILURE);
            assert_eq!(
                failure_text(&stdout, "step4::x"),
                "the implementation returned an error the contract does not have: ValueError: x",
                "{file}"
            );
        }
    }

    fn judged(stdout: &str, key: &str) -> TestOutcome {
        use std::os::unix::process::ExitStatusExt;
        let finished = Finished {
            status: Some(std::process::ExitStatus::from_raw(101 << 8)),
            stdout: format!("---- t stdout ----\n{stdout}\n\nfailures:\n"),
            stderr: String::new(),
            dropped: 0,
            duration: Duration::ZERO,
            left_behind: false,
        };
        TestOutcome::from_judge("t", &finished, Duration::from_secs(1), key)
    }

    /// A learner's test (or an implementation) that prints fencelab's mark
    /// without its trial's key: shown as its own text, escaped; the
    /// failure's kind is its own, not a crash or a panic.
    #[test]
    fn a_mark_printed_without_the_trials_key_is_the_printers_own_text() {
        let ended = Said::ProcessEnded {
            call: "claim".to_string(),
            how: crate::bridge::said::How::Exited { code: 1 },
        };
        let json = serde_json::to_string(&ended).unwrap();
        let forged = format!("\u{1}said guess\u{1}{json}\n\u{1}said\u{1}{json}\nassert failed");
        let outcome = judged(&forged, "key");
        let TestOutcome::Failed { kind, message } = &outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(*kind, FailureKind::Assertion);
        assert!(said::all(message).is_empty(), "{message}");
        assert_eq!(
            outcome.message().unwrap(),
            format!("\\u{{1}}said guess\\u{{1}}{json}\n\\u{{1}}said\\u{{1}}{json}\nassert failed")
        );
        // The judge's own line, with the key: a crash, worded from its value.
        let said = format!("\u{1}said key\u{1}{json}");
        let outcome = judged(&said, "key");
        assert_eq!(outcome.label(), "crashed");
        assert_eq!(outcome.message().unwrap(), ended.to_string());
        let panicked = Said::FailedInCall {
            call: "claim".to_string(),
            at: None,
            panicked: true,
        };
        let json = serde_json::to_string(&panicked).unwrap();
        let todo = judged(
            &format!("\u{1}said key\u{1}{json}\nnot yet implemented"),
            "key",
        );
        assert_eq!(todo.label(), "not started");
        let forged = judged(
            &format!("\u{1}said no\u{1}{json}\nnot yet implemented"),
            "key",
        );
        assert_eq!(forged.label(), "failed");
        assert!(matches!(
            forged,
            TestOutcome::Failed {
                kind: FailureKind::Assertion,
                ..
            }
        ));
    }

    #[test]
    fn a_mutant_is_killed_by_failures_before_crashes_before_timeouts() {
        let failed = TestOutcome::Failed {
            kind: FailureKind::Assertion,
            message: String::new(),
        };
        let crashed = TestOutcome::Failed {
            kind: FailureKind::Crashed,
            message: String::new(),
        };
        let timeout = TestOutcome::timed_out(1.0);
        let passed = TestOutcome::Passed;
        let of = |o: &[&TestOutcome]| MutantOutcome::from_tests(o.iter().copied());
        assert_eq!(
            of(&[&passed, &timeout, &crashed, &failed]),
            MutantOutcome::Killed
        );
        assert_eq!(of(&[&passed, &timeout, &crashed]), MutantOutcome::Crashed);
        assert_eq!(of(&[&timeout, &passed]), MutantOutcome::Timeout);
        assert_eq!(of(&[&passed]), MutantOutcome::Survived);
    }

    #[test]
    fn a_steps_random_test_counts_only_where_its_other_tests_pass() {
        use crate::lab::suite::test_named;
        let failed = TestOutcome::Failed {
            kind: FailureKind::Assertion,
            message: String::new(),
        };
        let tests = [
            test_named("step2::a"),
            test_named("step2::random_calls_agree_with_the_contract"),
            test_named("step6::b"),
            test_named("step6::random_calls_agree_with_the_contract"),
        ];
        // Step 2: a bug its own test names; step 6: one only the random
        // test finds.
        let outcomes = [&failed, &failed, &TestOutcome::Passed, &failed];
        let tallies = StepTally::of(tests.iter().zip(outcomes));
        assert_eq!((tallies[0].passed, tallies[0].total), (0, 1));
        assert_eq!(tallies[0].failures.len(), 1, "said by the other");
        assert_eq!((tallies[1].passed, tallies[1].total), (1, 2));
        let named: Vec<(&str, u32, bool)> = tests
            .iter()
            .zip(outcomes)
            .map(|(t, o)| (t.name.as_str(), t.step, o.passed()))
            .collect();
        assert_eq!(
            uncounted(&named),
            ["step2::random_calls_agree_with_the_contract"]
        );
    }
}
