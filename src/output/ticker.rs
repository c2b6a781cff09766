//! The progress of something slow that reports nothing while it works (a
//! build): after a moment, on a terminal, a line that counts the seconds (and
//! shows the latest detail, e.g. how many crates cargo has compiled and which
//! it compiles now); in a log, one line when it is announced. A build still
//! going after a while gets a line of its own once, saying that a first build
//! compiles SQLite, so that the live line keeps its room for the count.
//! Whoever ends it learns whether it was announced, so that a quick build
//! prints nothing at all.

use std::io::Write as _;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::engine::cargo::{Compiled, Compiling};
use crate::lab::lang::Lang;
use crate::output::style::Style;
use crate::output::width::truncate;

/// How long something may take before it is announced.
pub(crate) const ANNOUNCE_AFTER: Duration = Duration::from_millis(1500);
/// After how long the line says that the first build is the slow one.
const FIRST_BUILD_NOTE_AFTER: Duration = Duration::from_secs(10);

#[derive(Default)]
struct State {
    done: bool,
    /// The start line has been printed (or drawn).
    announced: bool,
    /// A progress line is on screen now.
    drawn: bool,
    detail: String,
    /// Where the detail comes from while the thing works (cargo's progress).
    source: Option<crate::engine::cargo::Detail>,
}

/// A slow thing under way, announced by a thread of its own.
pub(crate) struct Ticker {
    state: Arc<(Mutex<State>, Condvar)>,
    thread: Option<JoinHandle<()>>,
    started: Instant,
    delay: Duration,
}

impl Ticker {
    /// Starts counting; `line` is the status line that announces it,
    /// `terminal` whether to draw a live line rather than print one.
    /// The live line is cut to `width` columns, so that it never wraps (a
    /// wrapped line could not be redrawn in place).
    pub(crate) fn start(
        line: String,
        terminal: bool,
        style: Style,
        lang: Lang,
        width: usize,
    ) -> Ticker {
        Ticker::start_after(ANNOUNCE_AFTER, line, terminal, style, lang, width)
    }

