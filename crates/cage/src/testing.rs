//! What the cage's tests share: a program run in a cage to its end, as a
//! runner would run it, and the processes alive on the machine.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;

use std::path::Path;

use crate::{Cage, Join, Memory, Plan, Space};

/// How a caged program ended, and what it printed.
#[derive(Debug)]
pub(crate) struct Finished {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    /// The cage said the program left processes running when it ended.
    pub left_behind: bool,
}

impl Finished {
    pub(crate) fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

/// `command` run in the cage `plan` (joining `space` first), to its end.
pub(crate) fn run(mut command: Command, plan: Arc<Plan>, space: Option<Arc<Join>>) -> Finished {
    let mut fds = [-1; 2];
    // SAFETY: fills the two descriptors of a new pipe, ours from here on.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both were just opened, and are ours.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let left = write.as_raw_fd();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: only system calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if let Some(join) = &space {
                crate::join(join)?;
            }
            crate::enter(&plan, Some(left))
        });
    }
    let output = command.output().unwrap();
    drop(write);
    let mut said = Vec::new();
    std::fs::File::from(read).read_to_end(&mut said).unwrap();
    Finished {
        status: Some(output.status),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        left_behind: !said.is_empty(),
    }
}

/// The command lines of the live processes that contain `pattern`.
pub(crate) fn live(pattern: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(pattern))
        .collect()
}

/// `script` run by sh in a cage whose trial directory is `trial`/tmp.
pub(crate) fn caged(trial: &Path, script: &str) -> Finished {
    caged_in(trial, script, None, None)
}

/// `caged`, in `space` when given, and bounded by `memory`.
pub(crate) fn caged_in(
    trial: &Path,
    script: &str,
    memory: Option<&Memory>,
    space: Option<&Space>,
) -> Finished {
    let tmp = trial.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let sh = &std::fs::canonicalize("/bin/sh").unwrap();
    let cage = Cage::new(&tmp, sh, &[]).within(space).bounded(memory);
    let mut command = Command::new(sh);
    command.args(["-c", script]).current_dir(&tmp).env_clear();
    run(command, cage.plan(), space.map(Space::join))
}

/// `script` started by `sh` in `cage`, once it has printed its first
/// line (it says so when what it starts is running).
pub(crate) fn started(cage: &Cage, sh: &Path, script: &str) -> std::process::Child {
    let plan = cage.plan();
    let mut command = Command::new(sh);
    command.args(["-c", script]).stdout(Stdio::piped());
    // SAFETY: only system calls between fork and exec.
    unsafe {
        command.pre_exec(move || crate::enter(&plan, None));
    }
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    child
}
