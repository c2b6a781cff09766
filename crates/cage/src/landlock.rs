//! Landlock: a ruleset built in the parent with the `landlock` crate (the
//! places the program may read, write and execute; TCP; abstract sockets and
//! signals), restricted in the child by one system call (`last::restrict`).

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, LandlockStatus, PathBeneath, RestrictSelf,
    Ruleset as Builder, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};

use crate::place::Place;

/// `landlock_restrict_self`, the one Landlock call the child makes itself.
pub(crate) const SYS_RESTRICT_SELF: libc::c_long = 446;

/// The newest ABI whose rights the cage asks for: the crate drops, best
/// effort, what the running kernel lacks. ABI 5's `IoctlDev` is not handled:
/// a device the cage shows may be asked anything.
const FILES: ABI = ABI::V3;
const NETWORK: ABI = ABI::V4;
const SCOPES: ABI = ABI::V6;

/// Whether Landlock keeps a cage's abstract Unix sockets in (ABI 6): it can
/// connect to none made outside it. Only then does a cage share its
/// trials' closed network (`Net`): without it, a caged program could reach
/// an abstract socket of another trial of the same implementation's.
pub(crate) fn scopes_abstract_sockets() -> bool {
    available().is_some_and(|abi| abi >= 6)
}

/// The Landlock ABI version of the running kernel, if it has Landlock
/// (Linux 5.13+): reported, so asked of the kernel, which the crate leaves
/// to its best effort. The crate's own probe: `apply`, asked nothing and
/// not for no new privileges, restricts nothing.
pub(crate) fn available() -> Option<i32> {
    let status = RestrictSelf::default().no_new_privs(false).apply().ok()?;
    match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => Some(kernel_abi.unwrap_or(effective_abi as i32)).filter(|&abi| abi > 0),
        _ => None,
    }
}

/// A ruleset built in the parent: the crate's handle, which still takes
/// rules (`Cage::within`), and a descriptor of the same ruleset, whose
/// number the child restricts itself with.
pub(crate) struct Ruleset {
    created: RulesetCreated,
    fd: OwnedFd,
}

impl std::fmt::Debug for Ruleset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ruleset({})", self.fd.as_raw_fd())
    }
}

impl Ruleset {
    /// The descriptor the child restricts itself with.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Allows everything the ruleset handles beneath `place` (a trial's
    /// tmpfs root); false where the kernel refused.
    pub(crate) fn allow_all(&mut self, place: &OwnedFd) -> bool {
        allow(&mut self.created, place, AccessFs::from_all(FILES)).is_some()
    }
}

/// The ruleset of the places `opened`: None where the kernel has no
/// Landlock, or refused the trial's directory (the code could not run).
pub(crate) fn ruleset(
    opened: &[(PathBuf, Place, Option<OwnedFd>, Option<PathBuf>)],
) -> Option<Ruleset> {
    available()?;
    let mut created = Builder::default()
        .handle_access(AccessFs::from_all(FILES))
        .ok()?
        .handle_access(AccessNet::from_all(NETWORK))
        .ok()?
        .scope(Scope::from_all(SCOPES))
        .ok()?
        .create()
        .ok()?;
    for (path, place, fd, _) in opened {
        let Some(fd) = fd else { continue };
        let read = AccessFs::Execute | AccessFs::ReadFile;
        let access = match place {
            Place::Trial => AccessFs::from_all(FILES),
            Place::System if path.is_dir() => read | AccessFs::ReadDir,
            Place::System => read,
            Place::Device => AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate,
            Place::Shown => continue,
        };
        let added = allow(&mut created, fd, access);
        // Without its trial directory the code could not run at all.
        if added.is_none() && *place == Place::Trial {
            return None;
        }
    }
    // The same ruleset (a duplicate of its descriptor): None where the
    // kernel gave none.
    let fd = Option::<OwnedFd>::from(created.try_clone().ok()?)?;
    Some(Ruleset { created, fd })
}

/// Allows `access` beneath the place open at `parent`.
fn allow(ruleset: &mut RulesetCreated, parent: &OwnedFd, access: BitFlags<AccessFs>) -> Option<()> {
    ruleset
        .add_rule(PathBeneath::new(parent, access))
        .ok()
        .map(|_| ())
}
