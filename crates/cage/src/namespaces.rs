//! User, mount, PID, IPC (and network) namespaces: made by the child, its
//! ids mapped, its capabilities given up; probes of what the kernel allows.

use std::ffi::CString;

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
    extern "C" fn trampoline(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the `&mut dyn FnMut` below, alive until the
        // clone ends (its parent waits, CLONE_VFORK).
        let work = unsafe { &mut *arg.cast::<&mut dyn FnMut() -> bool>() };
        if work() { 0 } else { 1 }
    }
    let mut stack = vec![0u8; 64 << 10];
    // The stack grows down, from its top, aligned to 16 bytes.
    let top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
    let mut work = work;
    // SAFETY: the child runs `trampoline` on `stack` until it returns; this
    // thread is suspended meanwhile (CLONE_VFORK), so both stay alive.
    let pid = unsafe {
        libc::clone(
            trampoline,
            top as *mut libc::c_void,
            flags | libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD,
            (&raw mut work).cast(),
        )
    };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut status = 0;
    // SAFETY: our own child, ended (CLONE_VFORK): reaped.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
    drop(stack);
    Ok(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0)
}

/// Whether a child, as root, can make a mount namespace (where user
/// namespaces are refused): for a trial's `Space`.
pub(crate) fn mount_namespace_works() -> bool {
    // SAFETY: the child makes only system calls, then exits.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return false;
        }
        if pid == 0 {
            libc::_exit(if libc::unshare(libc::CLONE_NEWNS) == 0 {
                0
            } else {
                1
            });
        }
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0) == pid
            && libc::WIFEXITED(status)
            && libc::WEXITSTATUS(status) == 0
    }
}

/// Whether a child can make user, mount, network and IPC namespaces and map
/// itself in (a fork that tries, then exits).
pub(crate) fn namespaces_work() -> bool {
    let maps = Maps::of_this_process();
    // SAFETY: the child makes only system calls, then exits.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return false;
        }
        if pid == 0 {
            let ok = enter_namespaces(&maps, true).is_ok_and(|made| made)
                && libc::mount(
                    c"none".as_ptr(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) == 0;
            libc::_exit(if ok { 0 } else { 1 });
        }
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0) == pid
            && libc::WIFEXITED(status)
            && libc::WEXITSTATUS(status) == 0
    }
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
pub(crate) unsafe fn enter_namespaces(maps: &Maps, own_net: bool) -> std::io::Result<bool> {
    use rustix::io::Errno;
    use rustix::thread::UnshareFlags;
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
    // SAFETY: no descriptor table is unshared (no `FILES`), so no thread
    // loses a descriptor it holds; this process is single-threaded anyway.
    match unsafe { rustix::thread::unshare_unsafe(flags) } {
        Ok(()) => {}
        Err(Errno::PERM | Errno::INVAL | Errno::NOSPC | Errno::USERS | Errno::NOSYS) => {
            return Ok(false);
        }
        Err(err) => return Err(err.into()),
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
