//! The cage's new root: a tmpfs on a stage in the trial's directory, the
//! places it may see bound into it, `/proc`, then `pivot_root`.

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::landlock::scopes_abstract_sockets;
use crate::namespaces::{Maps, write_file};
use crate::net::closed_network;
use crate::place::Place;

/// One more than the most processes and threads a cage's PID namespace may
/// hold at once (its `pid_max`; the kernel's least is 301).
const PIDS: &std::ffi::CStr = c"2048";

/// The directory, in the trial's, on which the new root is built (it stays
/// there, empty, in the trial's directory as the code sees it).
const STAGE: &str = ".fencelab-root";

/// A mount namespace's new root: a tmpfs mounted on a directory in the
/// trial's (`stage`, so that it hides nothing that is bound), the places the
/// code may see bound into it at their own paths, then made the root.
#[derive(Debug)]
pub(crate) struct Root {
    pub(crate) maps: Maps,
    /// Whether the cage makes a network namespace of its own: not where it
    /// starts in a closed one (a `Net`) and Landlock keeps abstract sockets
    /// in (`shares_net`).
    pub(crate) own_net: bool,
    pub(crate) stage: CString,
    /// The trial's directory, where the code starts.
    pub(crate) work: CString,
    /// Directories to create in the stage (relative, parents first).
    pub(crate) dirs: Vec<CString>,
    /// Empty files to create in the stage, to bind files over.
    pub(crate) files: Vec<CString>,
    /// Symbolic links to create: (its text, where).
    pub(crate) links: Vec<(CString, CString)>,
    /// Bind mounts: (the source, where in the stage, whether recursive). By
    /// path: a descriptor opened in the parent's mount namespace cannot be
    /// bound from in the child's.
    pub(crate) binds: Vec<(CString, CString, bool)>,
    /// Where `/proc` goes in the stage, when it is shown: a fresh one of the
    /// cage's PID namespace (or, where the kernel refuses to mount one, the
    /// machine's, bound).
    pub(crate) proc: Option<CString>,
    /// The command line's and the environment's bytes in this process's
    /// memory (from `/proc/self/stat`): the cage's init, a fork that never
    /// executes anything, wipes them, so that its `/proc/1/cmdline` says
    /// nothing of fencelab's.
    pub(crate) scrub: [(usize, usize); 2],
}

/// The new root: every opened place bound at its own path in the stage.
pub(crate) fn root_plan(
    writable: &Path,
    opened: &[(PathBuf, Place, Option<OwnedFd>, Option<PathBuf>)],
) -> Option<Root> {
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut files = Vec::new();
    let mut links = Vec::new();
    let mut binds = Vec::new();
    let mut proc = None;
    let make_dir = |dir: &Path, dirs: &mut Vec<PathBuf>| {
        for ancestor in dir.ancestors().collect::<Vec<_>>().into_iter().rev() {
            let rel = ancestor.strip_prefix("/").unwrap_or(ancestor);
            if !rel.as_os_str().is_empty() && !dirs.iter().any(|d| d == rel) {
                dirs.push(rel.to_path_buf());
            }
        }
    };
    for (path, place, fd, link) in opened {
        let rel = path.strip_prefix("/").unwrap_or(path);
        if let Some(parent) = path.parent() {
            make_dir(parent, &mut dirs);
        }
        if let Some(text) = link {
            links.push((c(text)?, c(rel)?));
            continue;
        }
        if *place == Place::Shown {
            make_dir(path, &mut dirs);
            proc = Some(c(rel)?);
            continue;
        }
        if fd.is_none() {
            continue;
        }
        if path.is_dir() {
            make_dir(path, &mut dirs);
        } else {
            files.push(c(rel)?);
        }
        // Not the trial's directory's own submounts: the stage is one.
        let recursive = path != writable;
        binds.push((c(path)?, c(rel)?, recursive));
    }
    Some(Root {
        maps: Maps::of_this_process(),
        own_net: !(closed_network() && scopes_abstract_sockets()),
        stage: c(&writable.join(STAGE))?,
        work: c(writable)?,
        dirs: dirs.iter().map(|d| c(d)).collect::<Option<_>>()?,
        files,
        links,
        binds,
        proc,
        scrub: arguments_and_environment(),
    })
}

/// Where this process's command line and environment lie in its memory
/// (fields 48 to 51 of `/proc/self/stat`); nothing where it cannot tell.
fn arguments_and_environment() -> [(usize, usize); 2] {
    let Some(stat) = crate::proc::own_stat() else {
        return [(0, 0); 2];
    };
    let range = |(start, end)| if start < end { (start, end) } else { (0, 0) };
    [range(stat.arguments), range(stat.environment)]
}

/// The init's work before the program: the new root built (a tmpfs on the
/// stage, every place bound in it, /proc), made the root, the old one gone,
/// and the trial's directory the working one. System calls only.
pub(crate) fn build_root(root: &Root) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    use rustix::mount::{MountFlags, MountPropagationFlags, UnmountFlags};
    let made = |result: rustix::io::Result<()>| match result {
        Err(rustix::io::Errno::EXIST) => Ok(()),
        other => other,
    };
    rustix::mount::mount_change(
        c"/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )?;
    made(rustix::fs::mkdir(root.stage.as_c_str(), Mode::RWXU))?;
    let (hidden, sealed) = (MountFlags::NOSUID | MountFlags::NODEV, MountFlags::NOEXEC);
    let stage = root.stage.as_c_str();
    rustix::mount::mount(c"fencelab", stage, c"tmpfs", hidden, c"size=64k,mode=755")?;
    rustix::process::chdir(stage)?;
    for dir in &root.dirs {
        made(rustix::fs::mkdir(
            dir.as_c_str(),
            Mode::from_raw_mode(0o755),
        ))?;
    }
    for file in &root.files {
        let flags = OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC;
        drop(rustix::fs::open(
            file.as_c_str(),
            flags,
            Mode::from_raw_mode(0o644),
        )?);
    }
    for (text, at) in &root.links {
        rustix::fs::symlink(text.as_c_str(), at.as_c_str())?;
    }
    for (source, at, recursive) in &root.binds {
        let (source, at) = (source.as_c_str(), at.as_c_str());
        if *recursive {
            rustix::mount::mount_bind_recursive(source, at)?;
        } else {
            rustix::mount::mount_bind(source, at)?;
        }
    }
    if let Some(proc) = &root.proc {
        // A /proc of the namespace's own (before the old root goes: the
        // kernel mounts one only where the machine's is fully visible).
        let proc = proc.as_c_str();
        if rustix::mount::mount(c"proc", proc, c"proc", hidden | sealed, None).is_ok() {
            // Linux 6.14+: no more than this many processes and threads
            // in the namespace, whoever runs them (root included).
            let _ = write_file(c"proc/sys/kernel/pid_max", PIDS);
        } else {
            rustix::mount::mount_bind_recursive(c"/proc", proc)?;
        }
    }
    // The stage becomes the root; the old root goes, /proc with it.
    rustix::process::pivot_root(c".", c".")?;
    rustix::mount::unmount(c".", UnmountFlags::DETACH)?;
    let read_only = MountFlags::BIND | MountFlags::RDONLY | hidden;
    rustix::mount::mount_remount(c"/", read_only, c"")?;
    rustix::process::chdir(root.work.as_c_str())?;
    Ok(())
}