    /// As `start`, announced after `delay`.
    fn start_after(
        delay: Duration,
        line: String,
        terminal: bool,
        style: Style,
        lang: Lang,
        width: usize,
    ) -> Ticker {
        let state = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let shared = Arc::clone(&state);
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            tick(&shared, started, delay, &line, terminal, style, lang, width)
        });
        Ticker {
            state,
            thread: Some(thread),
            started,
            delay,
        }
    }

    /// Shows what `source` says on the live line, at every redraw.
    pub(crate) fn follow(&self, source: crate::engine::cargo::Detail) {
        let (lock, _) = &*self.state;
        lock.lock().unwrap_or_else(|e| e.into_inner()).source = Some(source);
    }

    /// Takes the live line off the screen (it comes back at the next tick).
    pub(crate) fn clear(&self) {
        let (lock, _) = &*self.state;
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        if state.drawn {
            eprint!("\r\x1b[2K");
            state.drawn = false;
        }
    }

    /// Ends it; whether it had been announced.
    pub(crate) fn stop(mut self) -> bool {
        self.end()
    }

    fn end(&mut self) -> bool {
        let (lock, wake) = &*self.state;
        {
            let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
            state.done = true;
            wake.notify_all();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        if state.drawn {
            eprint!("\r\x1b[2K");
            state.drawn = false;
        }
        // It took long enough even if its thread never got to say so (a
        // loaded machine): it is announced all the same.
        state.announced || self.started.elapsed() >= self.delay
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.end();
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn tick(
    shared: &(Mutex<State>, Condvar),
    start: Instant,
    delay: Duration,
    line: &str,
    terminal: bool,
    style: Style,
    lang: Lang,
    width: usize,
) {
    let (lock, wake) = shared;
    let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
    while !state.done && start.elapsed() < delay {
        let left = delay.saturating_sub(start.elapsed());
        state = wake
            .wait_timeout(state, left)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    if state.done {
        return;
    }
    state.announced = true;
    if !terminal {
        eprintln!("{line}");
        return;
    }
    let mut noted = false;
    while !state.done {
        if !noted && start.elapsed() >= FIRST_BUILD_NOTE_AFTER {
            eprintln!("\r\x1b[2K{}", style.dim(&first_build_note(lang)));
            noted = true;
        }
        if let Some(source) = &state.source {
            let now = source.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if now.now.is_some() {
                state.detail = compiling(&now, lang);
            }
        }
        let text = live_line(
            line,
            start.elapsed().as_secs(),
            &state.detail,
            style,
            lang,
            width,
        );
        eprint!("\r\x1b[2K{text}");
        let _ = std::io::stderr().flush();
        state.drawn = true;
        state = wake
            .wait_timeout(state, Duration::from_secs(1))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// The live line after `secs` seconds: the status line, the seconds and the
/// detail, cut to `width` so that it never wraps.
fn live_line(
    line: &str,
    secs: u64,
    detail: &str,
    style: Style,
    lang: Lang,
    width: usize,
) -> String {
    let mut text = match lang {
        Lang::En => format!("{line} ({secs}s)"),
        Lang::Ja => format!("{line}（{secs} 秒）"),
    };
    if !detail.is_empty() {
        text.push(' ');
        text.push_str(&style.dim(detail));
    }
    truncate(&text, width.saturating_sub(1))
}

/// How far cargo is, in a few words.
fn compiling(compiling: &Compiling, lang: Lang) -> String {
    let n = compiling.compiled;
    let now = match (&compiling.now, lang) {
        (None, _) => return String::new(),
        (Some(Compiled::Dependency(name)), _) => name.as_str(),
        (Some(Compiled::Implementation), Lang::En) => "an implementation",
        (Some(Compiled::Server), Lang::En) => "the server",
        (Some(Compiled::Suite), Lang::En) => "the suite",
        (Some(Compiled::Bridge), Lang::En) => "the bridge",
        (Some(Compiled::Implementation), Lang::Ja) => "実装",
        (Some(Compiled::Server), Lang::Ja) => "サーバー",
        (Some(Compiled::Suite), Lang::Ja) => "テストスイート",
        (Some(Compiled::Bridge), Lang::Ja) => "ブリッジ",
    };
    match (lang, n) {
        (Lang::En, 1) => format!("1 crate compiled, now {now}"),
        (Lang::En, n) => format!("{n} crates compiled, now {now}"),
        (Lang::Ja, n) => format!("コンパイル済み {n} 個、いま {now}"),
    }
}

/// Said once, on a line of its own, when a build takes long.
fn first_build_note(lang: Lang) -> String {
    match lang {
        Lang::En => "             a first build compiles SQLite: a minute or two".to_string(),
        Lang::Ja => {
            "             初回のビルドは SQLite をコンパイルするので 1、2 分かかります".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thing_quicker_than_the_delay_is_not_announced_and_a_slower_one_is() {
        let hour = Duration::from_secs(3600);
        let quick = Ticker::start_after(hour, "x".into(), false, Style::plain(), Lang::En, 80);
        assert!(!quick.stop());
        let slow = Ticker::start_after(
            Duration::ZERO,
            "x".into(),
            false,
            Style::plain(),
            Lang::En,
            80,
        );
        assert!(slow.stop());
    }

    #[test]
    fn a_first_build_shows_its_crate_count_at_80_columns_in_both_languages() {
        let compiled = Compiling {
            compiled: 37,
            now: Some(Compiled::Dependency("libsqlite3-sys".into())),
        };
        for (lang, line, count) in [
            (
                Lang::En,
                "    Building the suite and 23 implementations",
                "37 crates compiled",
            ),
            (
                Lang::Ja,
                "    ビルド中 テストスイートと 23 個の実装",
                "コンパイル済み 37 個",
            ),
        ] {
            let detail = compiling(&compiled, lang);
            // Long into a first build, as early on.
            for secs in [3, 95] {
                let text = live_line(line, secs, &detail, Style::plain(), lang, 80);
                assert!(text.contains(count), "{text}");
                assert!(crate::output::width::display_width(&text) < 80, "{text}");
            }
            assert!(display_width_of(&first_build_note(lang)) < 80);
        }
        assert_eq!(
            live_line(
                "    Building x",
                12,
                "1 crate compiled, now the suite",
                Style::plain(),
                Lang::En,
                80
            ),
            "    Building x (12s) 1 crate compiled, now the suite"
        );
        let scratch = Compiling {
            compiled: 1,
            now: Some(Compiled::Implementation),
        };
        assert_eq!(
            compiling(&scratch, Lang::En),
            "1 crate compiled, now an implementation"
        );
        assert_eq!(
            compiling(&scratch, Lang::Ja),
            "コンパイル済み 1 個、いま 実装"
        );
        assert_eq!(compiling(&Compiling::default(), Lang::En), "");
    }

    fn display_width_of(text: &str) -> usize {
        crate::output::width::display_width(text)
    }
}
