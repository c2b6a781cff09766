//! The bridge in one process: a listener answered by `server::answer` on threads,
//! called through `client::exchange`, with the reference behind `dispatch.rs`.

use std::os::unix::net::UnixListener;
use std::path::Path;

use super::capture::Rename;
use super::client::exchange;
use super::hosted_reference::dispatch::dispatch;
use super::protocol::{Answer, ErrorValue, Failure, Float, Request, Response};
use super::sandbox;
use super::server::{Dispatch, Served, answer};

fn serve_in_background(dir: &Path, dispatch: Dispatch) -> std::path::PathBuf {
    let socket = dir.join("bridge.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let stream = stream.unwrap();
            let served = Served {
                dispatch,
                compiled: "compiled.rs",
                shown: "shown.rs",
                hide: false,
            };
            std::thread::spawn(move || answer(stream, served));
        }
    });
    socket
}

fn returned(response: Response) -> Result<Answer, Failure> {
    match response {
        Response::Returned(returned) => returned,
        other => panic!("expected a returned answer, got {other:?}"),
    }
}

#[test]
fn calls_cross_with_exact_floats_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let socket = serve_in_background(dir.path(), dispatch);
    let db = dir.path().join("jobs.db").to_string_lossy().into_owned();
    let call = |request| returned(exchange(&socket, &request).unwrap());

    assert!(matches!(
        call(Request::InitDb { path: db.clone() }),
        Ok(Answer::Unit)
    ));
    let enqueue = Request::Enqueue {
        path: db.clone(),
        job_id: "j".into(),
    };
    assert!(matches!(call(enqueue), Ok(Answer::Bool(true))));
    let claim = |now: f64, ttl: f64| Request::Claim {
        path: db.clone(),
        job_id: "j".into(),
        owner: "a".into(),
        now: now.into(),
        ttl: ttl.into(),
    };
    match call(claim(0.0, f64::NAN)) {
        Err(Failure {
            error: ErrorValue::InvalidTtl(Float(bits)),
            display,
        }) => {
            assert!(f64::from_bits(bits).is_nan());
            assert_eq!(
                display, "invalid ttl NaN: a lease needs a finite ttl greater than 0",
                "the implementation's own words"
            );
        }
        other => panic!("NaN ttl must come back as InvalidTtl(NaN), got {other:?}"),
    }
    assert!(matches!(call(claim(0.1, 0.2)), Ok(Answer::Fence(Some(1)))));
    match call(Request::State {
        path: db.clone(),
        job_id: "j".into(),
    }) {
        Ok(Answer::Job(Some(job))) => {
            assert_eq!(f64::from(job.until).to_bits(), (0.1f64 + 0.2).to_bits())
        }
        other => panic!("state must answer the claimed job, got {other:?}"),
    }
    let missing_dir = dir
        .path()
        .join("no-such-dir/jobs.db")
        .to_string_lossy()
        .into_owned();
    match call(Request::InitDb { path: missing_dir }) {
        Err(Failure {
            error:
                ErrorValue::Db {
                    code: Some(code),
                    message,
                },
            ..
        }) => {
            assert_eq!(code & 0xff, rusqlite::ffi::SQLITE_CANTOPEN, "{message}");
        }
        other => panic!("a database that cannot be opened is a Db failure, got {other:?}"),
    }
}

#[test]
fn a_panic_comes_back_with_its_message() {
    fn panics(_: Request) -> Result<Answer, Failure> {
        panic!("not yet implemented") // what todo!() panics with
    }
    let dir = tempfile::tempdir().unwrap();
    let socket = serve_in_background(dir.path(), panics);
    let response = exchange(&socket, &Request::InitDb { path: "x".into() }).unwrap();
    match response {
        Response::Panicked { message, .. } => assert_eq!(message, "not yet implemented"),
        other => panic!("expected a panic, got {other:?}"),
    }
}

#[test]
fn a_server_that_is_gone_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("gone.sock");
    drop(UnixListener::bind(&socket).unwrap());
    let answer = exchange(&socket, &Request::InitDb { path: "x".into() });
    assert!(answer.is_err(), "{answer:?}");
}

/// The fields of `pub struct Job` and the variants of `pub enum LeaseError` in
/// `source`, without comments.
fn contract_types(source: &str) -> Vec<String> {
    let items = crate::lab::reference::items(source);
    ["pub struct Job", "pub enum LeaseError"]
        .iter()
        .flat_map(|name| {
            let item = items
                .iter()
                .find(|i| i.text.starts_with(name))
                .unwrap_or_else(|| panic!("{name}"));
            let derive = item
                .head
                .lines()
                .find(|l| l.starts_with("#[derive"))
                .unwrap_or("")
                .to_string();
            std::iter::once(derive).chain(
                item.text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.starts_with("//"))
                    .map(String::from),
            )
        })
        .collect()
}

