//! Which layers this machine has (`Layers::probe`), what is not enforced
//! without one, and the tests' hook to need or pretend the lack of one.

use std::sync::OnceLock;

use crate::landlock::available;
use crate::namespaces::{mount_namespace_works, namespaces_work};

/// The test hook that makes `Layers::probe` report a layer missing, as on a
/// machine without it: `FENCELAB_CAGE_WITHOUT=namespaces`, `landlock`,
/// `memory` or `space` (or several, comma-separated). Read here and nowhere else; it changes only what
/// is reported, never what the child sets up.
pub(crate) const SIMULATE_MISSING_ENV: &str = "FENCELAB_CAGE_WITHOUT";

/// The variable that makes a test needing a missing layer fail rather than
/// skip (`Layers::test_needs`); `.ci/run` sets it to 1.
pub const REQUIRE_CAGE_ENV: &str = "FENCELAB_REQUIRE_CAGE";

/// A layer a test needs (`Layers::test_needs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Namespaces,
    Landlock,
    /// Landlock's ABI 6: scoped signals and abstract sockets.
    Landlock6,
    Memory,
    Space,
}

/// Which layers of the cage this machine has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layers {
    /// User, mount, network and IPC namespaces can be made unprivileged.
    pub namespaces: bool,
    /// The Landlock ABI version, if any.
    pub landlock: Option<i32>,
    /// A memory cgroup can be made under fencelab's own (`Memory`).
    pub memory: bool,
    /// A trial's directory can be a tmpfs of its own (`Space`).
    pub space: bool,
}

impl Layers {
    /// The layers of the running kernel, asked once per process.
    pub fn probe() -> Layers {
        static PROBED: OnceLock<Layers> = OnceLock::new();
        *PROBED.get_or_init(|| {
            let namespaces = namespaces_work();
            Layers {
                namespaces,
                landlock: available(),
                memory: crate::memory::available(),
                space: namespaces
                    || (rustix::process::geteuid().is_root() && mount_namespace_works()),
            }
        })
    }

    /// Whether a test that needs `needs` runs here. Where one is missing (or
    /// `SIMULATE_MISSING_ENV` says so), the test is skipped with a word on
    /// stderr; under `REQUIRE_CAGE_ENV=1` it fails instead, naming the layer,
    /// so that CI never passes with the cage untested.
    pub fn test_needs(needs: &[Need]) -> bool {
        let required = std::env::var(REQUIRE_CAGE_ENV).is_ok_and(|v| v == "1");
        match Layers::reported().missing(needs) {
            None => true,
            Some(layer) if required => panic!(
                "this test needs {layer}, which this machine lacks, and \
                 {REQUIRE_CAGE_ENV}=1 says the cage must be tested here \
                 (unset it to skip such tests; README: \"The tests, in two steps\")"
            ),
            Some(layer) => {
                eprintln!("skipped: this test needs {layer}, which this machine lacks");
                false
            }
        }
    }

    /// The first of `needs` these layers lack, named for a person.
    fn missing(&self, needs: &[Need]) -> Option<&'static str> {
        needs.iter().find_map(|need| {
            let (has, name) = match need {
                Need::Namespaces => (self.namespaces, "user namespaces"),
                Need::Landlock => (self.landlock.is_some(), "Landlock"),
                Need::Landlock6 => (self.landlock.is_some_and(|abi| abi >= 6), "Landlock ABI 6"),
                Need::Memory => (self.memory, "a writable memory cgroup"),
                Need::Space => (self.space, "a trial's space (a tmpfs of its own)"),
            };
            (!has).then_some(name)
        })
    }

    /// What this machine has, less what `SIMULATE_MISSING_ENV` pretends is
    /// missing: for fencelab's report of what is not enforced.
    pub fn reported() -> Layers {
        let mut layers = Layers::probe();
        let hook = std::env::var(SIMULATE_MISSING_ENV).unwrap_or_default();
        for missing in hook.split(',').map(str::trim) {
            match missing {
                "namespaces" => layers.namespaces = false,
                "landlock" => layers.landlock = None,
                "memory" => layers.memory = false,
                "space" => layers.space = false,
                _ => {}
            }
        }
        layers
    }

    /// What untrusted code can do here that it could not on a machine with
    /// every layer: one sentence each, in English and in Japanese; empty when
    /// everything holds.
    pub fn not_enforced(&self) -> Vec<(&'static str, &'static str)> {
        let mut gaps = Vec::new();
        if !self.namespaces {
            gaps.push((
                "no user namespaces here: untrusted code keeps the network (UDP and DNS out, \
                 and TCP without Landlock 4+), can connect to any Unix socket it can name, and \
                 processes it leaves are found only by their environment",
                "ユーザー名前空間が使えません: 信頼できないコードがネットワーク (UDP と DNS、\
                 Landlock 4 未満なら TCP も) と、名前の分かる Unix ソケットに届き、残したプロセスは\
                 環境変数でしか見つけられません",
            ));
        }
        match self.landlock {
            None if !self.namespaces => gaps.push((
                "no Landlock here: untrusted code can read and write every file fencelab's \
                 user can (other submissions, the cache, home)",
                "Landlock が使えません: 信頼できないコードが fencelab のユーザーの読み書きできる\
                 すべてのファイル (他の提出物、キャッシュ、ホーム) を読み書きできます",
            )),
            None => gaps.push((
                "no Landlock here: untrusted code may write in the system directories it is \
                 shown, wherever fencelab's user may",
                "Landlock が使えません: 信頼できないコードが、見えているシステムのディレクトリに\
                 fencelab のユーザーと同じだけ書き込めます",
            )),
            Some(abi) if abi < 6 && !self.namespaces => gaps.push((
                "Landlock before ABI 6 here: untrusted code can signal other processes of \
                 fencelab's user",
                "Landlock の ABI が 6 未満です: 信頼できないコードが fencelab のユーザーの\
                 ほかのプロセスにシグナルを送れます",
            )),
            _ => {}
        }
        if !self.memory {
            gaps.push((
                "memory across a trial's processes: not bounded (no writable memory cgroup)",
                "試行のプロセス全体のメモリ: 上限なし (書き込めるメモリ cgroup がありません)",
            ));
        }
        if !self.space {
            gaps.push((
                "total space per trial: not bounded (no user or mount namespaces), only 256 \
                 MiB per file",
                "試行ごとの書き込みの合計: 上限なし (ユーザー名前空間もマウント名前空間も\
                 使えません)、1 ファイル 256 MiB まで",
            ));
        }
        gaps
    }
}

#[cfg(test)]
mod tests;
