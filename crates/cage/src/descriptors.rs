//! Descriptors by number, between fork and exec: the few the child inherits
//! from its parent's `Cage`, and the closing of all the others (what the
//! watcher and the init hold open would keep a pipe of the program's from
//! ending). The only module that turns a number into a descriptor.

use std::mem::ManuallyDrop;
use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// A descriptor by its number: one the caller holds open for as long as it
/// is borrowed (a child's inherited from its parent's `Cage` or `Space`, a
/// protocol's passed for a call). The one way a number becomes one here.
pub fn borrowed(fd: RawFd) -> BorrowedFd<'static> {
    // SAFETY: every caller passes a number its process holds open while
    // borrowed (see above); one closed meanwhile fails with EBADF.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

/// Closes the descriptor `fd` of this process, which nothing of it owns: a
/// clone's copy of one the memory it shares names, one met by
/// `close_all_but` on an old kernel, or one its caller gives up.
pub fn close(fd: RawFd) {
    // nix's: a number alone (what it closes is nobody's, see above).
    let _ = nix::unistd::close(fd);
}

/// Puts a duplicate of `fd` at the number `target`, open across exec,
/// closing what was there, which nothing of this process may own (a
/// child's standard streams, a server's listening socket).
pub fn duplicate_at(fd: RawFd, target: RawFd) -> std::io::Result<()> {
    // SAFETY: the number the duplicate goes to, which nothing here owns
    // (see above); never closed by this handle.
    let mut at = ManuallyDrop::new(unsafe { OwnedFd::from_raw_fd(target) });
    rustix::io::dup2(borrowed(fd), &mut at)?;
    Ok(())
}

/// Closes every descriptor from `first` on but those in `keep` (which it
/// sorts; below `first` or negative: ignored). System calls only: safe
/// between fork and exec.
///
/// # Safety
/// Only where nothing still owns the descriptors it closes: a child between
/// fork and exec, or a process that is about to run nothing but its own code.
pub unsafe fn close_all_but(first: RawFd, keep: &mut [RawFd]) {
    keep_only(first, keep);
}

/// `close_all_but`, for this crate's own processes: the watcher and the
/// init, which run nothing but their own code until they end.
pub(crate) fn keep_only(first: RawFd, keep: &mut [RawFd]) {
    keep.sort_unstable();
    let mut from = first.max(0) as libc::c_uint;
    for &fd in keep.iter() {
        if fd < 0 || (fd as libc::c_uint) < from {
            continue;
        }
        if fd as libc::c_uint > from {
            close_range(from, fd as libc::c_uint - 1);
        }
        from = fd as libc::c_uint + 1;
    }
    close_range(from, libc::c_uint::MAX);
}

fn close_range(first: libc::c_uint, last: libc::c_uint) {
    // SAFETY: numbers alone, no memory; what it closes is nobody's (the
    // callers of `keep_only` and `close_all_but`).
    if unsafe { libc::syscall(libc::SYS_close_range, first, last, 0) } != 0 {
        // Before Linux 5.9: one by one, as far as descriptors go here.
        for fd in first..=last.min(first.max(4096)) {
            close(fd as libc::c_int);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    /// In a fork, every descriptor but the kept one is closed: the number
    /// of another is free again, and the kept one still carries a word. A
    /// `keep_only` that closed too little leaves the number taken; one that
    /// closed too much, no word.
    #[test]
    fn keep_only_closes_all_but_the_kept() {
        let (read, write) = rustix::pipe::pipe().unwrap();
        let (_other_read, other_write) = rustix::pipe::pipe().unwrap();
        let (kept, other) = (write.as_raw_fd(), other_write.as_raw_fd());
        let closed_and_kept = crate::namespaces::in_a_fork(|| {
            super::keep_only(0, &mut [kept]);
            let kept = super::borrowed(kept);
            let free = rustix::io::fcntl_dupfd_cloexec(kept, other)
                .is_ok_and(|fd| fd.as_raw_fd() == other);
            free && rustix::io::write(kept, b"k") == Ok(1)
        });
        assert!(closed_and_kept);
        let mut got = [0u8; 2];
        assert_eq!(rustix::io::read(&read, &mut got), Ok(1));
    }
}
