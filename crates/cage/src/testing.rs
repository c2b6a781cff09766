//! What the cage's tests share: a program run in a cage to its end, as a
//! runner would run it, and the processes alive on the machine.

use std::io::Read;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;

use std::path::Path;

use crate::{Cage, Join, Memory, Plan, Space, Stacks};

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
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
    let left = write.as_raw_fd();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    entering(&mut command, space, Entry::Cage(plan, Some(left)));
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
    crate::proc::pids()
        .into_iter()
        .filter_map(|pid| crate::proc::read(format!("/proc/{pid}/cmdline")))
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
    started_entering(sh, script, Entry::Cage(cage.plan(), None)).0
}

/// `sh -c script`, its child entering `entry`, once it has printed its
/// first line: the child, and that line.
pub(crate) fn started_entering(
    sh: &Path,
    script: &str,
    entry: Entry,
) -> (std::process::Child, String) {
    let mut command = Command::new(sh);
    command.args(["-c", script]).stdout(Stdio::piped());
    entering(&mut command, None, entry);
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    (child, line)
}

/// `sh -c script` in `dir`, its child entering `entry`, run to its end
/// with its output read (the spawn's error where its cage failed it).
pub(crate) fn output_entering(
    sh: &Path,
    script: &str,
    dir: &Path,
    entry: Entry,
) -> std::io::Result<std::process::Output> {
    let mut command = Command::new(sh);
    command
        .args(["-c", script])
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    entering(&mut command, None, entry);
    command.spawn().and_then(|c| c.wait_with_output())
}

/// What a test's child enters after joining its space, if any.
pub(crate) enum Entry {
    /// Nothing more (a judge's process of the trial, uncaged).
    Nothing,
    /// The cage of a plan, saying on the descriptor what it left running.
    Cage(Arc<Plan>, Option<RawFd>),
    /// A server's cage, listening on the descriptor.
    Serving(RawFd, Arc<Plan>),
}

/// Makes `command`'s child join `space` and enter `entry` between fork and
/// exec: every test's way in, so the fork's contract is kept in one place.
/// Each `Arc` keeps what the child enters alive until the command is dropped.
pub(crate) fn entering(command: &mut Command, space: Option<Arc<Join>>, entry: Entry) {
    let mut stacks = match &entry {
        Entry::Nothing => Stacks::default(),
        Entry::Cage(plan, _) | Entry::Serving(_, plan) => Stacks::for_plan(plan),
    };
    let hook = move || {
        if let Some(join) = &space {
            crate::space::join_space(join)?;
        }
        match &entry {
            Entry::Nothing => Ok(()),
            Entry::Cage(plan, left) => crate::contain::contain(plan, *left, None, &mut stacks),
            Entry::Serving(listener, plan) => {
                crate::contain::contain(plan, None, Some(*listener), &mut stacks)
            }
        }
    };
    // SAFETY: `hook` makes system calls only (it allocates nothing and takes
    // no lock, as a child of a threaded test process must), on the plan and
    // join its `Arc`s hold, with the `Cage` the caller holds.
    unsafe { command.pre_exec(hook) };
}
