//! Child processes under limits, for everything fencelab runs that it does not
//! trust to end on its own (cargo, and every test of every implementation).
//!
//! Each child leads a process group of its own, so that a kill reaches whatever
//! it started too: at the deadline the group gets SIGTERM and, shortly after,
//! SIGKILL; when the child has ended, the group gets SIGKILL anyway to take down
//! anything left behind. Output goes to files, not pipes, so nothing waits on a
//! pipe that an orphan holds open, and only the first bytes of it are read back.

use std::fs::File;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a child may use.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Wall-clock time before the group is killed.
    pub time: Option<Duration>,
    /// How much of stdout and of stderr (each) is read back.
    pub output_cap: usize,
    /// The largest file the child may write (RLIMIT_FSIZE), so a flood of output
    /// cannot fill the disk.
    pub file_size: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: None,
            output_cap: 256 * 1024,
            file_size: None,
        }
    }
}

/// How a child ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status, or `None` when it was killed at the deadline.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    /// How many bytes of output were beyond the cap and not read.
    pub dropped: u64,
    pub duration: Duration,
}

impl Finished {
    pub fn timed_out(&self) -> bool {
        self.status.is_none()
    }

    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

/// How long a group has between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_millis(200);

/// Runs `command` to its end or its deadline, with its output in files under
/// `output_dir` (which must exist).
pub fn run(mut command: Command, output_dir: &Path, limits: &Limits) -> std::io::Result<Finished> {
    let out_path = output_dir.join("stdout");
    let err_path = output_dir.join("stderr");
    command
        .stdin(Stdio::null())
        .stdout(File::create(&out_path)?)
        .stderr(File::create(&err_path)?)
        .process_group(0);
    let file_size = limits.file_size;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            if let Some(bytes) = file_size {
                let cap = libc::rlimit {
                    rlim_cur: bytes,
                    rlim_max: bytes,
                };
                libc::setrlimit(libc::RLIMIT_FSIZE, &cap);
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = command.spawn()?;
    let group = child.id() as libc::pid_t;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let waited = match limits.time {
        Some(limit) => rx.recv_timeout(limit).ok(),
        None => rx.recv().ok(),
    };
    let status = match waited {
        Some(status) => Some(status?),
        None => {
            kill_group(group, libc::SIGTERM);
            if rx.recv_timeout(GRACE).is_err() {
                kill_group(group, libc::SIGKILL);
                let _ = rx.recv();
            }
            None
        }
    };
    let duration = start.elapsed();
    // Whatever the child left running in its group goes with it.
    kill_group(group, libc::SIGKILL);
    let (stdout, dropped_out) = read_capped(&out_path, limits.output_cap);
    let (stderr, dropped_err) = read_capped(&err_path, limits.output_cap);
    Ok(Finished {
        status,
        stdout,
        stderr,
        dropped: dropped_out + dropped_err,
        duration,
    })
}

/// Sends `signal` to every process in the group led by `group`.
pub fn kill_group(group: libc::pid_t, signal: libc::c_int) {
    // SAFETY: a plain system call; ESRCH (no such group) is fine.
    unsafe {
        libc::killpg(group, signal);
    }
}

/// The first `cap` bytes of a file as text, and how many bytes were left unread.
fn read_capped(path: &Path, cap: usize) -> (String, u64) {
    let Ok(file) = File::open(path) else {
        return (String::new(), 0);
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut kept = Vec::with_capacity(cap.min(len as usize));
    let _ = file.take(cap as u64).read_to_end(&mut kept);
    let dropped = len.saturating_sub(kept.len() as u64);
    (String::from_utf8_lossy(&kept).into_owned(), dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn a_hang_is_killed_at_the_deadline_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("child-still-running");
        let limits = Limits {
            time: Some(Duration::from_millis(300)),
            ..Limits::default()
        };
        // The child starts a grandchild that would write a file after 1 s.
        let script = format!("(sleep 1; touch {}) & sleep 30", marker.display());
        let finished = run(sh(&script), dir.path(), &limits).unwrap();
        assert!(finished.timed_out());
        assert!(
            finished.duration < Duration::from_secs(5),
            "{:?}",
            finished.duration
        );
        std::thread::sleep(Duration::from_millis(1200));
        assert!(!marker.exists(), "the grandchild was killed with its group");
    }

    #[test]
    fn leftovers_are_killed_when_the_child_ends() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("orphan-ran");
        let script = format!("(sleep 0.5; touch {}) & exit 0", marker.display());
        let finished = run(sh(&script), dir.path(), &Limits::default()).unwrap();
        assert!(finished.success());
        std::thread::sleep(Duration::from_millis(900));
        assert!(!marker.exists(), "the orphan was killed with the group");
    }

    #[test]
    fn output_is_capped_and_a_flood_is_stopped_by_the_file_size_limit() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            output_cap: 100,
            file_size: Some(10_000),
            ..Limits::default()
        };
        let finished = run(sh("yes flood"), dir.path(), &limits).unwrap();
        assert_eq!(finished.stdout.len(), 100);
        assert!(finished.stdout.starts_with("flood\nflood\n"));
        assert!(!finished.success(), "SIGXFSZ or a write error ends it");
        assert!(std::fs::metadata(dir.path().join("stdout")).unwrap().len() <= 10_000);
    }
}
