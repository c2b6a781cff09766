//! fencelab's one error type: what went wrong, where (file, line), and what to
//! do next. Every front end prints it the same way and maps it to an exit code.

use std::fmt;
use std::path::Path;

use crate::exit::ExitCode;

/// What kind of failure an error is; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// The input cannot be used: a missing or malformed file, a bad argument.
    Input,
    /// The machine let us down: a file that cannot be written, cargo missing.
    Environment,
    /// A bug in fencelab.
    Internal,
}

/// An error with the step that fixes it.
#[derive(Debug)]
pub struct Error {
    pub(crate) kind: ErrorKind,
    /// What went wrong, naming the file and line when there is one.
    pub message: String,
    /// What to do next.
    pub next: Option<String>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            next: None,
        }
    }

    /// Unusable input.
    pub(crate) fn input(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Input, message)
    }

    /// A failure of the machine or the toolchain.
    pub(crate) fn environment(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Environment, message)
    }

    /// A bug in fencelab.
    pub(crate) fn internal(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Internal, message)
            .with_next("this is a bug in fencelab: please report it with the command you ran")
    }

    /// A file operation that failed.
    pub(crate) fn io(action: &str, path: &Path, err: std::io::Error) -> Error {
        let kind = if err.kind() == std::io::ErrorKind::NotFound {
            ErrorKind::Input
        } else {
            ErrorKind::Environment
        };
        Error::new(kind, format!("cannot {action} {}: {err}", path.display()))
    }

    /// The exit code for this error: unusable input, or fencelab could not do
    /// its job.
    pub fn exit_code(&self) -> ExitCode {
        match self.kind {
            ErrorKind::Input => ExitCode::UnusableInput,
            ErrorKind::Environment | ErrorKind::Internal => ExitCode::ToolFailed,
        }
    }

    /// Adds (or replaces) the next step.
    pub(crate) fn with_next(mut self, next: impl Into<String>) -> Error {
        self.next = Some(next.into());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(next) = &self.next {
            write!(f, "\n  next: {next}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// A position in a file, as people count: lines and columns from 1, columns
/// in characters (not bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    pub line: usize,
    pub column: usize,
    /// The whole line, to show next to the message.
    pub source_line: String,
}

impl Location {
    /// The location of the byte `offset` in `src`.
    pub(crate) fn at(src: &str, offset: usize) -> Location {
        let mut offset = offset.min(src.len());
        while !src.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &src[..offset];
        let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
        let line_end = src[line_start..]
            .find('\n')
            .map_or(src.len(), |newline| line_start + newline);
        Location {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            source_line: src[line_start..line_end].trim_end_matches('\r').to_owned(),
        }
    }
}

/// `file:line:column: message`, then the line itself, as compilers show it.
pub(crate) fn at_line(path: &Path, at: &Location, message: &str) -> String {
    format!(
        "{}:{}:{}: {message}\n  {} | {}",
        path.display(),
        at.line,
        at.column,
        at.line,
        at.source_line
    )
}
