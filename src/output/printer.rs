//! Everything fencelab prints for people: progress on stderr (on a terminal
//! only), status lines on stderr, results on stdout. One place, so that every
//! front end reads alike: the same verbs (in the reader's language), the same
//! quiet and verbose levels, the same progress for long builds.
//!
//! Progress is drawn only on a terminal; a CI log gets a start and an end line
//! for anything slow, and nothing that redraws itself.

use std::io::{IsTerminal, Write as _};

use crate::lab::lang::Lang;
use crate::output::style::{ColorChoice, Style};
use crate::output::ticker::Ticker;
use crate::output::width::{DEFAULT_WIDTH, pad_left, terminal_width};

/// How much a command says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// The verdict and what failed (`--quiet`).
    Quiet,
    #[default]
    Normal,
    /// Everything, e.g. every mutant's line and the whole kill matrix (`--verbose`).
    Verbose,
}

/// The verb of a status line, in each language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Checking,
    Created,
    Building,
    Built,
    Verifying,
    Baseline,
    Grading,
    Graded,
    Wrote,
    Judging,
    Removed,
}

impl Verb {
    pub(crate) fn label(self, lang: Lang) -> &'static str {
        match (self, lang) {
            (Verb::Checking, Lang::En) => "Checking",
            (Verb::Created, Lang::En) => "Created",
            (Verb::Building, Lang::En) => "Building",
            (Verb::Built, Lang::En) => "Built",
            (Verb::Verifying, Lang::En) => "Verifying",
            (Verb::Baseline, Lang::En) => "Baseline",
            (Verb::Grading, Lang::En) => "Grading",
            (Verb::Graded, Lang::En) => "Graded",
            (Verb::Wrote, Lang::En) => "Wrote",
            (Verb::Judging, Lang::En) => "Judging",
            (Verb::Removed, Lang::En) => "Removed",
            (Verb::Checking, Lang::Ja) => "確認中",
            (Verb::Created, Lang::Ja) => "作成",
            (Verb::Building, Lang::Ja) => "ビルド中",
            (Verb::Built, Lang::Ja) => "ビルド完了",
            (Verb::Verifying, Lang::Ja) => "検証中",
            (Verb::Baseline, Lang::Ja) => "基準",
            (Verb::Grading, Lang::Ja) => "採点中",
            (Verb::Graded, Lang::Ja) => "採点",
            (Verb::Wrote, Lang::Ja) => "書き込み",
            (Verb::Judging, Lang::Ja) => "判定中",
            (Verb::Removed, Lang::Ja) => "削除",
        }
    }
}

/// The column status verbs are right-aligned to, as cargo does.
const VERB_WIDTH: usize = 12;

/// What a report is rendered for: the colours of stdout, the reader's
/// language, the width and how much to say. Every command's report is a
/// function from its report type and a `Layout` to text, so that the same
/// text is printed, written to a file, or pinned by a snapshot.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub(crate) out: Style,
    pub lang: Lang,
    pub width: usize,
    pub verbosity: Verbosity,
}

impl Layout {
    /// No colour, in English, 100 columns wide, at the normal level (for
    /// tests and pipes).
    pub fn plain() -> Layout {
        Layout {
            out: Style::plain(),
            lang: Lang::En,
            width: DEFAULT_WIDTH,
            verbosity: Verbosity::Normal,
        }
    }

    /// The same layout in `lang`.
    pub fn in_lang(mut self, lang: Lang) -> Layout {
        self.lang = lang;
        self
    }

    /// The same layout at `verbosity`.
    pub fn at(mut self, verbosity: Verbosity) -> Layout {
        self.verbosity = verbosity;
        self
    }

    /// The same layout for `width` columns.
    pub fn with_width(mut self, width: usize) -> Layout {
        self.width = width;
        self
    }

    pub(crate) fn quiet(&self) -> bool {
        self.verbosity == Verbosity::Quiet
    }

    pub(crate) fn verbose(&self) -> bool {
        self.verbosity == Verbosity::Verbose
    }
}

/// Writes a front end's output: status lines and progress on stderr, the
/// report (rendered for its `layout`) on stdout.
pub(crate) struct Printer {
    pub out: Style,
    pub err: Style,
    pub verbosity: Verbosity,
    /// The language of what the printer says itself (verbs, headings).
    pub lang: Lang,
    /// The width to lay results out for (the terminal's, or 100).
    pub width: usize,
    /// Whether to draw a progress line on stderr.
    progress: bool,
    /// Whether a progress line is on screen now.
    drawn: bool,
    /// The build under way, if one is.
    ticker: Option<Ticker>,
}

impl Printer {
    pub(crate) fn new(color: ColorChoice, verbosity: Verbosity, lang: Lang) -> Printer {
        Printer {
            out: Style::stdout(color),
            err: Style::stderr(color),
            verbosity,
            lang,
            width: terminal_width(),
            progress: std::io::stderr().is_terminal() && verbosity > Verbosity::Quiet,
            drawn: false,
            ticker: None,
        }
    }

    /// What the printer's reports are rendered for.
    pub(crate) fn layout(&self) -> Layout {
        Layout {
            out: self.out,
            lang: self.lang,
            width: self.width,
            verbosity: self.verbosity,
        }
    }

    pub(crate) fn quiet(&self) -> bool {
        self.verbosity == Verbosity::Quiet
    }

    pub(crate) fn verbose(&self) -> bool {
        self.verbosity == Verbosity::Verbose
    }

    pub(crate) fn clear_progress(&mut self) {
        if let Some(ticker) = &self.ticker {
            ticker.clear();
        }
        if self.drawn {
            eprint!("\r\x1b[2K");
            self.drawn = false;
        }
    }

