//! What crosses the bridge: one request per connection, one response back, each
//! a line of JSON. Floats travel as their bits so that NaN, infinities and every
//! fraction arrive exactly as they were sent.
//!
//! The runner's requests to the zygotes and forking servers are JSON too: byte
//! strings (paths, arguments, environment) travel as `bytes` says.

use serde::{Deserialize, Serialize};

/// The name of the environment variable that holds the implementation server's path.
pub(crate) const SERVER_ENV: &str = "FENCELAB_SERVER";
/// The name of the environment variable that says which implementation to serve.
pub(crate) const IMPL_ENV: &str = "FENCELAB_IMPL";
/// The name of the environment variable that holds the path to show for the
/// implementation's file (a Rust server's; a Python server knows its own).
pub(crate) const SHOWN_ENV: &str = "FENCELAB_SHOWN";
/// The name of the environment variable that holds the socket of a server the
/// runner started (an untrusted judge gets only this).
pub(crate) const SOCKET_ENV: &str = "FENCELAB_SOCKET";
/// The `PATH` of every process a trial runs (a judge, a server): where the
/// system's programs are, the same on every machine, never the grader's own
/// (which names its home and its tools: `/home/grader/.cargo/bin`).
pub(crate) const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// The whole environment of an implementation's server, started by its
/// judge (`start::start`) or forked for it (`start::start_forked`): the trial's own places
/// (`HOME`, `TMPDIR`, as the judge has them), the system's `PATH`, the
/// locale, `RUST_BACKTRACE=0`, sorted. Nothing else: not what is the
/// judge's to know (the server's path, its key, the path to show, the memory
/// cgroup, the forking server's connection), and nothing of the grader's (its
/// `PATH`, a CI job's tokens), which the implementation could raise in an
/// error and so put in its report.
pub(crate) fn server_env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            k == "HOME" || k == "TMPDIR" || k == "LANG" || k.starts_with("LC_")
        })
        .chain([
            ("PATH".into(), SYSTEM_PATH.into()),
            ("RUST_BACKTRACE".into(), "0".into()),
        ])
        .collect();
    env.sort();
    env
}

/// The file name of fencelab's Python server (`python/fencelab_server.py`,
/// written beside the modules it hosts); a server by another name is Rust.
pub(crate) const PYTHON_SERVER: &str = "fencelab_server.py";

/// Whether the server program at `path` hosts Python.
pub(crate) fn serves_python(path: &std::path::Path) -> bool {
    path.file_name().is_some_and(|n| n == PYTHON_SERVER)
}

/// An `f64` carried as its bit pattern.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Float(pub u64);

impl From<f64> for Float {
    fn from(value: f64) -> Self {
        Float(value.to_bits())
    }
}

impl From<Float> for f64 {
    fn from(value: Float) -> Self {
        f64::from_bits(value.0)
    }
}

/// A call of the contract's API.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Request {
    InitDb {
        path: String,
    },
    Enqueue {
        path: String,
        job_id: String,
    },
    State {
        path: String,
        job_id: String,
    },
    Claim {
        path: String,
        job_id: String,
        owner: String,
        now: Float,
        ttl: Float,
    },
    Renew {
        path: String,
        job_id: String,
        owner: String,
        fence: i64,
        now: Float,
        ttl: Float,
    },
    Complete {
        path: String,
        job_id: String,
        owner: String,
        fence: i64,
        now: Float,
        result: String,
    },
    Release {
        path: String,
        job_id: String,
        owner: String,
        fence: i64,
    },
    ClaimMany {
        path: String,
        job_id: String,
        owners: Vec<String>,
        now: Float,
        ttl: Float,
    },
}

impl Request {
    /// The API function this request calls.
    pub(crate) fn function(&self) -> &'static str {
        match self {
            Request::InitDb { .. } => "init_db",
            Request::Enqueue { .. } => "enqueue",
            Request::State { .. } => "state",
            Request::Claim { .. } => "claim",
            Request::Renew { .. } => "renew",
            Request::Complete { .. } => "complete",
            Request::Release { .. } => "release",
            Request::ClaimMany { .. } => "claim_many",
        }
    }
}

/// A stored job, as `state` answers it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobRow {
    pub id: String,
    pub owner: Option<String>,
    pub until: Float,
    pub fence: i64,
    pub result: Option<String>,
    pub done: bool,
}

/// The `Ok` value of a call.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Answer {
    Unit,
    Bool(bool),
    Job(Option<JobRow>),
    Fence(Option<i64>),
    Fences(Vec<Option<i64>>),
}

/// The `Err` value of a call: the error, and its `Display` text as the
/// implementation writes it (the contract leaves the text free, so the judge's
/// proxy shows the implementation's own, and a test that compares it sees what
/// the implementation would have said in process).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Failure {
    pub error: ErrorValue,
    pub display: String,
}

/// The error a call returned.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ErrorValue {
    InvalidTtl(Float),
    InvalidNow(Float),
    /// A `rusqlite::Error`: SQLite's extended result code when it has one, and
    /// the error's text.
    Db {
        code: Option<i32>,
        message: String,
    },
    /// A variant the contract does not have (shown by its `Debug` text).
    Other(String),
    /// A Python `ValueError` raised although every argument was valid
    /// (`ValueError: ` and its text): no error of the contract's.
    ValueError(String),
}

impl Failure {
    /// The same failure, its words passed through `rename` (its kind and
    /// numbers, which verdicts read, as they are).
    pub(crate) fn renamed(self, rename: impl Fn(&str) -> String) -> Failure {
        Failure {
            display: rename(&self.display),
            error: match self.error {
                ErrorValue::Db { code, message } => ErrorValue::Db {
                    code,
                    message: rename(&message),
                },
                ErrorValue::Other(text) => ErrorValue::Other(rename(&text)),
                ErrorValue::ValueError(text) => ErrorValue::ValueError(rename(&text)),
                other => other,
            },
        }
    }

