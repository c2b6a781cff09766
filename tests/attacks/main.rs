//! Attacks on the cage (issue 18), each as a submission graded in one batch
//! beside a correct one (`grade`, in `submissions.rs`), and the reading ones
//! as a learner's tests (`check --mine`, in `learner_tests.rs`). Each attack
//! puts whatever it manages to get into its own panic message, so that it
//! would reach the report; for each, the report holds none of it, nothing it
//! started survives the run, and the correct submission in the batch scores
//! exactly what it scores alone (100).
//!
//! Slow: one batch of 21 submissions, about 6 minutes on 2 cores (the
//! thousand processes, the memory bombs and the flood in each trial of step
//! 5). The bomb across processes (16 GiB together) is in the batch only
//! where a memory cgroup bounds it (`Layers::probe().memory`). `cargo test`
//! leaves this binary out; `.ci/run`'s second step runs it
//! (`cargo test --test attacks`).

use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;

#[path = "../common/mod.rs"]
mod common;
use common::root;

mod builds;
mod learner_tests;
mod submissions;

/// What no report may hold.
const TOKEN: &str = "s3cr3t-ci-token-4b1d";
const PEER_MARKER: &str = "PEER-SECRET-7f3a9c";
/// A sentence of `mutants/README.md` and one of `wheats/README.md`: the
/// instructor's files.
const MUTANTS_TEXT: &str = "deliberate break of an implementation";

/// The machine the attacks aim at: listeners and paths made by the test.
struct Targets {
    dir: tempfile::TempDir,
    tcp: TcpListener,
    udp: UdpSocket,
    unix: UnixListener,
    unix_path: PathBuf,
    peer: PathBuf,
}

impl Targets {
    fn new() -> Targets {
        let dir = tempfile::tempdir().unwrap();
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_nonblocking(true).unwrap();
        let unix_path = dir.path().join("grader.sock");
        let unix = UnixListener::bind(&unix_path).unwrap();
        unix.set_nonblocking(true).unwrap();
        let peer = dir.path().join("peer.rs");
        let peer_source =
            fencelab::lab::reference::REFERENCE.replacen("\n", &format!("\n// {PEER_MARKER}\n"), 1);
        std::fs::write(&peer, peer_source).unwrap();
        Targets {
            dir,
            tcp,
            udp,
            unix,
            unix_path,
            peer,
        }
    }

    /// Where the links planted for the judge point (`links_for_the_judge`):
    /// it must stay empty.
    fn outside(&self) -> PathBuf {
        let outside = self.dir.path().join("outside");
        let _ = std::fs::create_dir(&outside);
        outside
    }

    /// Fills the attack's placeholders.
    fn fill(&self, code: &str) -> String {
        code.replace("TCP_ADDR", &self.tcp.local_addr().unwrap().to_string())
            .replace("UDP_ADDR", &self.udp.local_addr().unwrap().to_string())
            .replace("UNIX_PATH", &self.unix_path.display().to_string())
            .replace("PEER_PATH", &self.peer.display().to_string())
            .replace("OUTSIDE_DIR", &self.outside().display().to_string())
            .replace("ROOT", &root().display().to_string())
            .replace("HOME_DIR", &std::env::var("HOME").unwrap_or("/root".into()))
    }
}

/// What the runner says of a trial that used up its memory or its space.
const OUT_OF_MEMORY: &str = "ran out of memory: its processes used more than 1024 MiB together";
const OUT_OF_SPACE: &str = "wrote more than 512 MiB (or too many files) in the trial's directory";
