//! A submission as `grade` takes it: one file, read and checked before
//! anything is built (UTF-8, the contract's API, nothing read at compile time).

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::lab::api::{compile_time_read, missing_api};

/// One submission, read and checked.
#[derive(Debug, Clone)]
pub(crate) struct Submission {
    /// The path as given.
    pub name: String,
    /// The file graded.
    pub file: PathBuf,
    pub source: String,
}

/// Reads the submission at `path`: a learner crate (its `src/lib.rs`) or a
/// single `.rs` file with the contract's API at its top level.
pub(crate) fn read_submission(path: &Path) -> Result<Submission, Error> {
    let file = if path.is_dir() {
        let lib = path.join("src").join("lib.rs");
        if !lib.is_file() {
            return Err(Error::input(format!(
                "{} is a directory without src/lib.rs, so it is not a learner crate",
                path.display()
            ))
            .with_next("give a crate made by `fencelab new`, or the .rs file to grade"));
        }
        lib
    } else if path.is_file() {
        path.to_path_buf()
    } else {
        return Err(Error::input(format!("{} does not exist", path.display()))
            .with_next("give the path of a learner crate or of a .rs file"));
    };
    let bytes = std::fs::read(&file).map_err(|e| Error::io("read", &file, e))?;
    let source = String::from_utf8(bytes).map_err(|e| {
        let at = crate::error::Location::at(
            &String::from_utf8_lossy(e.as_bytes()),
            e.utf8_error().valid_up_to(),
        );
        Error::input(format!(
            "{}:{}:{}: the file is not UTF-8 text (an invalid byte at offset {})",
            file.display(),
            at.line,
            at.column,
            e.utf8_error().valid_up_to()
        ))
        .with_next("save the file as UTF-8 and submit it again")
    })?;
    if crate::lab::edition::Edition::of_file(&file) == crate::lab::edition::Edition::Python {
        let missing = crate::lab::python::missing_api(&source);
        if !missing.is_empty() {
            return Err(Error::input(format!(
                "{} does not define the contract's functions at its top level: missing {}",
                file.display(),
                missing.join(", ")
            ))
            .with_next("start from the lease.py `fencelab new --python` writes, keeping every name and parameter"));
        }
        return Ok(Submission {
            name: submission_name(path),
            file,
            source,
        });
    }
    if let Some((line, what)) = compile_time_read(&source) {
        return Err(Error::input(format!(
            "{}:{line}: `{what}` reads files or the environment while compiling, which a submission may not do \
             (it would read the grader's machine)",
            file.display()
        ))
        .with_next("remove it: a submission is one self-contained file"));
    }
    let missing = missing_api(&source);
    if !missing.is_empty() {
        return Err(Error::input(format!(
            "{} does not have the contract's API at its top level: missing {}",
            file.display(),
            missing.join(", ")
        ))
        .with_next("start from the API `fencelab new` writes (src/lib.rs), keeping every name and signature"));
    }
    Ok(Submission {
        name: submission_name(path),
        file,
        source,
    })
}

/// A submission's name in reports: the path as given, or the directory's
/// own name when the path says only "." or "..".
fn submission_name(path: &Path) -> String {
    let given = path.display().to_string();
    if path.file_name().is_some() {
        return given;
    }
    std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or(given)
}
