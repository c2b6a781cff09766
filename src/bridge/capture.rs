//! What the implementation prints, as the judge takes it in: each stream read
//! to its end on a thread of its own (so the implementation never blocks on a
//! full pipe), its first bytes kept and the rest counted, the process killed
//! when it floods; and, once a call's answer is in, passed on into the test's
//! own output on the calling thread, so that it shows with the test that
//! caused it every time.

use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

/// How much of the implementation's stdout and stderr is kept (each); the rest
/// is read and counted but dropped, so a flood cannot fill memory or block it.
pub(super) const OUTPUT_CAP: usize = 4 * 1024;
/// How much it may print in all (each stream) before it is killed for flooding.
pub(super) const FLOOD: usize = 4 * 1024 * 1024;

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
}

impl Output {
    /// Takes the stream over; a thread of its own keeps reading it, so that the
    /// implementation never blocks on a full pipe.
    pub(super) fn start(pipe: impl Into<std::os::fd::OwnedFd>, pid: libc::pid_t) -> Arc<Output> {
        let pipe = pipe.into();
        // SAFETY: fcntl on a descriptor we own.
        unsafe {
            let flags = libc::fcntl(pipe.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(pipe.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        let output = Arc::new(Output {
            pipe,
            captured: Mutex::new(Captured::default()),
            pid,
        });
        let reader = Arc::clone(&output);
        std::thread::spawn(move || {
            loop {
                let mut poll = libc::pollfd {
                    fd: reader.pipe.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd; waits without the lock.
                unsafe { libc::poll(&mut poll, 1, -1) };
                let mut captured = reader.captured.lock().unwrap_or_else(|e| e.into_inner());
                reader.take_available(&mut captured);
                if captured.closed {
                    break;
                }
            }
        });
        output
    }

    /// Reads what the pipe holds now (the caller holds the lock).
    fn take_available(&self, c: &mut Captured) {
        let mut buf = [0u8; 8192];
        while !c.closed {
            // SAFETY: reads into a buffer of ours from a descriptor we own.
            let n =
                unsafe { libc::read(self.pipe.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n == 0 {
                c.closed = true;
            } else if n < 0 {
                let err = std::io::Error::last_os_error();
                match err.kind() {
                    std::io::ErrorKind::Interrupted => continue,
                    std::io::ErrorKind::WouldBlock => return,
                    _ => c.closed = true,
                }
            } else {
                let n = n as usize;
                let room = OUTPUT_CAP.saturating_sub(c.kept.len()).min(n);
                c.kept.extend_from_slice(&buf[..room]);
                c.dropped += n - room;
                if !c.flooded && c.kept.len() + c.dropped > FLOOD {
                    c.flooded = true;
                    // SAFETY: a signal to the implementation's process, our child.
                    unsafe {
                        libc::kill(self.pid, libc::SIGKILL);
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
    pub(super) fn pass_on(&self) -> Captured {
        let mut c = self.captured.lock().unwrap_or_else(|e| e.into_inner());
        self.take_available(&mut c);
        if c.emitted < c.kept.len() {
            eprint!("{}", String::from_utf8_lossy(&c.kept[c.emitted..]));
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
