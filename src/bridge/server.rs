//! The implementation's side of the bridge: the main function of the server
//! process, which hosts one or more implementations (the reference and all its
//! mutants are compiled into one server) and answers each connection on a
//! thread of its own until the judge goes away. A connection carries one
//! judge thread's calls, one after another (`client::exchange`), so they run
//! on one thread here, as a learner's own calls would; calls made at once
//! come on connections of their own.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use super::protocol::{Answer, Failure, Request, Response, from_line, to_line};

/// Calls the hosted implementation's API for one request.
pub type Dispatch = fn(Request) -> Result<Answer, Failure>;

/// One implementation compiled into the server.
pub struct Hosted {
    /// The key the judge asks for (`FENCELAB_IMPL`): the name of the
    /// implementation's crate, which is a hash of its source, so `--identify`
    /// proves which sources this binary was built from.
    pub key: &'static str,
    /// The path rustc saw for the implementation's file. The path to show
    /// instead in panic locations comes with the key when the server is
    /// started, not compiled in: one server then serves a source wherever its
    /// file lies, and is built once for it.
    pub compiled_path: &'static str,
    pub dispatch: Dispatch,
}

/// Where rustc sees the file of the implementation hosted as `key` (its
/// crate's root, as fencelab writes the crate), in its messages, panic
/// locations, `file!()` and `dbg!`.
pub(crate) fn compiled_path(key: &str) -> String {
    format!("crates/{key}/src/lib.rs")
}

/// The file descriptor on which the judge hands over the listening socket.
pub(crate) const LISTENER_FD: i32 = 3;
/// The argument that makes the server print its build and what it hosts.
pub(crate) const IDENTIFY: &str = "--identify";
/// The argument that makes the server serve the implementation named by the
/// next argument, its file shown as the one after (when fencelab's judge
/// starts it).
pub(crate) const SERVE: &str = "serve";
/// The argument that makes the server read which implementation to serve from
/// its standard input, a line, then the path to show for its file, a line of
/// JSON (when the runner starts it for an untrusted judge).
pub(crate) const SERVE_STDIN: &str = "serve-stdin";

/// Where the last panic happened (set by the panic hook, read by the thread that
/// catches the unwind).
static LAST_PANIC_AT: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    /// Whether this thread is answering a call: a panic on it is caught and
    /// reported by the bridge, with its message and place, so the hook says
    /// nothing of it (it would be said twice).
    static ANSWERING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The server's `main`: `--identify` prints the build and what it hosts as JSON;
/// `serve KEY SHOWN` (or `serve-stdin`, both then read from the standard
/// input) answers calls for that implementation on the listening socket at
/// `LISTENER_FD` until its standard input closes (whoever started it has
/// gone), showing its file as SHOWN in panic locations.
pub fn main(build: &str, hosted: &[Hosted]) -> ! {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // A server started for a learner's tests (`serve-stdin`) never says
    // where a panic was: its tests see what the contract returns, and a
    // mutant's lines differ from the reference's.
    let (key, shown, hide) = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [IDENTIFY] => {
            let impls: Vec<serde_json::Value> = hosted
                .iter()
                .map(|h| serde_json::json!({ "key": h.key }))
                .collect();
            println!("{}", serde_json::json!({ "build": build, "impls": impls }));
            std::process::exit(0)
        }
        [SERVE, key, shown] => (key.to_string(), shown.to_string(), false),
        [SERVE_STDIN] => {
            // Nothing of this process may be read by the judge it serves: not
            // its memory, not its files in /proc.
            use rustix::process::{DumpableBehavior, set_dumpable_behavior};
            let _ = set_dumpable_behavior(DumpableBehavior::NotDumpable);
            // Byte by byte: what follows the two lines is the watch for the
            // end of the input (`exit_when_the_judge_goes`), not ours to buffer.
            let mut stdin = std::io::stdin();
            let mut line = || {
                let mut line = Vec::new();
                let mut byte = [0u8; 1];
                while matches!(stdin.read(&mut byte), Ok(1)) && byte[0] != b'\n' {
                    line.push(byte[0]);
                }
                String::from_utf8_lossy(&line).into_owned()
            };
            let key = line();
            let Ok(shown) = serde_json::from_str::<String>(&line()) else {
                eprintln!("fencelab server: no path to show for {key:?} on the standard input");
                std::process::exit(2)
            };
            (key, shown, true)
        }
        _ => {
            eprintln!(
                "usage: fencelab server {IDENTIFY} | {SERVE} KEY SHOWN | {SERVE_STDIN} (run by fencelab, not by hand)"
            );
            std::process::exit(2)
        }
    };
    // One path from here, however the key came.
    let Some(hosted) = hosted.iter().find(|h| h.key == key) else {
        eprintln!("fencelab server: no implementation {key:?} in this build");
        std::process::exit(2)
    };
    // SAFETY: whoever started us (the judge or the runner) passed the
    // listening socket as fd 3; nothing else here owns it.
    let listener = unsafe { UnixListener::from_raw_fd(LISTENER_FD) };
    std::thread::spawn(exit_when_the_judge_goes);
    // One server process serves one implementation: its shown path lives as
    // long as the process, as the compiled-in one did.
    let shown: &'static str = Box::leak(shown.into_boxed_str());
    let served = Served {
        dispatch: hosted.dispatch,
        compiled: hosted.compiled_path,
        shown,
        hide,
    };
    serve(listener, served)
}

