//! The network: a closed network namespace shared by the trials of one
//! implementation (`Net`), and whether this process is in one.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use crate::layers::Layers;
use crate::namespaces::{in_a_clone, write_file};
use crate::sys;

/// A network namespace with no interface up, and the user namespace that
/// owns it, for the trials of one implementation (`engine::runner` makes one
/// per submission, or per implementation a learner's tests are judged
/// against): each of its trials' `Space` is made in that user namespace and
/// every process of the trial joins the network namespace, so a cage made
/// there needs no network namespace of its own (`closed_network`). Made
/// once instead of once per trial: a network namespace costs its making
/// (`copy_net_ns`) and, after it, the kernel's asynchronous `cleanup_net`,
/// together about 6% of a trial's processor time. Only descriptors: no
/// process holds it, and it goes when the last descriptor and process do.
pub struct Net {
    pub(crate) user: OwnedFd,
    pub(crate) net: OwnedFd,
}

impl std::fmt::Debug for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Net({}, {})",
            self.user.as_raw_fd(),
            self.net.as_raw_fd()
        )
    }
}

impl Net {
    /// A closed network where this machine has user namespaces
    /// (`Layers::probe`), `None` where it has none; an error where it
    /// should and could not.
    pub fn for_trials() -> std::io::Result<Option<Net>> {
        if !Layers::probe().namespaces {
            return Ok(None);
        }
        Net::new().map(Some)
    }

    fn new() -> std::io::Result<Net> {
        let (uid, gid) = (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw(),
        );
        let uid_map = CString::new(format!("{uid} {uid} 1"))?;
        let gid_map = CString::new(format!("{gid} {gid} 1"))?;
        // What the clone opens (it shares this process's table) is ours.
        let (mut user, mut net) = (None, None);
        let made = in_a_clone(libc::CLONE_NEWUSER | libc::CLONE_NEWNET, &mut || {
            use rustix::fs::{Mode, OFlags};
            if write_file(c"/proc/self/setgroups", c"deny").is_err()
                || write_file(c"/proc/self/uid_map", &uid_map).is_err()
                || write_file(c"/proc/self/gid_map", &gid_map).is_err()
            {
                return false;
            }
            let flags = OFlags::RDONLY | OFlags::CLOEXEC;
            user = rustix::fs::open(c"/proc/self/ns/user", flags, Mode::empty()).ok();
            net = rustix::fs::open(c"/proc/self/ns/net", flags, Mode::empty()).ok();
            user.is_some() && net.is_some()
        });
        match (made?, user, net) {
            (true, Some(user), Some(net)) => Ok(Net { user, net }),
            _ => Err(std::io::Error::other(
                "a network namespace for the trials could not be made",
            )),
        }
    }
}

/// Whether this process's network namespace has no interface up: no
/// address to send to or from, TCP, UDP or DNS, here or anywhere (a fresh
/// one's loopback is down). A cage made here then shares it (`Cage::build`)
/// where Landlock keeps abstract sockets in (ABI 6): a `Net` of the trials
/// of one implementation. Anything else (the machine's own network, an
/// interface that cannot be asked) is not closed.
pub(crate) fn closed_network() -> bool {
    let Some(dev) = crate::proc::read_text("/proc/thread-self/net/dev") else {
        return false;
    };
    let Ok(sock) = std::os::unix::net::UnixDatagram::unbound() else {
        return false;
    };
    // Two header lines, then "name: counters" per interface.
    dev.lines().skip(2).all(|line| {
        let Some((name, _)) = line.split_once(':') else {
            return false;
        };
        let name = name.trim().as_bytes();
        sys::interface_flags(sock.as_fd(), name).is_ok_and(|flags| flags & libc::IFF_UP == 0)
    })
}

#[cfg(test)]
mod tests;
