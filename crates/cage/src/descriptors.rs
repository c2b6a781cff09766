//! Closing descriptors between fork and exec: what the watcher and the init
//! hold open would keep a pipe of the program's from ending.

use std::os::fd::RawFd;

/// Closes every descriptor but `a` and `b` (-1: none), the standard ones
/// too: what the watcher and the init hold open would keep a pipe of the
/// program's (its output, std's report of a failed exec) from ending.
pub(crate) unsafe fn keep_only(a: RawFd, b: RawFd) {
    // SAFETY: as `close_all_but`'s caller promises.
    unsafe { close_all_but(0, &mut [a, b]) }
}

/// Closes every descriptor from `first` on but those in `keep` (which it
/// sorts; below `first` or negative: ignored). System calls only: safe
/// between fork and exec.
///
/// # Safety
/// Only where nothing still owns the descriptors it closes: a child between
/// fork and exec, or a process that is about to run nothing but its own code.
pub unsafe fn close_all_but(first: RawFd, keep: &mut [RawFd]) {
    keep.sort_unstable();
    let mut from = first.max(0) as libc::c_uint;
    // SAFETY: closes only what the caller says nothing still owns.
    unsafe {
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
}

unsafe fn close_range(first: libc::c_uint, last: libc::c_uint) {
    // SAFETY: `close_range` and `close` on numbers alone; no memory is passed.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, last, 0) != 0 {
            // Before Linux 5.9: one by one, as far as descriptors go here.
            for fd in first..=last.min(first.max(4096)) {
                libc::close(fd as libc::c_int);
            }
        }
    }
}
