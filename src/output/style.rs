//! Colour and emphasis in terminal output: on only when writing to a terminal,
//! unless `--color` or `NO_COLOR` says otherwise.

use std::io::IsTerminal;

/// `--color`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// Whether to paint, decided once per stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Style {
    pub color: bool,
}

impl Style {
    /// The style for stdout under `choice`.
    pub(crate) fn stdout(choice: ColorChoice) -> Style {
        Style::decide(choice, std::io::stdout().is_terminal())
    }

    /// The style for stderr under `choice`.
    pub(crate) fn stderr(choice: ColorChoice) -> Style {
        Style::decide(choice, std::io::stderr().is_terminal())
    }

    fn decide(choice: ColorChoice, terminal: bool) -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && !no_color,
        };
        Style { color }
    }

    /// No colour at all.
    pub(crate) fn plain() -> Style {
        Style { color: false }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub(crate) fn red(&self, text: &str) -> String {
        self.paint("31", text)
    }

    pub(crate) fn green(&self, text: &str) -> String {
        self.paint("32", text)
    }

    pub(crate) fn yellow(&self, text: &str) -> String {
        self.paint("33", text)
    }

    pub(crate) fn cyan(&self, text: &str) -> String {
        self.paint("36", text)
    }

    pub(crate) fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    pub(crate) fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    /// Reverse video, for the words that changed inside a changed line.
    pub(crate) fn emphasis(&self, text: &str) -> String {
        self.paint("7", text)
    }
}