#[test]
fn the_proxy_declares_the_contracts_types_exactly() {
    assert_eq!(
        contract_types(include_str!("proxy.rs")),
        contract_types(crate::lab::reference::REFERENCE)
    );
}

#[test]
fn an_error_shows_the_implementations_own_words() {
    use super::proxy::LeaseError;
    let failure = |bits: u64, display: &str| Failure {
        error: ErrorValue::InvalidTtl(Float(bits)),
        display: display.to_string(),
    };
    let zero = LeaseError::from(failure(0f64.to_bits(), "ttl must be positive, got 0"));
    assert_eq!(zero.to_string(), "ttl must be positive, got 0");
    let nan = LeaseError::from(failure(f64::NAN.to_bits(), "ttl NaN is not a number"));
    assert_eq!(nan.to_string(), "ttl NaN is not a number");
    assert_eq!(
        zero.to_string(),
        "ttl must be positive, got 0",
        "each error keeps its own text"
    );
    // An error the test made itself has the proxy's words.
    assert_eq!(LeaseError::InvalidNow(1.5).to_string(), "invalid now 1.5");
}

/// The server's thread of each call of `on_its_thread`'s (the order they
/// came in).
static THREADS: std::sync::Mutex<Vec<(String, std::thread::ThreadId)>> =
    std::sync::Mutex::new(Vec::new());

/// Records the server's thread of each call, by the job it names; panics on
/// a job whose name ends in "panic".
fn on_its_thread(request: Request) -> Result<Answer, Failure> {
    let Request::Enqueue { job_id, .. } = request else {
        return Ok(Answer::Unit);
    };
    THREADS
        .lock()
        .unwrap()
        .push((job_id.clone(), std::thread::current().id()));
    if job_id.ends_with("panic") {
        panic!("asked to");
    }
    Ok(Answer::Bool(true))
}

/// A thread's calls, one after another, run on one thread of the server, as
/// a learner's own calls would (a connection made per call put each on a
/// thread of its own: a module that keeps what its first call opened, as
/// SQLite keeps a connection to the thread that made it, failed its second);
/// calls made at once, from threads of their own, run on threads of their
/// own; a panic is a call's answer and the next call is answered.
#[test]
fn a_threads_calls_run_on_one_thread_of_the_server_and_others_on_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let socket = serve_in_background(dir.path(), on_its_thread);
    let enqueue = |job: &str| Request::Enqueue {
        path: "x".into(),
        job_id: job.into(),
    };
    let calls = |who: &str| {
        for job in ["1", "2", "panic", "3"] {
            let response = exchange(&socket, &enqueue(&format!("{who}{job}"))).unwrap();
            assert_eq!(
                matches!(response, Response::Panicked { .. }),
                job == "panic",
                "{who}{job}: {response:?}"
            );
        }
    };
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        for who in ["a", "b"] {
            let (barrier, calls, socket, enqueue) = (&barrier, &calls, &socket, &enqueue);
            s.spawn(move || {
                // Both threads have made their first call before either
                // makes its second: their connections are open at once.
                let first = exchange(socket, &enqueue(&format!("{who}0"))).unwrap();
                assert!(matches!(first, Response::Returned(Ok(Answer::Bool(true)))));
                barrier.wait();
                calls(who);
            });
        }
    });
    let threads = THREADS.lock().unwrap().clone();
    let of = |who: &str| -> Vec<std::thread::ThreadId> {
        threads
            .iter()
            .filter(|(job, _)| job.starts_with(who))
            .map(|(_, thread)| *thread)
            .collect()
    };
    let (a, b) = (of("a"), of("b"));
    assert_eq!((a.len(), b.len()), (5, 5), "{threads:?}");
    assert!(a.iter().all(|t| *t == a[0]), "a's calls: {a:?}");
    assert!(b.iter().all(|t| *t == b[0]), "b's calls: {b:?}");
    assert_ne!(
        a[0], b[0],
        "two threads' calls shared a thread of the server"
    );
}

