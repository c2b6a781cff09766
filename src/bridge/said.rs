//! What fencelab says of an implementation's end or a trial's, as data: one
//! `Said` per sentence, worded only by `output` (and here in English, for
//! reports). A judge writes each as a marked line of JSON carrying its
//! trial's key; the runner keeps only lines with that key (`vouch`), so
//! nothing an implementation or a learner's test prints reads as fencelab's.
//! Compiled into the scratch bridge crate too: it names only `serde` and `libc`.

use serde::{Deserialize, Serialize};

/// The name of the environment variable that holds a trial's key: a judge
/// marks its lines with it. An implementation's server never has it.
pub(crate) const KEY_ENV: &str = "FENCELAB_SAID_KEY";

/// What starts a marked line: a control character no sentence holds, which
/// `vouch` escapes wherever else it is found.
const MARK: char = '\u{1}';

/// One sentence of fencelab's about a test's end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Said {
    /// The implementation's process ended during a call of `call`.
    ProcessEnded { call: String, how: How },
    /// The judge could not start the implementation's process.
    CouldNotStart { why: String },
    /// The implementation's process took the judge down with it.
    TookJudgeDown { how: How },
    /// Only the first `kib` KiB of each of its streams were kept.
    StreamsCut { kib: u64, dropped: u64 },
    /// A panic (Rust) or an exception (Python, `panicked` false) in `call`.
    FailedInCall {
        call: String,
        at: Option<String>,
        panicked: bool,
    },
    /// An error of a variant the contract lacks; `valid` where Python
    /// raised a `ValueError` although every argument was valid.
    NotInContract { error: String, valid: bool },
    /// Processes left running after the test, killed.
    LeftRunning { who: Who },
    /// More than `mib` MiB written in the trial's directory.
    SpaceUsedUp { who: Who, mib: u64 },
    /// More than `mib` MiB of memory, killed by the kernel.
    OutOfMemory { who: Who, mib: u64 },
    /// The judge's output beyond its cap.
    OutputDropped { bytes: u64 },
    /// The wall-clock limit.
    TimedOut { secs: f64 },
    /// Processor time before an answer (it spins).
    Spun { secs: f64 },
    /// Waiting with none of its processes running.
    Waited { secs: f64 },
    /// Stopped again when run alone.
    Confirmed,
    /// The judge exited with success without a verdict.
    NoVerdict,
    /// The judge ended with `status` (as Rust shows it) and said nothing.
    SaidNothing { status: String },
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum How {
    Exited {
        code: i32,
    },
    Signal {
        signal: i32,
    },
    /// It printed more than `mib` MiB on `streams` ("stdout", "stderr").
    Flooded {
        mib: u64,
        streams: Vec<String>,
    },
    /// It sent an answer longer than the judge reads.
    AnswerTooLong {
        mib: u64,
    },
    /// The connection failed for `why` (the system's words).
    StoppedAnswering {
        why: String,
    },
    /// Neither an exit nor a signal (as Rust shows the status).
    Ended {
        status: String,
    },
}

/// Whose doing it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Who {
    Implementation,
    Test,
}

impl Said {
    /// The line a judge writes: marked with its trial's key, or in English
    /// where it has none (a judge run by hand).
    pub(crate) fn line(&self) -> String {
        match std::env::var(KEY_ENV) {
            Ok(key) if !key.is_empty() => format!("{MARK}said {key}{MARK}{}", self.json()),
            _ => self.to_string(),
        }
    }

    /// The line as fencelab keeps it in a message, vouched for.
    pub(crate) fn marked(&self) -> String {
        format!("{MARK}said{MARK}{}", self.json())
    }

    fn json(&self) -> String {
        serde_json::to_string(self).expect("a Said always serializes")
    }

    /// The value of a line `marked` made (indented or not); None for any
    /// other line.
    pub(crate) fn read(line: &str) -> Option<Said> {
        let json = line.trim_start_matches(' ').strip_prefix(MARK)?;
        serde_json::from_str(json.strip_prefix("said")?.strip_prefix(MARK)?).ok()
    }
}

