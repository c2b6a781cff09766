//! What the implementation prints, as the judge takes it in: each stream read
//! to its end on a thread of its own (so the implementation never blocks on a
//! full pipe), its first bytes kept and the rest counted, the process killed
//! when it floods; and, once a call's answer is in, passed on into the test's
//! own output on the calling thread, so that it shows with the test that
//! caused it every time.
//!
//! Nothing of where fencelab keeps the implementation reaches the learner
//! through it: what it prints, and what its panics, exceptions and errors
//! say, name its file as the learner does (`Rename`), never its scratch crate
//! or server (a `dbg!`, a printed traceback, a `file!()`).

use std::sync::{Arc, Mutex};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::process::{Pid, Signal};

use super::protocol::PYTHON_SERVER;

/// How much of the implementation's stdout and stderr is kept (each); the rest
/// is read and counted but dropped, so a flood cannot fill memory or block it.
pub(super) const OUTPUT_CAP: usize = 4 * 1024;
/// How much it may print in all (each stream) before it is killed for flooding.
pub(super) const FLOOD: usize = 4 * 1024 * 1024;
/// The name of the judge's threads that read it: their work is the
/// implementation's, never the test moving on (`engine::hangs`).
pub(crate) const OUTPUT_THREAD: &str = "fencelab-output";

/// The paths fencelab keeps the implementation's code at, each with what the
/// learner is shown instead: the path rustc saw for a Rust implementation's
/// file (`crates/impl-<hash>/src/lib.rs`, in `dbg!`, `file!()` and panic
/// messages) as the file the learner named, and the server program (its
/// command line, a Python server's own frames in a printed traceback) and
/// the key it is hosted under (a hash) by what they are.
#[derive(Debug, Default)]
pub(crate) struct Rename {
    pairs: Vec<(String, String)>,
}

impl Rename {
    /// For the server `exe` hosting the implementation `key`, its file shown
    /// as `shown` (a Rust server is told it; a Python server names its
    /// module so itself).
    pub(crate) fn of(exe: &std::path::Path, key: &str, shown: Option<&str>) -> Rename {
        let mut pairs = Vec::new();
        if let Some(shown) = shown.filter(|s| !s.is_empty()) {
            pairs.push((super::server::compiled_path(key), shown.to_string()));
        }
        if let Some(path) = exe.to_str().filter(|p| !p.is_empty()) {
            let python = super::protocol::serves_python(exe);
            let name = if python { PYTHON_SERVER } else { RUST_SERVER };
            pairs.push((path.to_string(), name.to_string()));
        }
        // Its key (a hash, in the server's command line).
        if !key.is_empty() {
            pairs.push((key.to_string(), "implementation".to_string()));
        }
        Rename { pairs }
    }

    /// `text` with every path of fencelab's renamed.
    pub(crate) fn text(&self, text: &str) -> String {
        self.pairs
            .iter()
            .fold(text.to_string(), |text, (from, to)| text.replace(from, to))
    }

    /// How many bytes at the end of `text` start one of the paths (at least
    /// `PARTIAL` of it): the start of a path cut off where the kept output
    /// ends, dropped rather than shown.
    pub(super) fn cut_off(&self, text: &[u8]) -> usize {
        self.pairs
            .iter()
            .filter_map(|(from, _)| {
                let from = from.as_bytes();
                (PARTIAL..from.len().min(text.len() + 1))
                    .rev()
                    .find(|&n| text.ends_with(&from[..n]))
            })
            .max()
            .unwrap_or(0)
    }
}

/// What a Rust server is called where its path would be shown.
const RUST_SERVER: &str = "fencelab-server";

/// The shortest start of a path that `Rename::cut_off` drops.
const PARTIAL: usize = 6;

/// The start of one of the implementation's output streams, and how much more
/// there was.
#[derive(Default)]
pub(crate) struct Captured {
    pub kept: Vec<u8>,
    pub dropped: usize,
    /// It printed more than `FLOOD` and was killed for it.
    pub flooded: bool,
    /// How much of `kept` has been passed on into the test's own output.
    emitted: usize,
    /// The stream has ended.
    closed: bool,
}

