//! fencelab's exit codes: one set for every command, so that a script or a CI
//! job reads them the same way whatever it ran. Each command's `--help` says
//! what each means for it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How a command ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitCode {
    #[default]
    /// Everything judged came out as it should: every mutant killed as
    /// declared, every test passing, every submission at the gate.
    Success = 0,
    /// Something judged did not: a mutant not killed as declared, a test that
    /// fails, a submission below the gate.
    Failed = 1,
    /// The input cannot be used (a missing or malformed file, a bad
    /// argument), so nothing was judged.
    UnusableInput = 2,
    /// What was to be judged cannot be: it does not compile, or the reference
    /// fails its own suite (verify's baseline).
    NotJudgeable = 3,
    /// fencelab itself could not do the job: the machine, the toolchain, a bug.
    ToolFailed = 4,
}

impl ExitCode {
    /// The number a process ends with.
    pub fn code(self) -> i32 {
        self as i32
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
