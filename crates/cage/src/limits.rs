//! Resource limits every caged process gets (rlimits): address space, core
//! dumps and processes.

/// The largest address space an implementation may map.
const ADDRESS_SPACE: u64 = 4 << 30;
/// The most processes (and threads) the user may have once it runs. The
/// kernel exempts root's own uid, so this binds no one when fencelab runs as
/// root.
const PROCESSES: u64 = 8192;

/// The limits every caged process gets; each also dies with its parent.
pub(crate) fn limit() {
    use rustix::process::{Resource, Rlimit};
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    let set = |resource, value: u64| {
        let limit = Rlimit {
            current: Some(value),
            maximum: Some(value),
        };
        let _ = rustix::process::setrlimit(resource, limit);
    };
    set(Resource::Core, 0);
    set(Resource::As, ADDRESS_SPACE);
    set(Resource::Nproc, PROCESSES);
}
