//! fencelab's exit codes: one set for every command, so that a script or a CI
//! job reads them the same way whatever it ran. What each means for each
//! command is written here once ([`ExitCode::meaning`]) and shown in that
//! command's `--help` ([`help`]).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How a command ended; [`ExitCode::meaning`] says what each means.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitCode {
    #[default]
    /// Everything judged came out as it should.
    Success = 0,
    /// Something judged did not.
    Failed = 1,
    /// The input cannot be used, so nothing was judged.
    UnusableInput = 2,
    /// What was to be judged cannot be (it does not compile).
    NotJudgeable = 3,
    /// fencelab itself could not do the job.
    ToolFailed = 4,
}

impl ExitCode {
    /// Every code, in order.
    pub const ALL: [ExitCode; 5] = [
        ExitCode::Success,
        ExitCode::Failed,
        ExitCode::UnusableInput,
        ExitCode::NotJudgeable,
        ExitCode::ToolFailed,
    ];

    /// The number a process ends with.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// What the code means for `command` (a subcommand's name), or in general
    /// when the command gives it no meaning of its own; `None` when the
    /// command never ends with it.
    pub(crate) fn meaning(self, command: &str) -> Option<&'static str> {
        let specific = match (command, self) {
            ("verify", ExitCode::Success) => "every mutant was killed as declared",
            ("verify", ExitCode::Failed) => {
                "a mutant was not killed as declared (it survived, was killed by other tests, is unviable or stale)"
            }
            ("verify", ExitCode::UnusableInput) => {
                "unusable input (a malformed mutant file or predictions, a missing path, a bad argument): nothing was run"
            }
            ("verify", ExitCode::NotJudgeable) => {
                "the unmutated implementation does not compile or fails its own suite, so no mutant can be judged"
            }
            ("check", ExitCode::Success) => {
                "every test checked passes (with --mine: every test of yours is valid and every mutant is caught)"
            }
            ("check", ExitCode::Failed) => {
                "some test does not pass yet (with --mine: a test of yours is not valid, or a mutant is not caught)"
            }
            ("check", ExitCode::UnusableInput) => {
                "unusable input (not a lab crate, a src/lib.rs without the contract's API, a bad argument)"
            }
            ("check", ExitCode::NotJudgeable) => {
                "src/lib.rs does not compile (with --mine: your tests do not compile)"
            }
            ("grade", ExitCode::Success) => {
                "every submission reached --min-score (with --tests: and every test of each is valid)"
            }
            ("grade", ExitCode::Failed) => "some submission is below --min-score",
            ("grade", ExitCode::UnusableInput) => {
                "no submission at all could be graded (each one unusable: a missing path, not UTF-8, no API, reading files while compiling), or a bad argument"
            }
            ("grade", ExitCode::NotJudgeable) => {
                "some submission could not be graded: it does not compile, its program does not start, or it is unusable (each gets score 0 with its reason in every report; the others are graded)"
            }
            ("hint", ExitCode::Success) => {
                "a hint was given, or every test checked passes and none is needed"
            }
            ("hint", ExitCode::UnusableInput) => "unusable input (not a lab, a bad step)",
            ("hint", ExitCode::NotJudgeable) => "the learner's file does not compile: no test ran",
            ("new", ExitCode::Success) => "the lab crate was created",
            ("new", ExitCode::UnusableInput) => {
                "the directory is not empty, or its name cannot be a crate's: nothing was written"
            }
            ("predict", ExitCode::Success) => "the form was written",
            ("predict", ExitCode::UnusableInput) => {
                "the output file exists, a mutant file is malformed or a mutant named is unknown: nothing was written"
            }
            ("worksheet", ExitCode::Success) => "the worksheet was printed",
            ("cache", ExitCode::Success) => "the cache was shown, or cleaned",
            ("cache", ExitCode::UnusableInput) => {
                "runs are using the cache, so it was not cleaned; or a bad argument"
            }
            (
                "new" | "predict" | "worksheet" | "cache",
                ExitCode::Failed | ExitCode::NotJudgeable,
            ) => {
                return None;
            }
            ("worksheet", ExitCode::UnusableInput) => "a bad argument",
            (_, code) => code.general(),
        };
        Some(specific)
    }

    /// What the code means for every command alike.
    pub(crate) fn general(self) -> &'static str {
        match self {
            ExitCode::Success => "everything judged came out as it should",
            ExitCode::Failed => "something judged did not",
            ExitCode::UnusableInput => "the input cannot be used, so nothing was judged",
            ExitCode::NotJudgeable => "what was to be judged cannot be: it does not compile",
            ExitCode::ToolFailed => {
                "fencelab itself could not do the job (the machine, the toolchain, a bug)"
            }
        }
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}

/// Reports carry the number.
impl Serialize for ExitCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i32(self.code())
    }
}

/// Reports written by fencelab are read back (`grade --merge`).
impl<'de> Deserialize<'de> for ExitCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match i32::deserialize(deserializer)? {
            0 => Ok(ExitCode::Success),
            1 => Ok(ExitCode::Failed),
            2 => Ok(ExitCode::UnusableInput),
            3 => Ok(ExitCode::NotJudgeable),
            4 => Ok(ExitCode::ToolFailed),
            other => Err(serde::de::Error::custom(format!(
                "exit code {other} is not one of fencelab's (0 to 4)"
            ))),
        }
    }
}
