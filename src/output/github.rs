//! GitHub Actions, natively: workflow-command annotations
//! (`::error file=…,line=…,title=…::message`) and the step's Markdown
//! summary (`$GITHUB_STEP_SUMMARY`), as every command writes them alike.
//!
//! Escaping follows GitHub's rules (as `@actions/core` implements them): in
//! the message `%`, `\r` and `\n` become `%25`, `%0D`, `%0A`; in a property
//! value `:` and `,` also become `%3A` and `%2C`, since they delimit
//! properties. GitHub shows at most 10 annotations of a kind per step and 50
//! per job, so each command caps its own (`ANNOTATIONS_PER_KIND`) and says
//! how many more there were; a step summary larger than 1 MiB is refused
//! whole, so what is appended is cut, at a line, to fit beside what the step
//! already wrote.

use std::io::Write as _;
use std::path::Path;

use crate::error::Error;

/// Annotations of one kind (error, warning, notice) GitHub shows per step.
pub(crate) const ANNOTATIONS_PER_KIND: usize = 10;

/// The most a step summary may hold (GitHub refuses a larger one whole).
pub(crate) const SUMMARY_LIMIT: usize = 1024 * 1024;

/// Whether to write GitHub's formats: asked for, or running in GitHub Actions.
pub(crate) fn enabled(flag: bool) -> bool {
    flag || std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// Escapes a workflow command's message: GitHub's own escapes, then what
/// is left that a terminal would obey shown (`untrusted::visible`).
pub(crate) fn escape_data(text: &str) -> String {
    let escaped = text
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    crate::output::untrusted::visible(&escaped)
}

/// Escapes a workflow command's property value.
pub(crate) fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// While it lives, GitHub's runner reads no workflow command from what is
/// printed (`::stop-commands::TOKEN` at its start, `::TOKEN::` when it is
/// dropped): a line an implementation or a learner's test printed runs
/// nothing. The token is random, so no such line can end the pause.
pub(crate) struct Paused {
    token: String,
}

/// Pauses the runner's reading of workflow commands (`Paused`).
pub(crate) fn pause() -> Paused {
    let token: String = (0..4)
        .map(|_| {
            format!(
                "{:016x}",
                getrandom::u64().unwrap_or_else(|_| fallback_token())
            )
        })
        .collect();
    println!("::stop-commands::{token}");
    Paused { token }
}

/// A token where the OS's random source failed: the time and the process,
/// which untrusted code printing before it cannot know to the nanosecond.
fn fallback_token() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}

impl Drop for Paused {
    fn drop(&mut self) {
        println!("::{}::", self.token);
    }
}

/// The kind of an annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Error,
    Warning,
    Notice,
}

impl Level {
    fn command(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }
}

/// One annotation: where (a file of the repository, lines and columns from 1)
/// and what.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub(crate) level: Level,
    pub file: Option<String>,
    pub line: Option<usize>,
    pub end_line: Option<usize>,
    pub col: Option<usize>,
    pub end_column: Option<usize>,
    pub title: String,
    pub message: String,
}

impl Annotation {
    pub(crate) fn new(
        level: Level,
        title: impl Into<String>,
        message: impl Into<String>,
    ) -> Annotation {
        Annotation {
            level,
            file: None,
            line: None,
            end_line: None,
            col: None,
            end_column: None,
            title: title.into(),
            message: message.into(),
        }
    }

    /// The annotation at `file`, line `line`.
    pub(crate) fn at(mut self, file: &str, line: usize) -> Annotation {
        self.file = Some(file.to_string());
        self.line = Some(line);
        self
    }

    /// The workflow command, one line.
    pub(crate) fn command(&self) -> String {
        let mut properties = Vec::new();
        if let Some(file) = &self.file {
            properties.push(format!("file={}", escape_property(file)));
        }
        for (name, value) in [
            ("line", self.line),
            ("endLine", self.end_line),
            ("col", self.col),
            ("endColumn", self.end_column),
        ] {
            if let Some(value) = value {
                properties.push(format!("{name}={value}"));
            }
        }
        if !self.title.is_empty() {
            properties.push(format!("title={}", escape_property(&self.title)));
        }
        let properties = if properties.is_empty() {
            String::new()
        } else {
            format!(" {}", properties.join(","))
        };
        format!(
            "::{}{properties}::{}",
            self.level.command(),
            escape_data(&self.message)
        )
    }
}

