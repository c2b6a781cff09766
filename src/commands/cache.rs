//! `fencelab cache`: where the scratch builds live and how big they are, and
//! `fencelab cache clean` to remove them. One cache serves every lab crate and
//! every run of a user (see `engine::scratch::Place`), so that only the first
//! build ever compiles SQLite.

use std::path::Path;

use clap::{Args, Subcommand};

use crate::engine::scratch::{Place, Scratch};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::lang::Lang;
use crate::output::printer::{Printer, Verb};

#[derive(Debug, Args)]
pub(crate) struct CacheArgs {
    #[command(subcommand)]
    pub action: Option<CacheAction>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum CacheAction {
    /// Remove every scratch build (the next run builds them again, SQLite included).
    Clean,
}

/// Why the cache is where it is, in a few words.
fn why(place: &Place, lang: Lang) -> &'static str {
    match (place, lang) {
        (Place::Chosen(_), Lang::En) => "chosen with --cache or FENCELAB_CACHE",
        (Place::Chosen(_), Lang::Ja) => "--cache または FENCELAB_CACHE で指定",
        (Place::CargoTargetDir(_), Lang::En) => "CARGO_TARGET_DIR, shared with cargo",
        (Place::CargoTargetDir(_), Lang::Ja) => "CARGO_TARGET_DIR（cargo と共用）",
        (Place::Running(_), Lang::En) => "the target directory fencelab runs from",
        (Place::Running(_), Lang::Ja) => "実行中の fencelab の target ディレクトリ",
        (Place::UserCache(_), Lang::En) => "your cache directory, shared by every lab",
        (Place::UserCache(_), Lang::Ja) => "ユーザーのキャッシュ。すべてのラボで共用",
        (Place::Project(_), Lang::En) => {
            "the project's target directory (no home directory for a cache)"
        }
        (Place::Project(_), Lang::Ja) => {
            "プロジェクトの target ディレクトリ（キャッシュを置くホームがない）"
        }
    }
}

/// What `fencelab cache` prints: where the cache is, why there, and its size.
pub(crate) fn render_where(place: &Place, size: u64, lang: Lang) -> String {
    let mut out = format!("{} ({})\n  ", place.dir().display(), why(place, lang));
    // A directory of fencelab's own holds only scratch builds; a shared one
    // (a target directory) holds other builds too, which its size counts.
    let size_text = human(size, lang);
    out.push_str(&match (place.is_fencelabs_own(), lang) {
        (true, Lang::En) => format!("{size_text} of scratch builds"),
        (true, Lang::Ja) => format!("スクラッチビルド {size_text}"),
        (false, Lang::En) => format!("{size_text} in all, with the other builds kept there"),
        (false, Lang::Ja) => format!("合計 {size_text}（ほかのビルドを含む）"),
    });
    if size > 0 {
        out.push_str(match (place.is_fencelabs_own(), lang) {
            (true, Lang::En) => "\n  remove them: fencelab cache clean",
            (true, Lang::Ja) => "\n  削除するには: fencelab cache clean",
            (false, Lang::En) => "\n  remove fencelab's: fencelab cache clean",
            (false, Lang::Ja) => "\n  fencelab のビルドを削除するには: fencelab cache clean",
        });
    }
    out
}

/// What `fencelab cache clean` reports once it has removed `bytes` from `dir`.
pub(crate) fn render_removed(bytes: u64, dir: &Path, lang: Lang) -> String {
    match lang {
        Lang::En => format!(
            "{} of scratch builds from {}",
            human(bytes, lang),
            dir.display()
        ),
        Lang::Ja => format!(
            "{} のスクラッチビルド {}",
            dir.display(),
            human(bytes, lang)
        ),
    }
}

/// What `fencelab cache clean` says when there is nothing to remove.
pub(crate) fn render_nothing(dir: &Path, lang: Lang) -> String {
    match lang {
        Lang::En => format!("nothing to clean in {}", dir.display()),
        Lang::Ja => format!("{} に削除するものはありません", dir.display()),
    }
}

pub(crate) fn main(
    args: CacheArgs,
    cache: Option<&Path>,
    printer: &mut Printer,
) -> Result<ExitCode, Error> {
    let project = crate::commands::project_root().join("target");
    let place = Place::find(cache, &project);
    match args.action {
        None => {
            let size = size_of(place.dir());
            printer.line(&render_where(&place, size, printer.lang));
            Ok(ExitCode::Success)
        }
        Some(CacheAction::Clean) => clean(&place, printer),
    }
}

fn clean(place: &Place, printer: &mut Printer) -> Result<ExitCode, Error> {
    let scratch = Scratch::at(place)?;
    if !place.dir().exists() || (!scratch.root.exists() && !place.is_fencelabs_own()) {
        printer.line(&render_nothing(place.dir(), printer.lang));
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
        &render_removed(before.saturating_sub(after), place.dir(), printer.lang),
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
pub(crate) fn size_of(dir: &Path) -> u64 {
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

/// `1.2 GiB`, `340 MiB`, `12 KiB`, `512 bytes` (`512 バイト`).
fn human(bytes: u64, lang: Lang) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        match lang {
            Lang::En => format!("{bytes} bytes"),
            Lang::Ja => format!("{bytes} バイト"),
        }
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_count_them() {
        assert_eq!(human(512, Lang::En), "512 bytes");
        assert_eq!(human(512, Lang::Ja), "512 バイト");
        assert_eq!(human(1536, Lang::En), "1.5 KiB");
        assert_eq!(human(3 * 1024 * 1024 * 1024, Lang::Ja), "3.0 GiB");
    }

    /// The screens of `cache` and `cache clean`, in both languages: where,
    /// why there, how big, and the command that removes it.
    #[test]
    fn what_cache_prints_in_both_languages() {
        let dir = std::path::PathBuf::from("/home/ada/.cache/fencelab");
        for lang in [Lang::En, Lang::Ja] {
            let screen = [
                render_where(&Place::UserCache(dir.clone()), 812 * 1024 * 1024, lang),
                render_where(&Place::Chosen(dir.clone()), 0, lang),
                render_where(
                    &Place::Running("/home/ada/fencelab/target".into()),
                    6 << 30,
                    lang,
                ),
                render_removed(812 * 1024 * 1024, &dir, lang),
                render_nothing(&dir, lang),
            ]
            .join("\n---\n");
            for line in screen.lines() {
                assert!(crate::output::width::display_width(line) <= 80, "{line}");
            }
            insta::assert_snapshot!(format!("cache_{}", lang.code()), screen);
        }
    }
}
