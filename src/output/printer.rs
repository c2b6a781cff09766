//! Everything fencelab prints for people: progress on stderr (on a terminal
//! only), results on stdout. One place, so that every front end reads alike.

use std::io::{IsTerminal, Write as _};

use crate::output::style::{ColorChoice, Style};

/// Writes a front end's output.
pub struct Printer {
    pub out: Style,
    pub err: Style,
    /// Whether to draw a progress line on stderr.
    progress: bool,
    /// Whether a progress line is on screen now.
    drawn: bool,
}

impl Printer {
    pub fn new(color: ColorChoice) -> Printer {
        Printer {
            out: Style::stdout(color),
            err: Style::stderr(color),
            progress: std::io::stderr().is_terminal(),
            drawn: false,
        }
    }

    /// A printer that writes no progress and no colour (for tests and pipes).
    pub fn plain() -> Printer {
        Printer {
            out: Style::plain(),
            err: Style::plain(),
            progress: false,
            drawn: false,
        }
    }

    pub(crate) fn clear_progress(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[2K");
            self.drawn = false;
        }
    }

    /// A line of results on stdout.
    pub fn line(&mut self, text: &str) {
        self.clear_progress();
        println!("{text}");
    }

    /// A status line on stderr ("Building ...").
    pub fn status(&mut self, verb: &str, text: &str) {
        self.clear_progress();
        eprintln!("{:>12} {text}", self.err.green(&self.err.bold(verb)));
    }

    /// A transient progress line on stderr, on a terminal only.
    pub fn progress(&mut self, text: &str) {
        if self.progress {
            eprint!("\r\x1b[2K{}", self.err.dim(text));
            let _ = std::io::stderr().flush();
            self.drawn = true;
        }
    }

    /// A warning on stderr.
    pub fn warning(&mut self, text: &str) {
        self.clear_progress();
        eprintln!("{} {text}", self.err.yellow(&self.err.bold("warning:")));
    }

    /// An error, with its next step, on stderr.
    pub fn error(&mut self, err: &crate::error::Error) {
        self.clear_progress();
        let text = err.to_string();
        eprintln!("{} {text}", self.err.red(&self.err.bold("error:")));
    }
}

/// `text` with every line indented by `n` spaces.
pub fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
