//! A trial's space: its directory as a tmpfs of its own, bounded in bytes
//! and files, in a mount namespace every process of the trial joins.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use rustix::thread::move_into_link_name_space;

use crate::descriptors::borrowed;
use crate::layers::Layers;
use crate::namespaces::{in_a_clone, write_file};
use crate::net::Net;
use crate::place::absolute;
use crate::sys;

/// The most a trial's directory may hold, every file together (a tmpfs of
/// its own, `Space`): twice the largest file a trial may write (256 MiB,
/// `engine::runner`), a hundred times what a test's database needs.
pub const SPACE: u64 = 512 << 20;
/// The most files (and directories) a trial's directory may hold.
const SPACE_FILES: u64 = 16_384;

/// A trial's directory as a tmpfs of its own, at most `SPACE` bytes and
/// `SPACE_FILES` files, in a mount namespace of its own, owned by a user
/// namespace: its `Net`'s when it has one, else one of its own. A clone of
/// ours makes both and ends (`in_a_clone`); descriptors hold them. Every
/// process of the trial joins that namespace (`Space::join`): the judge
/// (caged or not), the server the runner starts; a cage's own mount
/// namespace is then made from it, so all of them see the same files.
/// Nothing outside sees the tmpfs; it goes when the last descriptor and
/// process in the namespace do.
///
/// A memory cgroup alone would not do. It charges a cage's written pages only
/// where the trial's directory is a tmpfs (`/dev/shm`): a `TMPDIR` on a disk
/// is written back and freed. It charges only what the cage itself
/// writes, not the trusted server a learner's tests drive. And it ends in the
/// OOM killer, which reads as memory, not space.
pub struct Space {
    _user: Option<OwnedFd>,
    _net: Option<OwnedFd>,
    _mount: OwnedFd,
    /// The tmpfs's root, opened in the new namespace.
    pub(crate) root: OwnedFd,
    pub(crate) join: Arc<Join>,
}

/// What a child does to join a trial's `Space` (descriptors held open by it).
#[derive(Debug)]
pub struct Join {
    pub(crate) user: Option<RawFd>,
    /// The trials' `Net`, joined after its user namespace.
    pub(crate) net: Option<RawFd>,
    pub(crate) mount: RawFd,
    pub(crate) dir: CString,
}

impl Join {
    /// The `Join` of a trial's space whose namespaces a process received as
    /// descriptors (a Python server forked per trial: `bridge::zygote`),
    /// its trial's directory `dir`; `user` is None where the process is in
    /// that user namespace already, `net` where it is in that network (or
    /// the judge sent none): the cage it then builds makes a network of its
    /// own unless it finds itself in a closed one (`Cage::build`), as a
    /// judge's does.
    pub fn of(
        user: Option<RawFd>,
        mount: RawFd,
        net: Option<RawFd>,
        dir: &Path,
    ) -> std::io::Result<Join> {
        Ok(Join {
            user,
            net,
            mount,
            dir: CString::new(absolute(dir).as_os_str().as_bytes())?,
        })
    }

    /// The trial's directory, as `Join::of` takes it back.
    pub fn dir(&self) -> &std::ffi::CStr {
        &self.dir
    }

    /// Its namespaces as descriptors (user, mount, network), for a process
    /// that joins them itself (`Join::of` is how it reads them back).
    pub fn descriptors(&self) -> (Option<RawFd>, RawFd, Option<RawFd>) {
        (self.user, self.mount, self.net)
    }
}

impl std::fmt::Debug for Space {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Space({:?})", self.join)
    }
}

impl Space {
    /// The space of a trial whose directory is `dir`, in `net` when given,
    /// where this machine allows it (`Layers::probe`), `None` where it does
    /// not; an error where it should and could not.
    pub fn for_trial(dir: &Path, net: Option<&Net>) -> std::io::Result<Option<Space>> {
        if !Layers::probe().space {
            return Ok(None);
        }
        Space::new(dir, net).map(Some)
    }

    fn new(dir: &Path, net: Option<&Net>) -> std::io::Result<Space> {
        let dir = absolute(dir);
        let c_dir = CString::new(dir.as_os_str().as_bytes())?;
        let options = CString::new(format!("size={SPACE},nr_inodes={SPACE_FILES},mode=755"))?;
        let (uid, gid) = (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw(),
        );
        let uid_map = CString::new(format!("{uid} {uid} 1"))?;
        let gid_map = CString::new(format!("{gid} {gid} 1"))?;
        let given_user = net.map(|n| n.user.as_fd());
        // The clone's descriptors (it shares this process's table): its user
        // namespace (when it made one), its mount namespace, the tmpfs's root.
        let (mut own_user, mut mount, mut root) = (None, None, None);
        let made = in_a_clone(0, &mut || {
            use rustix::fs::{Mode, OFlags};
            let open = |path: &std::ffi::CStr, flags| {
                rustix::fs::open(path, flags | OFlags::CLOEXEC, Mode::empty()).ok()
            };
            let mode = hold(&c_dir, &options, &uid_map, &gid_map, given_user);
            if mode == b'u' {
                own_user = open(c"/proc/self/ns/user", OFlags::RDONLY);
            }
            mount = open(c"/proc/self/ns/mnt", OFlags::RDONLY);
            root = open(&c_dir, OFlags::PATH);
            mode != b'x'
                && (mode != b'u' || own_user.is_some())
                && mount.is_some()
                && root.is_some()
        });
        let (Ok(true), Some(mount), Some(root)) = (made, mount, root) else {
            return Err(std::io::Error::other(
                "the trial's space could not be mounted",
            ));
        };
        let (user, net) = match net {
            Some(net) => (Some(net.user.try_clone()?), Some(net.net.try_clone()?)),
            None => (own_user, None),
        };
        let join = Arc::new(Join {
            user: user.as_ref().map(AsRawFd::as_raw_fd),
            net: net.as_ref().map(AsRawFd::as_raw_fd),
            mount: mount.as_raw_fd(),
            dir: c_dir,
        });
        Ok(Space {
            _user: user,
            _net: net,
            _mount: mount,
            root,
            join,
        })
    }

