//! Resource limits every caged process gets (rlimits): address space, core
//! dumps and processes.

/// The largest address space an implementation may map.
const ADDRESS_SPACE: u64 = 4 << 30;
/// The most processes (and threads) the user may have once it runs. The
/// kernel exempts root's own uid, so this binds no one when fencelab runs as
/// root.
const PROCESSES: u64 = 8192;

/// The limits every caged process gets; each also dies with its parent.
pub(crate) unsafe fn limit() {
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        let set = |resource, value: u64| {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            libc::setrlimit(resource, &limit);
        };
        set(libc::RLIMIT_CORE, 0);
        set(libc::RLIMIT_AS, ADDRESS_SPACE);
        set(libc::RLIMIT_NPROC, PROCESSES);
    }
}