/// What an implementation says of where fencelab keeps it is renamed
/// before anyone reads it: a Rust file's scratch path as the file the
/// learner named, the server by what it is, its key (a hash) too; a path's
/// start cut off at the end of what was kept is dropped, other text kept.
#[test]
fn fencelabs_paths_in_what_an_implementation_says_are_renamed() {
    let key = "impl-0123456789abcdef";
    let rust = Rename::of(
        Path::new("/home/u/.cache/fencelab/target/release/server-42"),
        key,
        Some("src/lib.rs"),
    );
    assert_eq!(
        rust.text(&format!(
            "[crates/{key}/src/lib.rs:120:5] job_id = \"job-1\" \
             /home/u/.cache/fencelab/target/release/server-42 serve {key}"
        )),
        "[src/lib.rs:120:5] job_id = \"job-1\" fencelab-server serve implementation"
    );
    let python = Rename::of(
        Path::new("/c/ws/crates/pyserver-9/fencelab_server.py"),
        key,
        None,
    );
    assert_eq!(
        python.text("File \"/c/ws/crates/pyserver-9/fencelab_server.py\", line 3, in call"),
        "File \"fencelab_server.py\", line 3, in call"
    );
    // A Rust server's path is not shown as a Python one's, nor the reverse.
    assert!(
        !rust
            .text("/home/u/.cache/fencelab/target/release/server-42")
            .contains(".py")
    );
    // The start of a path (6 bytes or more) at the end is cut off; a shorter
    // one, or text that only looks alike, is kept.
    assert_eq!(
        rust.cut_off(format!("done\n[crates/{}", &key[..4]).as_bytes()),
        11
    );
    assert_eq!(rust.cut_off(b"done\ncrate"), 0);
    assert_eq!(rust.cut_off(b"done\n[crates/x"), 0);
    assert_eq!(
        Rename::default().text("crates/impl-1/src/lib.rs"),
        "crates/impl-1/src/lib.rs"
    );
}

/// The cage crate puts a server's listening socket where the server reads it.
/// A forking server's request carries its paths byte for byte; one that is
/// UTF-8 is a JSON string, as the Python forking root reads its `library`.
#[test]
fn a_forking_servers_request_carries_paths_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let odd = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/caf\xe9"));
    let request = super::zygote::Request {
        key: "k".to_string(),
        tmp: odd.clone(),
        program: "/p".into(),
        reads: vec![odd.clone(), "/r".into()],
        memory: Some(odd.clone()),
        env: vec![("HOME".to_string(), "/h".to_string())],
    };
    let text = serde_json::to_string(&request).expect("byte strings always serialize");
    assert!(text.contains(r#""program":"/p""#), "{text}");
    let back: super::zygote::Request = serde_json::from_str(&text).expect("a request");
    assert_eq!((back.tmp, back.memory), (odd.clone(), Some(odd.clone())));
    assert_eq!((back.reads, back.program), (request.reads, request.program));
    // The forking root's start, as python/fencelab_forking.py reads it.
    let serve = super::protocol::Serve {
        key: "k".to_string(),
        server: "/s/fencelab_server.py".into(),
        library: "/lib/libbridge.so".into(),
    };
    let asked: serde_json::Value = serde_json::from_slice(&serve.encode()).unwrap();
    let python = r#"{"key":"k","server":"/s/fencelab_server.py","library":"/lib/libbridge.so"}"#;
    assert_eq!(
        asked,
        serde_json::from_str::<serde_json::Value>(python).unwrap()
    );
}

#[test]
fn the_cage_and_the_server_agree_on_the_listening_socket() {
    assert_eq!(sandbox::LISTENER_FD, super::server::LISTENER_FD);
}

/// What the cage costs a process run by the engine: `cargo test --lib cage_cost --
/// --ignored --nocapture` (the probe's cost: `cargo test -p fencelab-cage probe_cost`).
#[test]
#[ignore]
fn cage_cost() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let program = std::path::Path::new("/usr/bin/true");
    let _ = sandbox::Layers::probe();
    // Uncaged; caged; caged with a memory cgroup of its own and in a
    // trial's space (a trial's judge or server now).
    for mode in [0, 1, 2, 0, 1, 2] {
        let start = std::time::Instant::now();
        for _ in 0..200 {
            let (memory, space) = match mode {
                2 => (
                    sandbox::Memory::for_cage().unwrap(),
                    sandbox::Space::for_trial(&tmp, None).unwrap(),
                ),
                _ => (None, None),
            };
            let cage = (mode > 0).then(|| {
                sandbox::Cage::reading(&tmp, program, &[])
                    .within(space.as_ref())
                    .bounded(memory.as_ref())
            });
            let limits = crate::engine::process::Limits {
                cage: cage.as_ref().map(sandbox::Cage::plan),
                space: space.as_ref().map(sandbox::Space::join),
                ..Default::default()
            };
            let mut command = std::process::Command::new(program);
            command.current_dir(&tmp);
            let done = crate::engine::process::run(command, dir.path(), &limits).unwrap();
            assert!(done.success());
        }
        let what = ["uncaged", "caged", "caged, memory cgroup, space"][mode];
        println!("{what}: {:?} per process", start.elapsed() / 200);
    }
    let start = std::time::Instant::now();
    for _ in 0..200 {
        drop(sandbox::Memory::for_cage().unwrap());
    }
    println!(
        "memory cgroup made and removed: {:?}",
        start.elapsed() / 200
    );
    let start = std::time::Instant::now();
    for _ in 0..200 {
        drop(sandbox::Space::for_trial(&tmp, None).unwrap());
    }
    println!("space held and let go: {:?}", start.elapsed() / 200);
}
