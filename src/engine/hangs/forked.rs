//! Whose trial a forked server serves, where no memory cgroup says it. A
//! forking server forks every trial's server of its implementation, and
//! only the judge that asked learns the pid. But each forked child first
//! joins its trial's space: the tmpfs on that trial's directory shows in
//! its mounts (`/proc/PID/mountinfo`, which any process may read), and in
//! no other trial's.

use std::collections::HashMap;
use std::path::Path;

use crate::bridge::sandbox::proc;

/// A process: its pid and its start (a pid may be used again).
type Known = (libc::pid_t, u64);

/// The forking servers' children found serving a trial, by its id.
#[derive(Default)]
pub(super) struct Forked {
    trial_of: HashMap<Known, usize>,
}

impl Forked {
    /// Looks at the children of `helpers` not yet placed, and places those
    /// whose mounts show one of `trials`' spaces (id, mount point as
    /// `mount_point` writes it). Each is read until placed: a child that has
    /// not joined its space yet is placed at a later look.
    pub(super) fn place(&mut self, helpers: &[libc::pid_t], trials: &[(usize, String)]) {
        let children: Vec<Known> = helpers
            .iter()
            .flat_map(|&helper| {
                let threads = proc::threads(helper);
                threads
                    .into_iter()
                    .flat_map(move |tid| proc::thread_children(helper, tid))
            })
            .filter_map(|pid| Some((pid, proc::stat(pid)?.started)))
            .collect();
        self.trial_of.retain(|known, _| children.contains(known));
        for child in children {
            if self.trial_of.contains_key(&child) {
                continue;
            }
            let Some(mounts) = proc::read_text(format!("/proc/{}/mountinfo", child.0)) else {
                continue;
            };
            let on = |point: &str| {
                mounts
                    .lines()
                    .any(|line| line.split(' ').nth(4) == Some(point))
            };
            if let Some((id, _)) = trials.iter().find(|(_, point)| on(point)) {
                self.trial_of.insert(child, *id);
            }
        }
    }

    /// The servers found forked for trial `id`.
    pub(super) fn of(&self, id: usize) -> Vec<libc::pid_t> {
        let found = self.trial_of.iter().filter(|(_, trial)| **trial == id);
        found.map(|((pid, _), _)| *pid).collect()
    }
}

/// `dir` as `/proc/PID/mountinfo` writes a mount point: absolute, its
/// links resolved, space, tab, newline and backslash in octal.
pub(in crate::engine) fn mount_point(dir: &Path) -> String {
    let dir = std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf());
    let mut point = String::new();
    for c in dir.to_string_lossy().chars() {
        match c {
            ' ' | '\t' | '\n' | '\\' => point.push_str(&format!("\\{:03o}", c as u32)),
            c => point.push(c),
        }
    }
    point
}