/// What a server's answers are made of: the implementation, its file as
/// rustc saw it and as its author knows it, and whether panics' places are
/// left out (a server for a learner's tests).
#[derive(Clone, Copy)]
pub(crate) struct Served {
    pub dispatch: Dispatch,
    pub compiled: &'static str,
    pub shown: &'static str,
    pub hide: bool,
}

fn exit_when_the_judge_goes() {
    let mut buf = [0u8; 256];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
    std::process::exit(0);
}

/// Answers connections on `listener` forever, each on a thread of its own.
pub(crate) fn serve(listener: UnixListener, served: Served) -> ! {
    let Served {
        compiled, shown, ..
    } = served;
    std::panic::set_hook(Box::new(move |info| {
        let at = info.location().map(|l| l.to_string());
        *LAST_PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()) = at.clone();
        if ANSWERING.with(std::cell::Cell::get) {
            return;
        }
        // A thread of the implementation's own: say it as Rust would, with
        // the implementation's path rather than the scratch crate's.
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(a panic without a message)".to_string());
        let thread = std::thread::current();
        eprintln!(
            "thread '{}' panicked at {}:\n{message}",
            thread.name().unwrap_or("<unnamed>"),
            at.unwrap_or_default().replace(compiled, shown)
        );
    }));
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                std::thread::spawn(move || answer(stream, served));
            }
            Err(err) => {
                eprintln!("fencelab server: accept failed: {err}");
                std::process::exit(3)
            }
        }
    }
}

/// Answers the requests on `stream`, one after another, until the judge
/// closes it.
pub(crate) fn answer(stream: UnixStream, served: Served) {
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
        let response = respond(&line, served);
        if (&stream).write_all(to_line(&response).as_bytes()).is_err() {
            return;
        }
        line.clear();
    }
}

/// Where a panic was (`at`, as rustc names the file), as its author names
/// the file; never to a learner's tests (`hide`).
fn located(at: Option<String>, compiled: &str, shown: &str, hide: bool) -> Option<String> {
    at.map(|at| at.replace(compiled, shown)).filter(|_| !hide)
}

/// Calls the implementation for one request (a line) and says what it did.
fn respond(line: &str, served: Served) -> Response {
    let Served {
        dispatch,
        compiled,
        shown,
        hide,
    } = served;
    let request = match from_line::<Request>(line) {
        Ok(request) => request,
        Err(err) => return Response::Returned(Err(Failure::other(err))),
    };
    ANSWERING.with(|a| a.set(true));
    let returned = catch_unwind(AssertUnwindSafe(|| dispatch(request)));
    // Until the next request, a panic on this thread is not a call's.
    ANSWERING.with(|a| a.set(false));
    match returned {
        Ok(returned) => Response::Returned(returned),
        Err(payload) => {
            let message = if let Some(s) = payload.downcast_ref::<&str>() {
                s.to_string()
            } else if let Some(s) = payload.downcast_ref::<String>() {
                s.clone()
            } else {
                "(a panic without a message)".to_string()
            };
            let at = LAST_PANIC_AT
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            let location = located(at, compiled, shown, hide);
            Response::Panicked { message, location }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_for_a_learners_tests_never_says_where_a_panic_was() {
        let at = || Some("compiled.rs:3:5".to_string());
        assert_eq!(
            located(at(), "compiled.rs", "lease.rs", false).as_deref(),
            Some("lease.rs:3:5")
        );
        assert_eq!(located(at(), "compiled.rs", "lease.rs", true), None);
    }
}