/// One of the implementation's output streams: the read end of its pipe
/// (non-blocking) and what was read from it. Bytes are taken out of the pipe
/// only under the lock, so whoever holds it and finds the pipe empty knows that
/// everything written so far is in `captured`.
pub(super) struct Output {
    pipe: std::os::fd::OwnedFd,
    captured: Mutex<Captured>,
    /// The process to kill when it floods.
    pid: libc::pid_t,
    rename: Arc<Rename>,
}

impl Output {
    /// Takes the stream over; a thread of its own keeps reading it, so that the
    /// implementation never blocks on a full pipe.
    pub(super) fn start(
        pipe: impl Into<std::os::fd::OwnedFd>,
        pid: libc::pid_t,
        rename: Arc<Rename>,
    ) -> Arc<Output> {
        let pipe = pipe.into();
        if let Ok(flags) = rustix::fs::fcntl_getfl(&pipe) {
            let _ = rustix::fs::fcntl_setfl(&pipe, flags | rustix::fs::OFlags::NONBLOCK);
        }
        let output = Arc::new(Output {
            pipe,
            captured: Mutex::new(Captured::default()),
            pid,
            rename,
        });
        let reader = Arc::clone(&output);
        let reading = std::thread::Builder::new().name(OUTPUT_THREAD.to_string());
        let started = reading.spawn(move || {
            loop {
                // Waits without the lock.
                let mut poll = [PollFd::new(&reader.pipe, PollFlags::IN)];
                let _ = rustix::event::poll(&mut poll, None);
                let mut captured = reader.captured.lock().unwrap_or_else(|e| e.into_inner());
                reader.take_available(&mut captured);
                if captured.closed {
                    break;
                }
            }
        });
        // As `std::thread::spawn` does where no thread can be made.
        started.expect("a thread to read the implementation's output");
        output
    }

    /// Reads what the pipe holds now (the caller holds the lock).
    fn take_available(&self, c: &mut Captured) {
        let mut buf = [0u8; 8192];
        while !c.closed {
            match rustix::io::read(&self.pipe, &mut buf) {
                Ok(0) => c.closed = true,
                Err(Errno::INTR) => continue,
                Err(Errno::AGAIN) => return,
                Err(_) => c.closed = true,
                Ok(n) => {
                    let room = OUTPUT_CAP.saturating_sub(c.kept.len()).min(n);
                    c.kept.extend_from_slice(&buf[..room]);
                    c.dropped += n - room;
                    if !c.flooded && c.kept.len() + c.dropped > FLOOD {
                        c.flooded = true;
                        if let Some(pid) = Pid::from_raw(self.pid.max(0)) {
                            let _ = rustix::process::kill_process(pid, Signal::KILL);
                        }
                    }
                }
            }
        }
    }

    /// Passes on into the test's own output (which libtest shows with a
    /// failure) everything the implementation has written to this stream so far
    /// and that was not passed on yet. Called on the thread that made a call,
    /// once its answer is in: whatever was printed during the call is in the
    /// pipe by then, so it is shown with the test that caused it, every time.
    /// fencelab's paths in it are renamed (`Rename`), each part on its own:
    /// a path printed in two writes around an answer (by a thread of the
    /// implementation printing while another answers) is not.
    pub(super) fn pass_on(&self) -> Captured {
        let mut c = self.captured.lock().unwrap_or_else(|e| e.into_inner());
        self.take_available(&mut c);
        if c.emitted < c.kept.len() {
            let mut end = c.kept.len();
            if end == OUTPUT_CAP {
                end -= self.rename.cut_off(&c.kept[c.emitted..]);
            }
            let text = String::from_utf8_lossy(&c.kept[c.emitted..end]);
            eprint!("{}", self.rename.text(&text));
            c.emitted = c.kept.len();
        }
        Captured {
            kept: Vec::new(),
            dropped: c.dropped,
            flooded: c.flooded,
            emitted: c.emitted,
            closed: c.closed,
        }
    }
}
