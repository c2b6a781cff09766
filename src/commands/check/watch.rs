//! `fencelab check --watch`: checks again on every save of the learner's
//! file, as rustlings does. Each check starts a cleared screen with the
//! first failing step, and says which steps turned green since the last.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use notify::Watcher as _;

use super::{Checked, Options};
use crate::engine::scratch::Scratch;
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::edition::Edition;
use crate::lab::lang::Lang;
use crate::lab::worksheet::Worksheet;
use crate::output::printer::{Layout, Printer};

/// How long saves are gathered into one check: an editor writes a file in
/// several steps (a temporary file, a rename).
const SETTLE: Duration = Duration::from_millis(200);

/// The steps that pass every test.
fn green(checked: &Checked) -> BTreeSet<u32> {
    match checked {
        Checked::Ran { steps } => steps
            .iter()
            .filter(|s| s.complete())
            .map(|s| s.step)
            .collect(),
        Checked::DoesNotCompile { .. } => BTreeSet::new(),
    }
}

/// What the top of the screen says: the steps that turned green since the
/// last check, then the first step that fails (or that all pass).
pub fn render_top(
    layout: &Layout,
    checked: &Checked,
    before: &BTreeSet<u32>,
    worksheet: &Worksheet,
) -> String {
    let (lang, s) = (layout.lang, &layout.out);
    let mut out = String::new();
    for step in green(checked).difference(before) {
        let slug = worksheet.step(*step).map_or("", |st| st.slug.as_str());
        let text = match lang {
            Lang::En => format!("✓ step {step} ({slug}) turned green"),
            Lang::Ja => format!("✓ ステップ {step}（{slug}）が合格になりました"),
        };
        let _ = writeln!(out, "{}", s.green(&text));
    }
    let first = match checked {
        Checked::DoesNotCompile { .. } => match lang {
            Lang::En => "your file does not compile".to_string(),
            Lang::Ja => "ファイルがコンパイルできません".to_string(),
        },
        Checked::Ran { .. } => match (checked.first_failing(), lang) {
            (None, Lang::En) => "every step passes".to_string(),
            (None, Lang::Ja) => "すべてのステップが合格です".to_string(),
            (Some(t), lang) => {
                let slug = worksheet.step(t.step).map_or("", |st| st.slug.as_str());
                match lang {
                    Lang::En => format!(
                        "first failing: step {} ({slug}), {}/{} pass",
                        t.step, t.passed, t.total
                    ),
                    Lang::Ja => format!(
                        "最初の不合格: ステップ {}（{slug}）、{}/{} 合格",
                        t.step, t.passed, t.total
                    ),
                }
            }
        },
    };
    let _ = writeln!(out, "{}", s.bold(&first));
    out
}

/// The line under each check: what is watched, and how to stop.
fn waiting(lang: Lang, file: &str) -> String {
    match lang {
        Lang::En => format!("watching {file}: save it to check again (Ctrl-C stops)"),
        Lang::Ja => format!("{file} を監視中: 保存すると再チェックします（Ctrl-C で終了）"),
    }
}

/// Checks, then checks again after each save of `file`, until interrupted.
pub(crate) fn watch(
    options: &Options,
    scratch: &Scratch,
    printer: &mut Printer,
    edition: Edition,
    file: &Path,
    shown: &str,
) -> Result<ExitCode, Error> {
    let (tx, saves) = mpsc::channel::<()>();
    let watched: PathBuf = file.to_path_buf();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && !event.kind.is_access()
            && event
                .paths
                .iter()
                .any(|p| p.file_name() == watched.file_name())
        {
            let _ = tx.send(());
        }
    })
    .map_err(|e| Error::environment(format!("cannot watch {shown}: {e}")))?;
    // The directory, not the file: editors save by renaming a new file.
    let dir = file.parent().unwrap_or(Path::new("."));
    watcher
        .watch(dir, notify::RecursiveMode::NonRecursive)
        .map_err(|e| Error::io("watch", dir, notify_io(e)))?;
    let worksheet = Worksheet::of(edition);
    let clear = std::io::stdout().is_terminal();
    let mut before = BTreeSet::new();
    let mut first = true;
    loop {
        let checked = super::run(options, scratch, printer)?;
        let layout = printer.layout();
        let mut text = String::new();
        if clear {
            // The screen and its scrollback cleared, the cursor home.
            text.push_str("\x1b[2J\x1b[3J\x1b[H");
        }
        if !first {
            text.push_str(&render_top(&layout, &checked, &before, &worksheet));
        } else {
            text.push_str(&render_top(&layout, &checked, &green(&checked), &worksheet));
        }
        text.push('\n');
        text.push_str(&super::render_check_of(
            &layout,
            &checked,
            &worksheet,
            edition,
            layout.lang,
        ));
        let _ = write!(text, "\n{}", waiting(layout.lang, shown));
        printer.line(&text);
        before = green(&checked);
        first = false;
        // The next save, and every save that follows within SETTLE.
        if saves.recv().is_err() {
            return Ok(ExitCode::Success);
        }
        while saves.recv_timeout(SETTLE).is_ok() {}
    }
}

fn notify_io(e: notify::Error) -> std::io::Error {
    match e.kind {
        notify::ErrorKind::Io(io) => io,
        other => std::io::Error::other(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::outcome::StepTally;

    fn ran(passed: &[usize]) -> Checked {
        Checked::Ran {
            steps: passed
                .iter()
                .enumerate()
                .map(|(i, &p)| StepTally {
                    step: i as u32 + 1,
                    passed: p,
                    total: 5,
                    not_started: false,
                    failures: Vec::new(),
                })
                .collect(),
        }
    }

    /// Fails where a step that was green already is announced again, or
    /// the first failing step is not the top line.
    #[test]
    fn the_top_says_what_turned_green_and_the_first_failing_step() {
        let worksheet = Worksheet::builtin();
        for lang in [Lang::En, Lang::Ja] {
            let layout = Layout::plain().in_lang(lang);
            let before = green(&ran(&[5, 3, 0]));
            let top = render_top(&layout, &ran(&[5, 5, 2]), &before, &worksheet);
            insta::assert_snapshot!(format!("watch_top_{lang}"), top);
            assert_eq!(top.lines().count(), 2, "{top}");
        }
    }
}
