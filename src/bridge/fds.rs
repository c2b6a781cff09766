//! Descriptors passed with a message on a Unix socket (SCM_RIGHTS), one way
//! for every process of fencelab's: the runner, the judge's zygote and the
//! forking servers. A message or descriptors cut short count as none.

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};

use rustix::io::Errno;

use super::child::borrowed;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, recvmsg, sendmsg,
};

/// Sends `message` with `fds` on the socket `fd`, whole (a signal retried).
pub(crate) fn send_with(fd: RawFd, message: &[u8], fds: &[RawFd]) -> std::io::Result<()> {
    // The caller's descriptors, open for the duration of the call.
    let socket = borrowed(fd);
    let rights: Vec<BorrowedFd<'_>> = fds.iter().map(|&f| borrowed(f)).collect();
    let mut space = vec![MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(fds.len().max(1)))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !rights.is_empty() && !control.push(SendAncillaryMessage::ScmRights(&rights)) {
        return Err(std::io::Error::other(
            "too many descriptors for one message",
        ));
    }
    loop {
        match sendmsg(
            socket,
            &[IoSlice::new(message)],
            &mut control,
            SendFlags::NOSIGNAL,
        ) {
            Ok(_) => return Ok(()),
            Err(Errno::INTR) => continue,
            Err(err) => return Err(err.into()),
        }
    }
}

/// One message from the socket `fd` into `buf`, with at most `max_fds`
/// descriptors (close-on-exec, ours): its length and them. None at the
/// socket's end, on an error, or when the message was cut short or came
/// with more descriptors (those that came are closed).
pub(crate) fn receive_with(
    fd: RawFd,
    buf: &mut [u8],
    max_fds: usize,
) -> Option<(usize, Vec<OwnedFd>)> {
    // The caller's descriptor, open for the duration of the call.
    let fd = borrowed(fd);
    // Room for `max_fds` and no more where the padding allows: rustix adds
    // room to align the buffer, which is aligned here instead.
    let align = std::mem::align_of::<libc::cmsghdr>();
    let room = rustix::cmsg_space!(ScmRights(max_fds.max(1))) - align;
    let mut space = vec![MaybeUninit::uninit(); room + align];
    let at = space.as_ptr().align_offset(align);
    let mut control = RecvAncillaryBuffer::new(&mut space[at..at + room]);
    let received = loop {
        match recvmsg(
            fd,
            &mut [IoSliceMut::new(buf)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        ) {
            Err(Errno::INTR) => continue,
            other => break other,
        }
    };
    let mut fds = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    let received = received.ok()?;
    // The control buffer is padded: more than `max_fds` may fit in it.
    let cut = received
        .flags
        .intersects(ReturnFlags::TRUNC | ReturnFlags::CTRUNC)
        || fds.len() > max_fds;
    (received.bytes > 0 && !cut).then_some((received.bytes, fds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixDatagram;

    #[test]
    fn a_message_and_its_descriptors_arrive_and_one_cut_short_is_none() {
        let (a, b) = UnixDatagram::pair().unwrap();
        let file = tempfile::tempfile().unwrap();
        send_with(
            a.as_raw_fd(),
            b"hello",
            &[file.as_raw_fd(), file.as_raw_fd()],
        )
        .unwrap();
        let mut buf = [0u8; 16];
        let (n, fds) = receive_with(b.as_raw_fd(), &mut buf, 2).expect("received");
        assert_eq!((&buf[..n], fds.len()), (&b"hello"[..], 2));
        // Two descriptors where one is asked for, or three: none kept.
        send_with(a.as_raw_fd(), b"three", &[file.as_raw_fd(); 3]).unwrap();
        assert!(receive_with(b.as_raw_fd(), &mut buf, 1).is_none());
        send_with(a.as_raw_fd(), b"two", &[file.as_raw_fd(), file.as_raw_fd()]).unwrap();
        assert!(receive_with(b.as_raw_fd(), &mut buf, 1).is_none());
        // A message longer than the buffer: cut short.
        send_with(a.as_raw_fd(), &[7u8; 32], &[]).unwrap();
        assert!(receive_with(b.as_raw_fd(), &mut buf, 1).is_none());
        // The socket's end.
        drop(a);
        b.set_nonblocking(true).unwrap();
        assert!(receive_with(b.as_raw_fd(), &mut buf, 1).is_none());
    }

    /// Room for two, three sent: the kernel installs the two that fit and
    /// says `MSG_CTRUNC`, which alone tells that the third was dropped.
    #[test]
    fn descriptors_cut_short_are_refused_and_none_of_them_stays_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("passed");
        let file = std::fs::File::create(&path).unwrap();
        let (a, b) = UnixDatagram::pair().unwrap();
        send_with(a.as_raw_fd(), b"three", &[file.as_raw_fd(); 3]).unwrap();
        let mut buf = [0u8; 16];
        let received = receive_with(b.as_raw_fd(), &mut buf, 2);
        assert!(received.is_none(), "{received:?}");
        // The sender's own descriptor is the only one left on the file.
        let open = super::super::sandbox::proc::own_descriptors()
            .into_iter()
            .filter(|(_, target)| *target == path)
            .count();
        assert_eq!(open, 1, "a descriptor received stayed open");
    }
}