/// The commands for `annotations`, at most `ANNOTATIONS_PER_KIND` of each
/// kind, and a notice counting the ones left out.
pub fn commands(annotations: &[Annotation]) -> Vec<String> {
    let mut out = Vec::new();
    let mut left_out = 0;
    for level in [Level::Error, Level::Warning, Level::Notice] {
        let of_level: Vec<&Annotation> = annotations.iter().filter(|a| a.level == level).collect();
        // A notice of our own counts among the notices: leave it room.
        let room =
            if level == Level::Notice && (left_out > 0 || of_level.len() > ANNOTATIONS_PER_KIND) {
                ANNOTATIONS_PER_KIND - 1
            } else {
                ANNOTATIONS_PER_KIND
            };
        out.extend(of_level.iter().take(room).map(|a| a.command()));
        left_out += of_level.len().saturating_sub(room);
    }
    if left_out > 0 {
        out.push(
            Annotation::new(
                Level::Notice,
                "fencelab",
                format!(
                    "{left_out} more annotation(s) left out (GitHub shows {ANNOTATIONS_PER_KIND} of a kind per step); \
                     the job's log and summary have them all"
                ),
            )
            .command(),
        );
    }
    out
}

/// Prints the annotations' commands on stdout, where the runner reads them.
pub(crate) fn print(annotations: &[Annotation]) {
    for command in commands(annotations) {
        println!("{command}");
    }
}

/// `markdown` cut to at most `room` bytes at a line boundary, with a last
/// line saying so when it was cut.
pub(crate) fn fit(markdown: &str, room: usize) -> String {
    if markdown.len() <= room {
        return markdown.to_string();
    }
    let note = "\n\n_The rest was cut: a step summary holds at most 1 MiB. The JSON report has everything._\n";
    let budget = room.saturating_sub(note.len());
    let mut end = 0;
    for (i, _) in markdown.match_indices('\n') {
        if i + 1 > budget {
            break;
        }
        end = i + 1;
    }
    format!("{}{note}", &markdown[..end])
}

/// The step summary file `$GITHUB_STEP_SUMMARY` names (GitHub Actions sets
/// it for every step; outside Actions it is usually not set).
pub(crate) fn summary_file() -> Option<std::path::PathBuf> {
    std::env::var_os("GITHUB_STEP_SUMMARY")
        .filter(|p| !p.is_empty())
        .map(Into::into)
}

/// What to say, once, when a summary was asked for and there is no
/// `$GITHUB_STEP_SUMMARY` to write it to (the annotations are printed all
/// the same): a CI user expects either the summary or a word on why not.
/// Lines fit 80 columns after the printer's `warning: ` or `警告: `.
pub(crate) fn no_summary_warning(lang: crate::lab::lang::Lang) -> &'static str {
    match lang {
        crate::lab::lang::Lang::En => {
            "--github: $GITHUB_STEP_SUMMARY is not set, so no step summary was\n  \
             written (the annotations are on stdout)\n  \
             next: run it as a step of a GitHub Actions job, which sets it, or set\n  \
             GITHUB_STEP_SUMMARY=FILE to have the summary appended to FILE"
        }
        crate::lab::lang::Lang::Ja => {
            "--github: $GITHUB_STEP_SUMMARY が未設定のため、ステップの要約は\n  \
             書いていません（注釈は標準出力にあります）\n  \
             次に: GitHub Actions のジョブのステップとして実行する（そこでは設定済み）か、\n  \
             GITHUB_STEP_SUMMARY=FILE を設定して FILE に要約を追記させます"
        }
    }
}

/// Appends `markdown` to the step summary file named by `$GITHUB_STEP_SUMMARY`
/// (nothing when it is not set: see `summary_file`), cut to what fits beside
/// what is there.
pub(crate) fn append_summary(markdown: &str) -> Result<(), Error> {
    let Some(path) = summary_file() else {
        return Ok(());
    };
    append_summary_to(&path, markdown)
}

/// `append_summary` to a given file.
pub(crate) fn append_summary_to(path: &Path, markdown: &str) -> Result<(), Error> {
    let used = std::fs::metadata(path).map_or(0, |m| m.len() as usize);
    let room = SUMMARY_LIMIT.saturating_sub(used);
    let text = fit(markdown, room);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| {
            Error::io("open the step summary ($GITHUB_STEP_SUMMARY)", path, e)
                .with_next("run inside GitHub Actions, or unset GITHUB_STEP_SUMMARY")
        })?;
    file.write_all(text.as_bytes())
        .map_err(|e| Error::io("write the step summary ($GITHUB_STEP_SUMMARY)", path, e))
}

/// Escapes text for a Markdown table cell (one line, no pipes).
pub(crate) fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

/// The line of `pub fn NAME` (Rust) or of a top-level `def NAME(` (Python)
/// in `source` (1-based), where a learner's step is.
pub(crate) fn line_of_fn(source: &str, name: &str) -> Option<usize> {
    let rust = format!("pub fn {name}");
    let python = format!("def {name}(");
    source
        .lines()
        .position(|l| {
            l.starts_with(&python)
                || l.trim_start()
                    .strip_prefix(&rust)
                    .is_some_and(|rest| rest.starts_with(['(', '<', ' ']))
        })
        .map(|i| i + 1)
}

