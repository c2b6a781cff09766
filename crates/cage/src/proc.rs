//! Every read of `/proc` by fencelab's processes: the cage's, the bridge's and
//! the engine's. A process read may be a learner's, so each read is capped
//! (`Read::take`), never follows a link at its end, and a stat's name (in
//! parentheses, any bytes the program chose) cannot shift the fields after it.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The most bytes read of one file: a process's command line and environment
/// together are at most 6 MiB when it starts (the kernel's `_STK_LIM / 4 * 3`).
pub const CAP: u64 = 8 << 20;

/// The bytes of the file at `path` under `/proc`, the first `CAP` of them;
/// None where it cannot be opened or read, or is a link.
pub fn read(path: impl AsRef<Path>) -> Option<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let mut bytes = Vec::new();
    file.take(CAP).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// `read`, as text (None where it is not UTF-8).
pub fn read_text(path: impl AsRef<Path>) -> Option<String> {
    String::from_utf8(read(path)?).ok()
}

/// The pids of the processes `/proc` lists now.
pub fn pids() -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&pid: &libc::pid_t| pid > 0)
        .collect()
}

/// What `/proc/PID/stat` says of a process (fields numbered as proc(5)
/// numbers them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// Field 2, between its parentheses: the thread's name, any bytes.
    pub name: Vec<u8>,
    /// Field 3: `R` running, `Z` a zombie, `X` dead, ...
    pub state: char,
    /// Fields 4 and 5.
    pub ppid: libc::pid_t,
    pub pgrp: libc::pid_t,
    /// Fields 14 to 17, in clock ticks: its own user and system time, and
    /// its reaped children's.
    pub times: [u64; 4],
    /// Field 22: when it started, in clock ticks since boot.
    pub started: u64,
    /// Fields 48 to 51: where its command line and its environment lie in
    /// its memory (zeros where the kernel does not show them).
    pub arguments: (usize, usize),
    pub environment: (usize, usize),
}

impl Stat {
    /// The stat in `bytes`; None where it is not one. The fields are those
    /// after the last `)`, since the name may hold any byte, `)` included.
    pub fn parse(bytes: &[u8]) -> Option<Stat> {
        let close = bytes.iter().rposition(|&b| b == b')')?;
        let open = bytes[..close].iter().position(|&b| b == b'(')?;
        let rest = std::str::from_utf8(&bytes[close + 1..]).ok()?;
        let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
        // Field 3 (the state) is the first after the name.
        let field = |n: usize| fields.get(n - 3).copied();
        let number = |n: usize| field(n)?.parse::<u64>().ok();
        let place = |n: usize| number(n).and_then(|v| usize::try_from(v).ok()).unwrap_or(0);
        let times = [number(14)?, number(15)?, number(16)?, number(17)?];
        Some(Stat {
            name: bytes[open + 1..close].to_vec(),
            state: field(3)?.chars().next()?,
            ppid: field(4)?.parse().ok()?,
            pgrp: field(5)?.parse().ok()?,
            times,
            started: number(22)?,
            arguments: (place(48), place(49)),
            environment: (place(50), place(51)),
        })
    }

    /// Whether the process is still running (not a zombie, not dead).
    pub fn live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }
}

/// The stat of the process `pid`.
pub fn stat(pid: libc::pid_t) -> Option<Stat> {
    Stat::parse(&read(format!("/proc/{pid}/stat"))?)
}

/// The stat of this process.
pub fn own_stat() -> Option<Stat> {
    Stat::parse(&read("/proc/self/stat")?)
}

/// The `/proc/PID/status` of a process: lines of `Name:\tvalue`.
pub struct Status(String);

impl Status {
    /// The value of the line `name` (without its colon), trimmed.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.0.lines().find_map(|line| {
            let value = line.strip_prefix(name)?.strip_prefix(':')?;
            Some(value.trim())
        })
    }
}

/// The status of the process `pid` (its name's bytes that are not UTF-8
/// replaced: the program chose them).
pub fn status(pid: libc::pid_t) -> Option<Status> {
    let bytes = read(format!("/proc/{pid}/status"))?;
    Some(Status(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The children of the thread `tid` of the process `pid`.
pub fn thread_children(pid: libc::pid_t, tid: libc::pid_t) -> Vec<libc::pid_t> {
    numbers(&format!("/proc/{pid}/task/{tid}/children"))
}

/// The children of every thread of the process `pid`.
pub fn children(pid: libc::pid_t) -> Vec<libc::pid_t> {
    threads(pid)
        .into_iter()
        .flat_map(|tid| thread_children(pid, tid))
        .collect()
}

/// The threads of the process `pid`.
pub fn threads(pid: libc::pid_t) -> Vec<libc::pid_t> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
    tasks
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| task.file_name().to_str()?.parse().ok())
        .collect()
}

/// The stat of the thread `tid` of the process `pid`.
pub fn thread_stat(pid: libc::pid_t, tid: libc::pid_t) -> Option<Stat> {
    Stat::parse(&read(format!("/proc/{pid}/task/{tid}/stat"))?)
}

/// How long the thread `tid` of the process `pid` has run on a processor,
/// and waited for one, in nanoseconds (its `schedstat`).
pub fn thread_run_time(pid: libc::pid_t, tid: libc::pid_t) -> Option<(u64, u64)> {
    let sched = read_text(format!("/proc/{pid}/task/{tid}/schedstat"))?;
    let mut fields = sched.split_whitespace().map(|n| n.parse().ok());
    Some((fields.next()??, fields.next()??))
}

/// The numbers in the file at `path`, separated by white space.
fn numbers(path: &str) -> Vec<libc::pid_t> {
    let list = read_text(path).unwrap_or_default();
    list.split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect()
}

/// The environment of the process `pid`: its `NAME=value` strings.
pub fn environ(pid: libc::pid_t) -> Option<Vec<Vec<u8>>> {
    let bytes = read(format!("/proc/{pid}/environ"))?;
    Some(bytes.split(|&b| b == 0).map(<[u8]>::to_vec).collect())
}

/// The working directory of the process `pid` (the link's target, which is
/// read, not followed).
pub fn cwd(pid: libc::pid_t) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

/// This process's namespace `kind` (`user`, `mnt`, `net`, ...), opened: a
/// handle to join or compare, the one link here followed, by design.
pub fn own_namespace(kind: &str) -> std::io::Result<std::fs::File> {
    std::fs::File::open(format!("/proc/self/ns/{kind}"))
}

/// This process's open descriptors and what each names (`pipe:[...]`, a
/// path). The directory's own descriptor is closed before the links are
/// read, so it is not among them.
pub fn own_descriptors() -> Vec<(std::os::fd::RawFd, PathBuf)> {
    let listed: Vec<(std::os::fd::RawFd, PathBuf)> = match std::fs::read_dir("/proc/self/fd") {
        Ok(dir) => dir
            .flatten()
            .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path())))
            .collect(),
        Err(_) => Vec::new(),
    };
    let mut open: Vec<_> = listed
        .into_iter()
        .filter_map(|(fd, path)| Some((fd, std::fs::read_link(path).ok()?)))
        .collect();
    open.sort();
    open
}

#[cfg(test)]
mod tests;
