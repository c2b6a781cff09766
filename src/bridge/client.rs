//! The judge's side of the bridge: starts the implementation's process on the
//! first call of a test and forwards every call to it, on a connection per
//! thread of the judge: calls from several threads of a test can be under way
//! at once, and a thread's calls, one after another, run on one thread of the
//! server, as a learner's own calls would.
//!
//! Whatever goes wrong on the other side ends the test with a message that says
//! what the implementation did: panicked (with its message), ended (with its exit
//! status or signal, and the last of what it printed), or sent nonsense.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::capture::{Captured, FLOOD, OUTPUT_CAP};
use super::held::{Process, SERVER_PID, Server};
use super::protocol::{Answer, Failure, Request, Response, from_line, to_line};
use super::said::{How, Said};
use super::start::start;

static SERVER: OnceLock<Server> = OnceLock::new();

/// A panic inside the implementation, at the bridge's line (left out of
/// what learners see): the next line says what the implementation did.
fn failed_inside(server: &Server, function: &str, location: Option<String>, message: &str) -> ! {
    let message = server.rename.text(message);
    // Python has no panics: an exception failed the call.
    let said = Said::FailedInCall {
        call: function.to_string(),
        at: location,
        panicked: !server.python,
    };
    panic!("{}\n{message}", said.line())
}

/// Calls the implementation: the `Ok`/`Err` it returned, or a panic of the test
/// that says what happened to it.
#[track_caller]
pub(crate) fn call(request: Request) -> Result<Answer, Failure> {
    let server = SERVER.get_or_init(start);
    let function = request.function();
    match exchange(&server.socket, &request) {
        Ok(Response::Returned(returned)) => {
            server.pass_on_output();
            returned.map_err(|failure| failure.renamed(|text| server.rename.text(text)))
        }
        Ok(Response::Panicked { message, location }) => {
            server.pass_on_output();
            failed_inside(server, function, location, &message)
        }
        Ok(Response::Misfit {
            function,
            returned,
            contract,
        }) => {
            server.pass_on_output();
            // The suite's observation at the test's line (`track_caller`),
            // so it reads as the wrong return value it is.
            let returned = server.rename.text(&returned);
            panic!(
                "observation: what {function}() returned\nexpected: {contract}\nactual: {returned}"
            )
        }
        Err(err) => server.ended(function, err),
    }
}

thread_local! {
    /// This thread's connection to the implementation's process (its
    /// socket's path beside it), made on the thread's first call.
    static CONNECTION: std::cell::RefCell<Option<(PathBuf, BufReader<UnixStream>)>> =
        const { std::cell::RefCell::new(None) };
}

/// One request and its response over this thread's connection to `socket`
/// (made on the first call; a connection that failed is not used again).
pub(crate) fn exchange(socket: &Path, request: &Request) -> Result<Response, How> {
    CONNECTION.with(|cell| {
        let mut cell = cell.borrow_mut();
        if !matches!(&*cell, Some((path, _)) if path == socket) {
            let stream =
                UnixStream::connect(socket).map_err(|e| stopped(format!("cannot connect: {e}")))?;
            *cell = Some((socket.to_path_buf(), BufReader::new(stream)));
        }
        let Some((_, reader)) = cell.as_mut() else {
            unreachable!("connected above")
        };
        let answered = exchange_on(reader, request);
        if answered.is_err() {
            *cell = None;
        }
        answered
    })
}

/// The longest answer the judge reads: what an implementation sends is read
/// within it, never held whole (a flood of a gigabyte without a newline).
pub(crate) const ANSWER_CAP: u64 = 8 << 20;

/// A connection that failed for `why`.
fn stopped(why: String) -> How {
    How::StoppedAnswering { why }
}

fn exchange_on(reader: &mut BufReader<UnixStream>, request: &Request) -> Result<Response, How> {
    reader
        .get_ref()
        .write_all(to_line(request).as_bytes())
        .map_err(|e| stopped(format!("cannot send the call: {e}")))?;
    let mut line = String::new();
    (&mut *reader)
        .take(ANSWER_CAP + 1)
        .read_line(&mut line)
        .map_err(|e| stopped(format!("cannot read the answer: {e}")))?;
    if line.len() as u64 > ANSWER_CAP {
        return Err(How::AnswerTooLong {
            mib: ANSWER_CAP >> 20,
        });
    }
    if line.is_empty() {
        return Err(stopped(
            "it closed the connection without answering".to_string(),
        ));
    }
    from_line(&line).map_err(stopped)
}

impl Server {
    /// Passes on what the implementation printed (see `Output::pass_on`).
    fn pass_on_output(&self) -> (Captured, Captured) {
        match &self.spawned {
            Some(s) => (s.stdout.pass_on(), s.stderr.pass_on()),
            None => (Captured::default(), Captured::default()),
        }
    }

    /// Ends the test: the implementation did not answer `function`. What it
    /// printed goes into the test's output first; the message says how it
    /// ended, a flood first of all (its output is cut short, never this line).
    fn ended(&self, function: &str, err: How) -> ! {
        // The connection failed: the process is ending, or has ended, or (if it
        // closed the connection on purpose) is still running. One that
        // floods the judge runs on: no end to wait for.
        let status = match err {
            How::AnswerTooLong { .. } => None,
            _ => self.wait(Duration::from_secs(5)),
        };
        let (stdout, stderr) = self.pass_on_output();
        let flooded: Vec<String> = [("stdout", &stdout), ("stderr", &stderr)]
            .iter()
            .filter(|(_, c)| c.flooded)
            .map(|(name, _)| name.to_string())
            .collect();
        let how = match status {
            _ if !flooded.is_empty() => How::Flooded {
                mib: (FLOOD / (1024 * 1024)) as u64,
                streams: flooded,
            },
            Some(status) => describe(status),
            None => err,
        };
        let dropped = (stdout.dropped + stderr.dropped) as u64;
        let note = if dropped > 0 {
            let cut = Said::StreamsCut {
                kib: (OUTPUT_CAP / 1024) as u64,
                dropped,
            };
            format!("\n{}", cut.line())
        } else {
            String::new()
        };
        let said = Said::ProcessEnded {
            call: function.to_string(),
            how,
        };
        panic!("{}{note}", said.line())
    }

    fn wait(&self, limit: Duration) -> Option<ExitStatus> {
        let spawned = self.spawned.as_ref()?;
        let deadline = Instant::now() + limit;
        let mut child = spawned.child.lock().unwrap_or_else(|e| e.into_inner());
        let child = match &mut *child {
            Process::Child(child) => child,
            Process::Forked => {
                let status = super::zygote::status(limit)?;
                SERVER_PID.store(0, Ordering::SeqCst);
                return Some(ExitStatus::from_raw(status));
            }
        };
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    // Reaped: its pid may be reused, so `reap_server` must not touch it.
                    SERVER_PID.store(0, Ordering::SeqCst);
                    return Some(status);
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => return None,
            }
        }
    }
}

/// How a process with `status` ended: an exit, a signal, or neither.
pub(crate) fn describe(status: ExitStatus) -> How {
    match (status.code(), status.signal()) {
        (Some(code), _) => How::Exited { code },
        (None, Some(signal)) => How::Signal { signal },
        _ => How::Ended {
            status: status.to_string(),
        },
    }
}