    /// What a child of the trial does to join it (see `join`).
    pub fn join(&self) -> Arc<Join> {
        self.join.clone()
    }

    /// Whether the trial used up its space (less than 1 MiB, or no file,
    /// left): it wrote too much, and what it wrote last was refused. This is
    /// the tmpfs's own account, so the runner fails the trial whatever the
    /// code made of the refusal (ENOSPC).
    pub fn used_up(&self) -> bool {
        let Ok(stat) = rustix::fs::fstatvfs(&self.root) else {
            return false;
        };
        let free = stat.f_bavail * stat.f_frsize;
        free < (1 << 20) || stat.f_favail == 0
    }
}

/// The making of a trial's space, in a clone of ours: the mount namespace,
/// owned by the user namespace `user` (a `Net`'s, joined) or else by one of
/// its own mapping fencelab's own ids (or, for root where the kernel
/// refuses one, the machine's), and the tmpfs on `dir`. Says which user
/// namespace: `u` its own, `g` the given one, `m` the machine's; `x` when
/// nothing was made.
fn hold(
    dir: &std::ffi::CStr,
    options: &std::ffi::CStr,
    uid_map: &std::ffi::CStr,
    gid_map: &std::ffi::CStr,
    user: Option<BorrowedFd<'_>>,
) -> u8 {
    use rustix::mount::{MountFlags, MountPropagationFlags};
    use rustix::thread::{LinkNameSpaceType, UnshareFlags};
    let made = if let Some(user) = user {
        // Its owner's: every right in it, and none outside.
        if move_into_link_name_space(user, Some(LinkNameSpaceType::User)).is_err()
            || sys::unshare(UnshareFlags::NEWNS).is_err()
        {
            return b'x';
        }
        b'g'
    } else if sys::unshare(UnshareFlags::NEWUSER | UnshareFlags::NEWNS).is_ok() {
        if write_file(c"/proc/self/setgroups", c"deny").is_err()
            || write_file(c"/proc/self/uid_map", uid_map).is_err()
            || write_file(c"/proc/self/gid_map", gid_map).is_err()
        {
            return b'x';
        }
        b'u'
    } else if rustix::process::geteuid().is_root()
        && sys::unshare(UnshareFlags::NEWNS).is_ok()
        && rustix::mount::mount_change(
            c"/",
            MountPropagationFlags::REC | MountPropagationFlags::DOWNSTREAM,
        )
        .is_ok()
    {
        b'm'
    } else {
        return b'x';
    };
    // Mounts copied into a mount namespace of a user namespace below the
    // machine's are slaves already: nothing mounted here reaches it.
    let flags = MountFlags::NOSUID | MountFlags::NODEV;
    let mounted = rustix::mount::mount(c"fencelab", dir, c"tmpfs", flags, options).is_ok();
    if mounted { made } else { b'x' }
}

/// Joins the trial's space `join` (from `Space::join`), in the trial's
/// directory. Meant for a child between fork and exec, before `enter`.
///
/// # Safety
/// Call only from a `pre_exec` hook, while the `Space` is alive.
pub unsafe fn join(join: &Join) -> std::io::Result<()> {
    join_space(join)
}

/// `join`, for this crate's own children between fork and exec.
pub(crate) fn join_space(join: &Join) -> std::io::Result<()> {
    use rustix::thread::LinkNameSpaceType;
    if let Some(user) = join.user {
        move_into_link_name_space(borrowed(user), Some(LinkNameSpaceType::User))?;
    }
    // The trials' closed network (every right in its user namespace,
    // just joined, is needed to join it).
    if let Some(net) = join.net {
        move_into_link_name_space(borrowed(net), Some(LinkNameSpaceType::Network))?;
    }
    // It leaves the root and working directory at the namespace's root.
    move_into_link_name_space(borrowed(join.mount), Some(LinkNameSpaceType::Mount))?;
    rustix::process::chdir(join.dir.as_c_str())?;
    // A change of credentials may have cleared it.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    Ok(())
}

#[cfg(test)]
mod tests;