/// The first `--> file:line:col` a compiler message points at.
pub(crate) fn first_compiler_location(errors: &str) -> Option<(String, usize)> {
    errors.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix("--> ")?;
        let mut parts = rest.rsplitn(3, ':');
        let _col = parts.next()?;
        let line = parts.next()?.parse().ok()?;
        Some((parts.next()?.to_string(), line))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_escapes_percent_first_then_cr_and_lf() {
        // The documented rules: % -> %25, \r -> %0D, \n -> %0A, in that order
        // (so that an escape is not escaped again).
        assert_eq!(escape_data("100%\r\nnext"), "100%25%0D%0Anext");
        assert_eq!(escape_data("%0A"), "%250A");
        assert_eq!(escape_data("a: b, c"), "a: b, c");
    }

    #[test]
    fn properties_also_escape_colon_and_comma() {
        assert_eq!(escape_property("a: b, c%\n"), "a%3A b%2C c%25%0A");
    }

    #[test]
    fn a_command_has_its_properties_in_order_and_escaped() {
        let a = Annotation {
            end_line: Some(5),
            col: Some(2),
            end_column: Some(9),
            ..Annotation::new(
                Level::Error,
                "step 4: claim, 3 fail",
                "expected: 1\nactual: 2",
            )
            .at("src/lib.rs", 4)
        };
        assert_eq!(
            a.command(),
            "::error file=src/lib.rs,line=4,endLine=5,col=2,endColumn=9,title=step 4%3A claim%2C 3 fail::expected: 1%0Aactual: 2"
        );
        assert_eq!(
            Annotation::new(Level::Notice, "", "hi").command(),
            "::notice::hi"
        );
    }

    #[test]
    fn at_most_ten_of_a_kind_and_a_notice_for_the_rest() {
        let many: Vec<Annotation> = (0..25)
            .map(|i| Annotation::new(Level::Error, "t", format!("e{i}")))
            .chain((0..3).map(|i| Annotation::new(Level::Warning, "t", format!("w{i}"))))
            .collect();
        let out = commands(&many);
        assert_eq!(out.iter().filter(|c| c.starts_with("::error")).count(), 10);
        assert_eq!(out.iter().filter(|c| c.starts_with("::warning")).count(), 3);
        let last = out.last().unwrap();
        assert!(
            last.starts_with("::notice") && last.contains("15 more"),
            "{last}"
        );
        assert_eq!(
            commands(&many[..10]).len(),
            10,
            "no notice when none is left out"
        );
    }

    #[test]
    fn a_summary_is_cut_at_a_line_to_stay_under_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.md");
        std::fs::write(&path, "x".repeat(SUMMARY_LIMIT - 1000)).unwrap();
        let big: String = (0..500)
            .map(|i| format!("| row {i} | {} |\n", "y".repeat(20)))
            .collect();
        append_summary_to(&path, &big).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(written.len() <= SUMMARY_LIMIT, "{}", written.len());
        assert!(written.ends_with("The JSON report has everything._\n"));
        let appended = &written[SUMMARY_LIMIT - 1000..];
        assert!(appended.starts_with("| row 0 |"));
        for line in appended.lines().filter(|l| l.starts_with('|')) {
            assert!(line.ends_with(" |"), "a whole line: {line}");
        }
        // A small summary goes in whole.
        let small = dir.path().join("small.md");
        append_summary_to(&small, "# ok\n").unwrap();
        append_summary_to(&small, "more\n").unwrap();
        assert_eq!(std::fs::read_to_string(&small).unwrap(), "# ok\nmore\n");
    }

    #[test]
    fn the_learners_function_and_the_compilers_first_location_are_found() {
        let source = "use x;\n\n/// doc\npub fn claim(conn: &C) {}\npub fn claim_many<T>() {}\n";
        assert_eq!(line_of_fn(source, "claim"), Some(4));
        assert_eq!(line_of_fn(source, "claim_many"), Some(5));
        assert_eq!(line_of_fn(source, "renew"), None);
        // A Python module's top-level functions; a method or a call is not one.
        let python = "import x\n\nclass A:\n    def claim(self): ...\n\ndef claim(path):\n    claim_many(1)\ndef claim_many(p):\n";
        assert_eq!(line_of_fn(python, "claim"), Some(6));
        assert_eq!(line_of_fn(python, "claim_many"), Some(8));
        let errors = "error[E0277]: cannot add\n  --> subs/alice.rs:12:9\n   |\n";
        assert_eq!(
            first_compiler_location(errors),
            Some(("subs/alice.rs".to_string(), 12))
        );
    }

    #[test]
    fn table_cells_hold_one_line_without_pipes() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }

    #[test]
    fn the_no_summary_warning_fits_80_columns_in_both_languages() {
        use crate::lab::lang::Lang;
        use crate::output::width::display_width;
        for (lang, label) in [(Lang::En, "warning: "), (Lang::Ja, "警告: ")] {
            let text = format!("{label}{}", no_summary_warning(lang));
            for line in text.lines() {
                assert!(display_width(line) <= 80, "{line}");
            }
            assert!(text.contains("GITHUB_STEP_SUMMARY=FILE"));
        }
    }
}
