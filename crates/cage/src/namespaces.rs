//! User, mount, PID, IPC (and network) namespaces: made by the child, its
//! ids mapped, its capabilities given up; probes of what the kernel allows.

use std::ffi::CString;

use rustix::thread::UnshareFlags;

use crate::sys::{self, ForkResult, clone_running, exit_now};

/// Runs `work` in a child that shares this process's memory and descriptor
/// table (`CLONE_VM | CLONE_VFORK | CLONE_FILES`, with `flags`), this
/// thread waiting until it has ended; true if `work` said so. For making a
/// namespace, which needs a process of its own but nothing of this one's: a
/// fork would copy every page table of fencelab's (and fault in each page
/// the runner writes while the copy lives). What `work` opens stays open
/// here. `work` makes only system calls: it runs on a small stack of its
/// own, beside this process's other threads.
pub(crate) fn in_a_clone(
    flags: libc::c_int,
    work: &mut dyn FnMut() -> bool,
) -> std::io::Result<bool> {
    let mut stack = vec![0u8; 64 << 10];
    // The stack grows down, from its top, aligned to 16 bytes.
    let top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
    let mut run = || -> libc::c_int { if work() { 0 } else { 1 } };
    let mut run: &mut dyn FnMut() -> libc::c_int = &mut run;
    let flags = flags | libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD;
    // SAFETY: this thread is suspended until the child ends (CLONE_VFORK),
    // so `stack` and `run` outlive it.
    let pid = unsafe { clone_running(top, flags, &mut run) }?;
    // Our own child, ended (CLONE_VFORK): reaped.
    let pid = rustix::process::Pid::from_raw(pid).expect("a clone's pid");
    let status = loop {
        match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()) {
            Ok(ended) => break ended.map_or(0, |(_, status)| status.as_raw()),
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    };
    drop(stack);
    Ok(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0)
}

/// Runs `work` in a fork of this process, which ends with it: true if it
/// said so. For probing what the kernel allows a child, from a parent that
/// may have threads: `work` makes system calls only.
pub(crate) fn in_a_fork(work: impl FnOnce() -> bool) -> bool {
    let ended = fork_ending(|| if work() { 0 } else { 1 });
    ended.is_some_and(|status| status.exit_status() == Some(0))
}

/// Runs `work` in a fork of this process, which ends with the exit status
/// `work` returns, or as `work` ends it (`die`): its wait status, None
/// where there was no fork to wait for. `work` makes system calls only.
pub(crate) fn fork_ending(
    work: impl FnOnce() -> libc::c_int,
) -> Option<rustix::process::WaitStatus> {
    // SAFETY: the child runs `work`, which makes system calls only, then ends.
    match unsafe { sys::fork() } {
        Ok(ForkResult::Child) => exit_now(work()),
        Ok(ForkResult::Parent { child }) => {
            let pid = rustix::process::Pid::from_raw(child.as_raw()).expect("a fork's pid");
            let waited = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
            waited.ok().flatten().map(|(_, status)| status)
        }
        Err(_) => None,
    }
}

/// Whether a child, as root, can make a mount namespace (where user
/// namespaces are refused): for a trial's `Space`.
pub(crate) fn mount_namespace_works() -> bool {
    in_a_fork(|| sys::unshare(UnshareFlags::NEWNS).is_ok())
}

/// Whether a child can make user, mount, network and IPC namespaces and map
/// itself in (a fork that tries, then exits).
pub(crate) fn namespaces_work() -> bool {
    let maps = Maps::of_this_process();
    in_a_fork(|| {
        enter_namespaces(&maps, true).is_ok_and(|made| made)
            && rustix::mount::mount_change(
                c"/",
                rustix::mount::MountPropagationFlags::REC
                    | rustix::mount::MountPropagationFlags::PRIVATE,
            )
            .is_ok()
    })
}

/// The user and group maps a child writes for itself in its new user
/// namespace: fencelab's own ids, or 65534 (nobody) in place of root.
pub(crate) struct Maps {
    uid: CString,
    gid: CString,
}

impl Maps {
    pub(crate) fn of_this_process() -> Maps {
        let (uid, gid) = (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw(),
        );
        let inside = |id: u32| if id == 0 { 65534 } else { id };
        Maps {
            uid: CString::new(format!("{} {uid} 1", inside(uid))).expect("no NUL"),
            gid: CString::new(format!("{} {gid} 1", inside(gid))).expect("no NUL"),
        }
    }
}

/// Unshares the namespaces (a network namespace too when `own_net`) and
/// writes the maps; false when the kernel refuses unprivileged user
/// namespaces. Child side: system calls only.
pub(crate) fn enter_namespaces(maps: &Maps, own_net: bool) -> std::io::Result<bool> {
    use rustix::io::Errno;
    let mut flags =
        UnshareFlags::NEWUSER | UnshareFlags::NEWNS | UnshareFlags::NEWIPC | UnshareFlags::NEWPID;
    if own_net {
        flags |= UnshareFlags::NEWNET;
    }
    // The judge makes itself not dumpable (client.rs), and a fork keeps
    // that; a process that is not dumpable has its /proc/self files owned
    // by root, so a user other than root could not write its own maps
    // (EACCES: no cage started for anyone running fencelab unprivileged).
    // This child's memory is a copy of the judge's only until its exec,
    // and the namespaces' init makes itself not dumpable again.
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::Dumpable);
    match sys::unshare(flags) {
        Ok(()) => {}
        Err(err)
            if [
                Errno::PERM,
                Errno::INVAL,
                Errno::NOSPC,
                Errno::USERS,
                Errno::NOSYS,
            ]
            .map(Errno::raw_os_error)
            .contains(&err.raw_os_error().unwrap_or(0)) =>
        {
            return Ok(false);
        }
        Err(err) => return Err(err),
    }
    write_file(c"/proc/self/setgroups", c"deny")?;
    write_file(c"/proc/self/uid_map", &maps.uid)?;
    write_file(c"/proc/self/gid_map", &maps.gid)?;
    Ok(true)
}

/// Writes `text` to the file at `path`, whole, in one write (as `/proc`'s
/// maps need). System calls only.
pub(crate) fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    let bytes = text.to_bytes();
    if rustix::io::write(&fd, bytes)? != bytes.len() {
        return Err(std::io::Error::from(std::io::ErrorKind::WriteZero));
    }
    Ok(())
}

impl std::fmt::Debug for Maps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Maps({:?}, {:?})", self.uid, self.gid)
    }
}

/// Gives up every capability: the creator of a user namespace holds them
/// all in it, and a program that is not executed (a Python server forked
/// per trial) keeps them, where an executed one loses them.
pub(crate) fn drop_capabilities() -> std::io::Result<()> {
    use rustix::thread::{CapabilitySet, CapabilitySets};
    // The bounding set first: dropping it needs CAP_SETPCAP. A number
    // past the kernel's last capability is refused, and harmless.
    for cap in 0..64 {
        let one = CapabilitySet::from_bits_retain(1 << cap);
        let _ = rustix::thread::remove_capability_from_bounding_set(one);
    }
    let _ = rustix::thread::clear_ambient_capability_set();
    let none = CapabilitySet::empty();
    let sets = CapabilitySets {
        effective: none,
        permitted: none,
        inheritable: none,
    };
    rustix::thread::set_capabilities(None, sets)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// What probing the namespaces costs (a fork that tries them):
    /// `cargo test -p fencelab-cage probe_cost -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn probe_cost() {
        let start = std::time::Instant::now();
        for _ in 0..200 {
            super::namespaces_work();
        }
        println!("probe: {:?}", start.elapsed() / 200);
    }
}