    /// A failure of the bridge itself (a malformed message), not of the
    /// implementation.
    pub(crate) fn other(text: String) -> Failure {
        Failure {
            display: text.clone(),
            error: ErrorValue::Other(text),
        }
    }
}

/// What comes back over the bridge.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Response {
    Returned(Result<Answer, Failure>),
    /// The implementation panicked inside the call.
    Panicked {
        message: String,
        location: Option<String>,
    },
    /// A Python implementation returned a value the contract's type has no
    /// room for (`{}` for a missing job): its repr, capped, and what the
    /// contract allows. Observed as a return value, never converted.
    Misfit {
        function: String,
        returned: String,
        contract: String,
    },
}

/// A byte string that may not be UTF-8 (a path, an argument, a variable),
/// as a field of a JSON message: a string where it is UTF-8 (what Python
/// reads), else an array of its bytes. For `#[serde(with = "bytes")]` on a
/// `CString` or `PathBuf`; `bytes::option` and `bytes::list` for an `Option`
/// and a `Vec` of one.
pub(crate) mod bytes {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::ffi::CString;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::PathBuf;

    /// A type that is a byte string.
    pub(crate) trait Bytes: Sized {
        fn bytes(&self) -> &[u8];
        /// None where `bytes` cannot be one (a NUL inside a C string).
        fn from_bytes(bytes: Vec<u8>) -> Option<Self>;
    }

    impl Bytes for CString {
        fn bytes(&self) -> &[u8] {
            self.as_bytes()
        }
        fn from_bytes(bytes: Vec<u8>) -> Option<Self> {
            CString::new(bytes).ok()
        }
    }

    impl Bytes for PathBuf {
        fn bytes(&self) -> &[u8] {
            self.as_os_str().as_bytes()
        }
        fn from_bytes(bytes: Vec<u8>) -> Option<Self> {
            Some(std::ffi::OsString::from_vec(bytes).into())
        }
    }

    /// One byte string, either way it may come.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Wire {
        Text(String),
        Raw(Vec<u8>),
    }

    /// A byte string as `serialize` writes it, for the `Option` and `Vec`.
    struct Field<'a, T>(&'a T);

    impl<T: Bytes> Serialize for Field<'_, T> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            serialize(self.0, s)
        }
    }

    /// A byte string as `deserialize` reads it, for the `Option` and `Vec`.
    struct Owned<T>(T);

    impl<'de, T: Bytes> Deserialize<'de> for Owned<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize(d).map(Owned)
        }
    }

    pub(crate) fn serialize<T: Bytes, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(value.bytes()) {
            Ok(text) => s.serialize_str(text),
            Err(_) => s.collect_seq(value.bytes()),
        }
    }

    pub(crate) fn deserialize<'de, T: Bytes, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let bytes = match Wire::deserialize(d)? {
            Wire::Text(text) => text.into_bytes(),
            Wire::Raw(bytes) => bytes,
        };
        T::from_bytes(bytes).ok_or_else(|| D::Error::custom("a NUL inside a C string"))
    }

    pub(crate) mod option {
        use super::*;

        pub(crate) fn serialize<T: Bytes, S: Serializer>(
            value: &Option<T>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            value.as_ref().map(Field).serialize(s)
        }

        pub(crate) fn deserialize<'de, T: Bytes, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<T>, D::Error> {
            Ok(Option::<Owned<T>>::deserialize(d)?.map(|o| o.0))
        }
    }

    pub(crate) mod list {
        use super::*;

        pub(crate) fn serialize<T: Bytes, S: Serializer>(
            value: &[T],
            s: S,
        ) -> Result<S::Ok, S::Error> {
            s.collect_seq(value.iter().map(Field))
        }

        pub(crate) fn deserialize<'de, T: Bytes, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Vec<T>, D::Error> {
            Ok(Vec::<Owned<T>>::deserialize(d)?
                .into_iter()
                .map(|o| o.0)
                .collect())
        }
    }
}

/// What the runner asks of the Python forking root: a forking server for
/// the implementation `key`, hosted by `server`, forking its trials with the
/// bridge's cdylib `library` (`python/fencelab_forking.py`).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Serve {
    pub key: String,
    #[serde(with = "bytes")]
    pub server: std::path::PathBuf,
    #[serde(with = "bytes")]
    pub library: std::path::PathBuf,
}

impl Serve {
    pub(crate) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("byte strings always serialize")
    }
}

/// A zygote's or forking server's answer to a request: the child's pid (a
/// judge zygote's negative: the errno of a child it could not set up).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Forked {
    pub pid: i32,
}

/// Its word once the child ended: its wait status, and the processor time
/// it used (microseconds) where the zygote measured it.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Ended {
    pub status: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_micros: Option<u64>,
}

impl Forked {
    pub(crate) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a number always serializes")
    }
}

impl Ended {
    pub(crate) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("numbers always serialize")
    }
}

/// Encodes one message as a line.
pub(crate) fn to_line<T: Serialize>(message: &T) -> String {
    let mut line = serde_json::to_string(message).expect("bridge messages always serialize");
    line.push('\n');
    line
}

/// Decodes one message from a line.
pub(crate) fn from_line<T: for<'de> Deserialize<'de>>(line: &str) -> Result<T, String> {
    serde_json::from_str(line.trim_end()).map_err(|e| format!("malformed bridge message: {e}"))
}