    /// A line of results on stdout.
    pub(crate) fn line(&mut self, text: &str) {
        self.clear_progress();
        println!("{text}");
    }

    /// Rendered text on stdout, as it is (a report ends its own lines).
    pub(crate) fn text(&mut self, text: &str) {
        self.clear_progress();
        print!("{text}");
    }

    /// A status line on stderr (`Checking src/lib.rs`), unless quiet.
    pub(crate) fn status(&mut self, verb: Verb, text: &str) {
        if self.quiet() {
            return;
        }
        self.clear_progress();
        eprintln!("{}", status_line(&self.err, verb.label(self.lang), text));
    }

    /// A transient progress line on stderr, on a terminal only.
    pub(crate) fn progress(&mut self, text: &str) {
        if self.progress && self.ticker.is_none() {
            let text = crate::output::width::truncate(text, self.width.saturating_sub(1));
            eprint!("\r\x1b[2K{}", self.err.dim(&text));
            let _ = std::io::stderr().flush();
            self.drawn = true;
        }
    }

    /// Tests under way: `done` of `total` trials have ended.
    pub(super) fn trials(&mut self, done: usize, total: usize) {
        if done.is_multiple_of(8) || done == total {
            let text = match self.lang {
                Lang::En => format!("  running tests: {done}/{total}"),
                Lang::Ja => format!("  テストを実行中: {done}/{total}"),
            };
            self.progress(&text);
        }
    }

    /// A build starts. Once it has taken more than a moment, it is said what
    /// it builds: on a terminal a line that counts the seconds, in a log one
    /// line; when it ends, a line says how long it took.
    pub(super) fn build_started(
        &mut self,
        implementations: usize,
        detail: Option<&crate::engine::cargo::Detail>,
    ) {
        self.clear_progress();
        if self.quiet() {
            return;
        }
        let what = self.build_what(implementations);
        let ticker = Ticker::start(
            status_line(&self.err, Verb::Building.label(self.lang), &what),
            self.progress,
            self.err,
            self.lang,
            self.width,
        );
        if let Some(detail) = detail {
            ticker.follow(detail.clone());
        }
        self.ticker = Some(ticker);
    }

    /// The build has ended after `secs`; said when the build was slow enough
    /// to be announced, or when verbose.
    pub(super) fn build_finished(&mut self, implementations: usize, secs: f64) {
        let shown = self.ticker.take().is_some_and(Ticker::stop);
        if shown || self.verbose() {
            let what = self.build_what(implementations);
            let text = match self.lang {
                Lang::En => format!("{what} in {secs:.1}s"),
                Lang::Ja => format!("{what}（{secs:.1} 秒）"),
            };
            self.status(Verb::Built, &text);
        }
    }

    fn build_what(&self, implementations: usize) -> String {
        match (self.lang, implementations) {
            (Lang::En, 1) => "the suite and 1 implementation".to_string(),
            (Lang::En, n) => format!("the suite and {n} implementations"),
            (Lang::Ja, n) => format!("テストスイートと {n} 個の実装"),
        }
    }
}

impl Printer {
    /// A warning on stderr.
    pub(crate) fn warning(&mut self, text: &str) {
        self.clear_progress();
        let label = match self.lang {
            Lang::En => "warning:",
            Lang::Ja => "警告:",
        };
        eprintln!("{} {text}", self.err.yellow(&self.err.bold(label)));
    }

    /// An error, with its next step, on stderr.
    pub(crate) fn error(&mut self, err: &crate::error::Error) {
        self.clear_progress();
        if let Some(ticker) = self.ticker.take() {
            ticker.stop();
        }
        // Fitted to a terminal; a log or a pipe gets each line whole.
        let width = match std::io::stderr().is_terminal() {
            true => self.width,
            false => usize::MAX,
        };
        let text = error_text(&err.to_string(), width);
        let text = text.strip_prefix("error:").unwrap_or(&text);
        eprintln!("{}{text}", self.err.red(&self.err.bold("error:")));
    }
}

/// An error as the terminal shows it, fitted to `width`: its first line and
/// its `next:` wrapped; what it quotes (a file's line, a compiler's
/// messages) left as it is.
pub(crate) fn error_text(text: &str, width: usize) -> String {
    use crate::output::width::wrap_hanging;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            out.push(wrap_hanging(&format!("error: {line}"), width, "  "));
        } else if line.starts_with("  next: ") {
            out.push(wrap_hanging(line, width, "        "));
        } else {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

impl Drop for Printer {
    fn drop(&mut self) {
        if let Some(ticker) = self.ticker.take() {
            ticker.stop();
        }
        self.clear_progress();
    }
}

/// `verb` right-aligned in its column, then `text`, as cargo's status lines.
pub(crate) fn status_line(style: &Style, verb: &str, text: &str) -> String {
    let verb = pad_left(verb, VERB_WIDTH);
    format!("{} {text}", style.green(&style.bold(&verb)))
}

/// `text` with every line indented by `n` spaces.
pub fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_fitted_to_the_terminal_but_what_it_quotes_is_not() {
        let text = "course.toml:4:1: there is no step `claim_mny` (did you mean `claim_many`?)\n  \
                    4 | claim_mny = 2 # a comment long enough to run past eighty columns, kept\n  \
                    next: name a step by its function: init_db, enqueue, state, claim, renew, complete, release, claim_many";
        let shown = error_text(text, 80);
        for line in shown.lines().filter(|l| !l.contains(" | ")) {
            assert!(crate::output::width::display_width(line) <= 80, "{line}");
        }
        assert!(shown.contains(
            "\n  4 | claim_mny = 2 # a comment long enough to run past eighty columns, kept\n"
        ));
        insta::assert_snapshot!(shown);
        assert_eq!(
            error_text("short\n  next: do it", 80),
            "error: short\n  next: do it"
        );
    }
}
