//! The progress of something slow that reports nothing while it works (a
//! build): after a moment, on a terminal, a line that counts the seconds (and
//! shows the latest detail, e.g. what cargo compiles); in a log, one line when
//! it is announced. Whoever ends it learns whether it was announced, so that
//! a quick build prints nothing at all.

use std::io::Write as _;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::lab::lang::Lang;
use crate::output::style::Style;
use crate::output::width::truncate;

/// How long something may take before it is announced.
pub const ANNOUNCE_AFTER: Duration = Duration::from_millis(1500);
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
pub struct Ticker {
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
    pub fn start(line: String, terminal: bool, style: Style, lang: Lang, width: usize) -> Ticker {
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

    /// Shows `detail` on the live line from its next redraw.
    pub fn detail(&self, detail: &str) {
        let (lock, _) = &*self.state;
        lock.lock().unwrap_or_else(|e| e.into_inner()).detail = detail.to_string();
    }

    /// Shows what `source` says on the live line, at every redraw.
    pub fn follow(&self, source: crate::engine::cargo::Detail) {
        let (lock, _) = &*self.state;
        lock.lock().unwrap_or_else(|e| e.into_inner()).source = Some(source);
    }

    /// Takes the live line off the screen (it comes back at the next tick).
    pub fn clear(&self) {
        let (lock, _) = &*self.state;
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        if state.drawn {
            eprint!("\r\x1b[2K");
            state.drawn = false;
        }
    }

    /// Ends it; whether it had been announced.
    pub fn stop(mut self) -> bool {
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
    while !state.done {
        let secs = start.elapsed().as_secs();
        let mut text = match lang {
            Lang::En => format!("{line} ({secs}s"),
            Lang::Ja => format!("{line}（{secs} 秒"),
        };
        if start.elapsed() >= FIRST_BUILD_NOTE_AFTER {
            text.push_str(match lang {
                Lang::En => "; a first build compiles SQLite: a minute or two",
                Lang::Ja => "。初回は SQLite のビルドで 1、2 分",
            });
        }
        text.push_str(match lang {
            Lang::En => ")",
            Lang::Ja => "）",
        });
        if let Some(source) = &state.source {
            let now = source.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if !now.is_empty() {
                state.detail = now;
            }
        }
        if !state.detail.is_empty() {
            text.push(' ');
            text.push_str(&style.dim(&state.detail));
        }
        let text = truncate(&text, width.saturating_sub(1));
        eprint!("\r\x1b[2K{text}");
        let _ = std::io::stderr().flush();
        state.drawn = true;
        state = wake
            .wait_timeout(state, Duration::from_secs(1))
            .unwrap_or_else(|e| e.into_inner())
            .0;
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
}
