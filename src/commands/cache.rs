//! `fencelab cache`: where the scratch builds live and how big they are, and
//! `fencelab cache clean` to remove them. One cache serves every lab crate and
//! every run of a user (see `engine::scratch::Place`), so that only the first
//! build ever compiles SQLite.

use std::path::Path;

use clap::{Args, Subcommand};

use crate::engine::scratch::{Place, Scratch};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::output::printer::{Printer, Verb};

#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: Option<CacheAction>,
}

#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// Remove every scratch build (the next run builds them again, SQLite included).
    Clean,
}

/// Why the cache is where it is, in a few words.
fn why(place: &Place) -> &'static str {
    match place {
        Place::Chosen(_) => "chosen with --cache or FENCELAB_CACHE",
        Place::CargoTargetDir(_) => "CARGO_TARGET_DIR, shared with cargo",
        Place::Running(_) => "the target directory fencelab runs from",
        Place::UserCache(_) => "your cache directory, shared by every lab",
        Place::Project(_) => "the project's target directory (no home directory for a cache)",
    }
}

pub fn main(args: CacheArgs, printer: &mut Printer) -> Result<ExitCode, Error> {
    let project = crate::commands::project_root().join("target");
    let place = Place::find(&project);
    match args.action {
        None => {
            let size = size_of(place.dir());
            printer.line(&format!(
                "{} ({})\n  {}",
                place.dir().display(),
                why(&place),
                human(size)
            ));
            Ok(ExitCode::Success)
        }
        Some(CacheAction::Clean) => clean(&place, printer),
    }
}

fn clean(place: &Place, printer: &mut Printer) -> Result<ExitCode, Error> {
    let scratch = Scratch::at(place)?;
    if !scratch.root.exists() && !place.is_fencelabs_own() {
        printer.line(&format!("nothing to clean in {}", place.dir().display()));
        return Ok(ExitCode::Success);
    }
    let lock = scratch.lock()?;
    let live = scratch.live_runs(&lock);
    if !live.is_empty() {
        return Err(Error::input(format!(
            "fencelab runs are using {} (pids {}); nothing was removed",
            place.dir().display(),
            live.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .with_next("wait for them to end, then clean again"));
    }
    let before = size_of(place.dir());
    if place.is_fencelabs_own() {
        drop(lock);
        remove(place.dir())?;
    } else {
        // Not all of it is fencelab's: only what its scratch builds made.
        scratch.remove_all(&lock)?;
    }
    let after = size_of(place.dir());
    printer.status(
        Verb::Removed,
        &format!(
            "{} of scratch builds from {}",
            human(before.saturating_sub(after)),
            place.dir().display()
        ),
    );
    Ok(ExitCode::Success)
}

fn remove(dir: &Path) -> Result<(), Error> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("remove", dir, e)),
    }
}

/// The bytes of every file under `dir`.
pub fn size_of(dir: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => pending.push(entry.path()),
                Ok(t) if t.is_file() => total += entry.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

/// `1.2 GiB`, `340 MiB`, `12 KiB`.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_count_them() {
        assert_eq!(human(512), "512 bytes");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(3 * 1024 * 1024 * 1024), "3.0 GiB");
    }
}