/// A judge's `text` as fencelab keeps it: each line marked with `key` whose
/// value decodes becomes `marked`; every other mark is escaped, so it shows
/// as the learner's own text and is never read as fencelab's. A marked line
/// may be indented: a child process's message within an observed value.
pub(crate) fn vouch(text: &str, key: &str) -> String {
    let head = format!("{MARK}said {key}{MARK}");
    screen(text, |body| {
        let said = (!key.is_empty())
            .then(|| body.strip_prefix(&head))
            .flatten()
            .and_then(|json| serde_json::from_str::<Said>(json).ok());
        said.map(|said| said.marked())
    })
}

/// A message `marked` made, read back from a report (input, perhaps from
/// another machine): as `vouch` keeps it, a line that decodes left as it is.
pub(crate) fn reread(text: &str) -> String {
    screen(text, |body| Said::read(body).map(|_| body.to_string()))
}

/// `text` with each line that `keep` keeps (given it unindented) kept, and
/// every mark of every other line escaped.
fn screen(text: &str, keep: impl Fn(&str) -> Option<String>) -> String {
    text.split('\n')
        .map(|line| {
            let body = line.trim_start_matches(' ');
            match keep(body) {
                Some(kept) => format!("{}{kept}", &line[..line.len() - body.len()]),
                None => line.replace(MARK, "\\u{1}"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with each marked line worded by `word`; every other line as it is.
pub(crate) fn word_each(text: &str, word: impl Fn(&Said) -> String) -> String {
    text.split('\n')
        .map(|line| match Said::read(line) {
            Some(said) => {
                let indent = line.len() - line.trim_start_matches(' ').len();
                format!("{}{}", &line[..indent], word(&said))
            }
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The values of `text`'s marked lines, in order.
pub(crate) fn all(text: &str) -> Vec<Said> {
    text.split('\n').filter_map(Said::read).collect()
}

/// The implementation's function, as a message names it.
fn called(call: &str) -> String {
    format!("{call}()")
}

impl std::fmt::Display for How {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            How::Exited { code } => write!(f, "exited with status {code}"),
            How::Signal { signal } => {
                write!(
                    f,
                    "was killed by signal {signal} ({})",
                    signal_name(*signal)
                )
            }
            How::Flooded { mib, streams } => write!(
                f,
                "printed more than {mib} MiB on {} and was killed",
                streams.join(" and ")
            ),
            How::AnswerTooLong { mib } => write!(
                f,
                "stopped answering (it sent an answer of more than {mib} MiB)"
            ),
            How::StoppedAnswering { why } => write!(f, "stopped answering ({why})"),
            How::Ended { status } => write!(f, "ended ({status})"),
        }
    }
}

/// A signal's name, and what it means where a learner can act on it.
pub(crate) fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGABRT => "SIGABRT: an abort, such as a stack overflow",
        libc::SIGSEGV => "SIGSEGV: an invalid memory access",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGXFSZ => "SIGXFSZ: it wrote more than the file size limit",
        libc::SIGXCPU => "SIGXCPU: it used more than the CPU time limit",
        _ => "a signal",
    }
}

impl Who {
    pub(crate) fn english(self) -> &'static str {
        match self {
            Who::Implementation => "the implementation",
            Who::Test => "the test",
        }
    }
}

/// English, for reports and for a judge run by hand (`output` words every
/// variant for screens, in either language).
impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const PROCESS: &str = "fencelab: the implementation's process";
        match self {
            Said::ProcessEnded { call, how } => {
                write!(f, "{PROCESS} {how} during {}", called(call))
            }
            Said::CouldNotStart { why } => write!(f, "{PROCESS} could not start: {why}"),
            Said::TookJudgeDown { how } => {
                write!(f, "{PROCESS} took the judge down: the judge {how}")
            }
            Said::StreamsCut { kib, dropped } => write!(
                f,
                "(the first {kib} KiB of each of its streams are shown above; {dropped} more bytes were dropped)"
            ),
            Said::FailedInCall { call, at, panicked } => {
                let verb = if *panicked { "panicked" } else { "failed" };
                let at = at.as_ref().map(|a| format!(" at {a}")).unwrap_or_default();
                write!(
                    f,
                    "fencelab: the implementation {verb} in {}{at}:",
                    called(call)
                )
            }
            Said::NotInContract { error, valid } => {
                let valid = if *valid {
                    " (raised although every argument is valid)"
                } else {
                    ""
                };
                write!(
                    f,
                    "the implementation returned an error the contract does not have: {error}{valid}"
                )
            }
            Said::LeftRunning {
                who: Who::Implementation,
            } => write!(
                f,
                "fencelab: the implementation left processes running after the test; they were killed"
            ),
            Said::LeftRunning { who: Who::Test } => write!(
                f,
                "fencelab: the test left processes running after it ended; they were killed"
            ),
            Said::SpaceUsedUp { who, mib } => write!(
                f,
                "fencelab: {} wrote more than {mib} MiB (or too many files) in the trial's \
                 directory; what it wrote beyond that was refused",
                who.english()
            ),
            Said::OutOfMemory { who, mib } => write!(
                f,
                "fencelab: {} ran out of memory: its processes used more than {mib} MiB together, \
                 and the kernel killed them",
                who.english()
            ),
            Said::OutputDropped { bytes } => {
                write!(f, "[... {bytes} more bytes of output dropped]")
            }
            Said::TimedOut { secs } => write!(
                f,
                "the test did not finish within its limit of {secs:.1} s and was killed"
            ),
            Said::Spun { secs } => write!(
                f,
                "the implementation used more than {secs:.1} s of processor time before it \
                 answered (it spins) and was stopped"
            ),
            Said::Waited { secs } => write!(
                f,
                "the test waited {secs:.1} s in all with none of its processes running \
                 (a sleep, or a lock nobody lets go) and was stopped"
            ),
            Said::Confirmed => write!(
                f,
                "confirmed: run again alone after the other tests, it was stopped again"
            ),
            Said::NoVerdict => write!(
                f,
                "the judge exited with success but did not report the test as passed"
            ),
            Said::SaidNothing { status } => {
                write!(f, "the judge ended with {status} and said nothing")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended() -> Said {
        Said::ProcessEnded {
            call: "claim".to_string(),
            how: How::Exited { code: 1 },
        }
    }

    /// A judge's line with its trial's key is fencelab's, indented or not;
    /// with another key, none, or a body that does not decode, it is the
    /// learner's text, escaped, never dropped.
    #[test]
    fn only_a_line_with_the_trials_key_is_vouched_for() {
        let json = serde_json::to_string(&ended()).unwrap();
        let judge = |key: &str| format!("{MARK}said {key}{MARK}{json}");
        let text = [
            judge("k1"),
            format!("    {}", judge("k1")),
            judge("k2"),
            ended().marked(),
            format!("{MARK}said k1{MARK}{{\"Nonsense\":1}}"),
            "plain".to_string(),
        ]
        .join("\n");
        let kept = vouch(&text, "k1");
        assert_eq!(all(&kept), [ended(), ended()]);
        let lines: Vec<&str> = kept.lines().collect();
        assert_eq!(lines[1], format!("    {}", ended().marked()));
        assert_eq!(lines[2], format!("\\u{{1}}said k2\\u{{1}}{json}"));
        assert_eq!(lines[3], format!("\\u{{1}}said\\u{{1}}{json}"));
        assert!(lines[4].starts_with("\\u{1}said k1\\u{1}{"), "{}", lines[4]);
        assert_eq!(lines[5], "plain");
        // Without a key nothing is vouched for.
        assert!(all(&vouch(&text, "")).is_empty());
    }

    /// The shape `python/lease_proxy.py` and `fencelab_server.py` write.
    #[test]
    fn pythons_json_is_a_said() {
        let json = r#"{"ProcessEnded": {"call": "lease.claim", "how": {"StoppedAnswering": {"why": "x"}}}}"#;
        let said: Said = serde_json::from_str(json).unwrap();
        assert_eq!(
            said.to_string(),
            "fencelab: the implementation's process stopped answering (x) during lease.claim()"
        );
    }

    #[test]
    fn a_marked_line_reads_back_as_its_value_and_words_in_place() {
        let text = format!("before\n  {}\nafter", ended().marked());
        assert_eq!(all(&text), [ended()]);
        assert_eq!(
            word_each(&text, |s| format!("<{s}>")),
            "before\n  <fencelab: the implementation's process exited with status 1 during claim()>\nafter"
        );
    }
}
