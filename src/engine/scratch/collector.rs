//! The scratch workspace's garbage collector, and the pins that keep it off
//! what live runs use.
//!
//! Scratch crates are content-addressed, so every edit of a learner's file and
//! every submission makes new ones; the collector keeps the most recently used
//! few of each kind (`Keep`) and removes the rest with what cargo built of them.
//! It never removes a crate a live run has pinned: a pin is a file naming the
//! run's crates, with an flock held on it for the run's life, so a run that
//! crashes releases its pin with its last breath (the kernel drops the lock).
//! It runs when a run is done with what it built, not after a build.

use rustix::fs::{FlockOperation, flock};
use std::collections::BTreeSet;
use std::fs::File;
use std::path::PathBuf;

use super::{CrateDir, Scratch, WorkspaceLock};
use crate::error::Error;

impl Scratch {
    /// Takes the workspace's lock if no other run holds it now.
    fn try_lock(&self) -> Option<WorkspaceLock> {
        let file = File::create(self.root.join(".lock")).ok()?;
        let locked = flock(&file, FlockOperation::NonBlockingLockExclusive).is_ok();
        locked.then_some(WorkspaceLock { file })
    }

    /// Pins `crates` for a run that is about to use them: until the returned
    /// pin is dropped (or the process holding it dies), the garbage collector
    /// removes none of them, whatever their age. Taken under the workspace
    /// lock, before it is released, so that no collector runs between the
    /// build and the pin.
    pub(crate) fn pin(&self, _lock: &WorkspaceLock, crates: &[&CrateDir]) -> Result<Pin, Error> {
        let live = self.root.join(LIVE_DIR);
        std::fs::create_dir_all(&live).map_err(|e| Error::io("create", &live, e))?;
        let (file, path) = tempfile::Builder::new()
            .prefix(&format!("{}-", std::process::id()))
            .suffix(".pin")
            .tempfile_in(&live)
            .map_err(|e| Error::io("create a file in", &live, e))?
            .keep()
            .map_err(|e| Error::io("create a file in", &live, e.error))?;
        // The kernel drops it when the process ends, however it ends: a pin
        // never outlives its run.
        flock(&file, FlockOperation::LockExclusive)
            .map_err(|e| Error::io("lock", &path, e.into()))?;
        let names: String = crates.iter().map(|c| format!("{}\n", c.name)).collect();
        std::fs::write(&path, names).map_err(|e| Error::io("write", &path, e))?;
        Ok(Pin {
            scratch: self.clone(),
            path,
            file,
        })
    }

    /// The crates pinned by live runs (this one's included). Pins of runs that
    /// are gone (their lock is free) are removed on the way.
    fn pinned(&self, _lock: &WorkspaceLock) -> BTreeSet<String> {
        let mut pinned = BTreeSet::new();
        let Ok(entries) = std::fs::read_dir(self.root.join(LIVE_DIR)) else {
            return pinned;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(file) = File::open(&path) else {
                continue;
            };
            // It fails while the run that pinned is alive.
            let free = flock(&file, FlockOperation::NonBlockingLockShared).is_ok();
            if free {
                let _ = std::fs::remove_file(&path);
                continue;
            }
            if let Ok(names) = std::fs::read_to_string(&path) {
                pinned.extend(names.lines().map(String::from));
            }
        }
        pinned
    }

    /// Removes the scratch crates of each kind beyond the `keep` most recently
    /// used, with what cargo built of them, so that a learner running `check`
    /// after every edit does not fill the disk. Never removes a crate that a
    /// live run has pinned (see `pin`), however many there are: a run never
    /// loses what it built. Runs under the lock.
    pub(crate) fn collect_garbage(&self, lock: &WorkspaceLock) {
        let Ok(entries) = std::fs::read_dir(self.root.join("crates")) else {
            return;
        };
        let pinned = self.pinned(lock);
        let mut by_kind: std::collections::BTreeMap<String, Vec<(std::time::SystemTime, String)>> =
            Default::default();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some((kind, _)) = name.rsplit_once('-') else {
                continue;
            };
            let modified = entry
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            by_kind
                .entry(kind.to_string())
                .or_default()
                .push((modified, name));
        }
        let deps = self.profile_dir().join("deps");
        let deps_files: Vec<String> = std::fs::read_dir(&deps)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        // Servers whose crate is gone (removed by hand, say) are garbage too.
        let present: BTreeSet<String> = by_kind
            .values()
            .flatten()
            .map(|(_, name)| name.clone())
            .collect();
        if let Ok(built) = std::fs::read_dir(self.profile_dir()) {
            for entry in built.flatten() {
                let file = entry.file_name().to_string_lossy().into_owned();
                let name = file.trim_end_matches(".d");
                if name.starts_with("server-") && !present.contains(name) && !pinned.contains(name)
                {
                    let _ = std::fs::remove_file(entry.path());
                    let ident = name.replace('-', "_");
                    for dep in deps_files
                        .iter()
                        .filter(|f| f.starts_with(&format!("{ident}-")))
                    {
                        let _ = std::fs::remove_file(deps.join(dep));
                    }
                }
            }
        }
        // Servers first: what a kept server hosts is kept with it, so that a
        // run that uses more implementations than `Keep` counts (the
        // reference, the wheats and every mutant) finds them all again.
        let mut kept: BTreeSet<String> = pinned.clone();
        let mut kinds: Vec<(String, Vec<(std::time::SystemTime, String)>)> =
            by_kind.into_iter().collect();
        kinds.sort_by_key(|(kind, _)| kind != "server");
        for (kind, mut crates) in kinds {
            let keep = self.keep.of(&kind);
            crates.retain(|(_, name)| !kept.contains(name));
            crates.sort_by_key(|c| std::cmp::Reverse(c.0));
            let (keeping, going) = crates.split_at(keep.min(crates.len()));
            for (_, name) in keeping {
                kept.insert(name.clone());
                if kind == "server" {
                    kept.extend(self.dependencies(name));
                }
            }
            for (_, name) in going {
                let ident = name.replace('-', "_");
                let _ = std::fs::remove_dir_all(self.root.join("crates").join(name));
                let _ = std::fs::remove_file(self.profile_dir().join(name));
                let _ = std::fs::remove_file(self.profile_dir().join(format!("{name}.d")));
                for file in &deps_files {
                    if is_built_of(file, &ident) {
                        let _ = std::fs::remove_file(deps.join(file));
                    }
                }
            }
        }
    }

    /// The process ids of the live runs that hold pins.
    pub(crate) fn live_runs(&self, _lock: &WorkspaceLock) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir(self.root.join(LIVE_DIR)) else {
            return Vec::new();
        };
        let mut pids: Vec<u32> = entries
            .flatten()
            .filter(|entry| {
                // It fails while the run that pinned is alive.
                File::open(entry.path())
                    .is_ok_and(|file| flock(&file, FlockOperation::NonBlockingLockShared).is_err())
            })
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                name.split('-').next()?.parse().ok()
            })
            .collect();
        pids.sort();
        pids.dedup();
        pids
    }

    /// Removes every scratch crate and what cargo built of them (in both
    /// profiles), leaving the rest of the target directory as it is.
    pub(crate) fn remove_all(&self, _lock: &WorkspaceLock) -> Result<(), Error> {
        let crates = self.root.join("crates");
        let names: Vec<String> = std::fs::read_dir(&crates)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        for profile in ["debug", "release"] {
            let dir = self.target_dir.join(profile);
            let deps = dir.join("deps");
            let files: Vec<String> = std::fs::read_dir(&deps)
                .map(|d| {
                    d.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            for name in &names {
                let ident = name.replace('-', "_");
                let _ = std::fs::remove_file(dir.join(name));
                let _ = std::fs::remove_file(dir.join(format!("{name}.d")));
                for file in &files {
                    if is_built_of(file, &ident) {
                        let _ = std::fs::remove_file(deps.join(file));
                    }
                }
            }
        }
        match std::fs::remove_dir_all(&self.root) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("remove", &self.root, e))
            }
            _ => Ok(()),
        }
    }

    /// The scratch crates a crate depends on (its path dependencies).
    fn dependencies(&self, name: &str) -> Vec<String> {
        let manifest = self.root.join("crates").join(name).join("Cargo.toml");
        std::fs::read_to_string(manifest)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(" = { path = \"../"))
            .map(|(dep, _)| dep.trim().to_string())
            .collect()
    }
}

/// The directory of the workspace that holds the pins of live runs.
const LIVE_DIR: &str = "live";

/// A live run's hold on the crates it uses (see `Scratch::pin`). Dropping it
/// releases them and then collects the garbage, unless another run is
/// building (that run collects when it is done).
pub(crate) struct Pin {
    scratch: Scratch,
    path: PathBuf,
    file: File,
}

impl Drop for Pin {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        // Unlocked outright, not by the close, which a child forked
        // meanwhile would delay (see `WorkspaceLock`'s drop).
        let _ = flock(&self.file, FlockOperation::Unlock);
        if let Some(lock) = self.scratch.try_lock() {
            self.scratch.collect_garbage(&lock);
        }
    }
}

impl std::fmt::Debug for Pin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pin").field("path", &self.path).finish()
    }
}

/// How many crates of each kind the garbage collector keeps beyond those that
/// live runs use: the most recently used, so that the next `check` after an
/// edit, or the next run of the same batch, builds nothing again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Keep {
    pub servers: usize,
    pub implementations: usize,
    /// Judges and bridges (they change with fencelab itself, and with each
    /// learner's own tests).
    pub others: usize,
}

impl Default for Keep {
    fn default() -> Keep {
        Keep {
            servers: 16,
            implementations: 64,
            others: 8,
        }
    }
}

/// The environment variable that sets how many unused servers and
/// implementations the collector keeps (`Keep`), e.g. to keep the disk small.
pub const KEEP_ENV: &str = "FENCELAB_GC_KEEP";

impl Keep {
    fn of(&self, kind: &str) -> usize {
        match kind {
            "impl" => self.implementations,
            "server" => self.servers,
            _ => self.others,
        }
    }

    /// The default, or what `FENCELAB_GC_KEEP` says (a number of servers, of
    /// implementations and of each other kind: judges, bridges).
    pub(crate) fn from_env() -> Result<Keep, Error> {
        Keep::from_value(std::env::var_os(KEEP_ENV))
    }

    /// [`Keep::from_env`] of the variable's value (the tests give one; no
    /// test writes the process's environment, which others read).
    fn from_value(value: Option<std::ffi::OsString>) -> Result<Keep, Error> {
        let Some(value) = value else {
            return Ok(Keep::default());
        };
        let text = value.to_string_lossy();
        match text.trim().parse::<usize>() {
            Ok(n) => Ok(Keep {
                servers: n,
                implementations: n,
                others: n,
            }),
            Err(_) => Err(Error::input(format!(
                "{KEEP_ENV}={text:?}: give a whole number (how many unused servers, implementations and judges to keep)"
            ))
            .with_next(format!("unset {KEEP_ENV} to keep the default (16 servers, 64 implementations)"))),
        }
    }
}

/// Whether `file` in cargo's `deps/` was built of the crate `ident`: its
/// artifacts (`lib{ident}-{hash}.rlib`, `{ident}-{hash}`, ...) and, for the
/// bridge, its cdylib (`lib{ident}.so`, named without a hash).
fn is_built_of(file: &str, ident: &str) -> bool {
    let stem = file.strip_prefix("lib").unwrap_or(file);
    stem.starts_with(&format!("{ident}-")) || stem == format!("{ident}.so")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn a_crate_s_cdylib_goes_with_it_and_no_other_s() {
        assert!(is_built_of("libbridge_ab12.so", "bridge_ab12"));
        assert!(is_built_of("libbridge_ab12-0f0f.rlib", "bridge_ab12"));
        assert!(is_built_of("judge_ab12-0f0f", "judge_ab12"));
        assert!(!is_built_of("libbridge_ab123.so", "bridge_ab12"));
        assert!(!is_built_of("libbridge_ab123-0f0f.rlib", "bridge_ab12"));
    }

    /// A workspace in a temporary target directory with `n` servers, built
    /// one second apart (oldest first), each with its binary and deps file.
    fn workspace(n: usize, keep: usize) -> (tempfile::TempDir, Scratch, Vec<CrateDir>) {
        let target = tempfile::tempdir().unwrap();
        let scratch = Scratch {
            root: target.path().join("fencelab/ws"),
            target_dir: target.path().to_path_buf(),
            release: false,
            keep: Keep {
                servers: keep,
                ..Keep::default()
            },
        };
        let deps = target.path().join("debug/deps");
        std::fs::create_dir_all(&deps).unwrap();
        let mut servers = Vec::new();
        for i in 0..n {
            let name = format!("server-{i:016x}");
            let dir = scratch.root.join("crates").join(&name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(target.path().join("debug").join(&name), "bin").unwrap();
            std::fs::write(deps.join(format!("{}-0123", name.replace('-', "_"))), "bin").unwrap();
            // Times set outright, so that the order does not depend on how
            // fast the files were made.
            let at = UNIX_EPOCH + Duration::from_secs(1_000_000 + i as u64);
            File::open(&dir).unwrap().set_modified(at).unwrap();
            servers.push(CrateDir { name });
        }
        (target, scratch, servers)
    }

    fn kept(scratch: &Scratch, servers: &[CrateDir]) -> Vec<bool> {
        servers.iter().map(|s| scratch.dir(s).is_dir()).collect()
    }

    #[test]
    fn garbage_collection_keeps_the_newest_servers_and_removes_what_cargo_built_of_the_rest() {
        let (target, scratch, servers) = workspace(20, 16);
        // The oldest is in use again: it must survive.
        scratch.touch(&[&servers[0]]);
        let lock = scratch.lock().unwrap();
        scratch.collect_garbage(&lock);
        let kept = kept(&scratch, &servers);
        assert_eq!(kept.iter().filter(|k| **k).count(), 16);
        assert!(kept[0], "the one just used is kept");
        assert!(!kept[1] && !kept[4] && kept[5] && kept[19]);
        let deps = target.path().join("debug/deps");
        assert!(
            !target.path().join("debug").join(&servers[1].name).exists(),
            "its binary is gone"
        );
        assert!(
            !deps.join(format!("{}-0123", servers[1].ident())).exists(),
            "its deps artifact is gone"
        );
        assert!(target.path().join("debug").join(&servers[19].name).exists());
    }

    #[test]
    fn a_dropped_lock_is_free_even_while_a_forked_child_holds_its_descriptor() {
        // Another thread's fork between its fork and its exec copies every
        // descriptor, the lock's too; the child here stays in that state.
        let (_target, scratch, _) = workspace(0, 1);
        let lock = scratch.lock().unwrap();
        // A copy of the lock's open file in a child that lives on, as that
        // fork's: a duplicate open across exec, inherited by `sleep`.
        let copy = rustix::io::dup(&lock.file).unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("1000")
            .spawn()
            .unwrap();
        drop(copy);
        drop(lock);
        let free = scratch.try_lock().is_some();
        // Our own child: killed, reaped.
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            free,
            "the lock is held by the child's copy of the descriptor"
        );
    }

    #[test]
    fn nothing_a_live_run_pinned_is_collected_however_old() {
        // A run built 20 servers and uses them all; the collector keeps 2.
        let (target, scratch, servers) = workspace(24, 2);
        let lock = scratch.lock().unwrap();
        let used: Vec<&CrateDir> = servers[..20].iter().collect();
        let pin = scratch.pin(&lock, &used).unwrap();
        scratch.collect_garbage(&lock);
        let kept = kept(&scratch, &servers);
        assert!(kept[..20].iter().all(|k| *k), "every pinned server stays");
        assert!(
            used.iter()
                .all(|s| target.path().join("debug").join(&s.name).exists()),
            "and so do their binaries"
        );
        assert!(kept[22] && kept[23], "the two newest unpinned stay");
        assert!(!kept[20] && !kept[21], "older unpinned ones go");
        drop(lock);
        // Once the run is done, its pin goes and the collector runs.
        drop(pin);
        let kept = self::kept(&scratch, &servers);
        assert_eq!(kept.iter().filter(|k| **k).count(), 2, "{kept:?}");
        assert!(kept[22] && kept[23]);
    }

    #[test]
    fn what_a_kept_server_hosts_is_kept_with_it_however_many() {
        // One server hosting 10 implementations; the collector keeps 1 server
        // and 2 implementations.
        let (_target, mut scratch, servers) = workspace(1, 1);
        scratch.keep.implementations = 2;
        let impls: Vec<String> = (0..12).map(|i| format!("impl-{i:016x}")).collect();
        let crates = scratch.root.join("crates");
        for name in &impls {
            std::fs::create_dir_all(crates.join(name)).unwrap();
        }
        let deps: String = impls[..10]
            .iter()
            .map(|n| format!("{n} = {{ path = \"../{n}\" }}\n"))
            .collect();
        std::fs::write(
            crates.join(&servers[0].name).join("Cargo.toml"),
            format!(
                "[package]\nname = \"{}\"\n[dependencies]\n{deps}",
                servers[0].name
            ),
        )
        .unwrap();
        let lock = scratch.lock().unwrap();
        scratch.collect_garbage(&lock);
        let kept: Vec<bool> = impls.iter().map(|n| crates.join(n).is_dir()).collect();
        assert!(
            kept[..10].iter().all(|k| *k),
            "the server's ten stay: {kept:?}"
        );
        assert_eq!(
            kept[10..].iter().filter(|k| **k).count(),
            2,
            "and two others"
        );
    }

    #[test]
    fn a_pin_left_by_a_run_that_died_protects_nothing() {
        let (_target, scratch, servers) = workspace(4, 1);
        // A pin file nobody holds a lock on: its run is gone.
        let live = scratch.root.join(LIVE_DIR);
        std::fs::create_dir_all(&live).unwrap();
        let dead = live.join("999999-dead.pin");
        std::fs::write(&dead, format!("{}\n", servers[0].name)).unwrap();
        let lock = scratch.lock().unwrap();
        scratch.collect_garbage(&lock);
        assert_eq!(kept(&scratch, &servers), [false, false, false, true]);
        assert!(!dead.exists(), "the dead run's pin is cleared away");
    }

    #[test]
    fn a_pin_held_elsewhere_is_seen_as_live() {
        // Another run's pin: a lock held on another open file, as another
        // process would hold it.
        let (_target, scratch, servers) = workspace(3, 0);
        let lock = scratch.lock().unwrap();
        let theirs = scratch.pin(&lock, &[&servers[0]]).unwrap();
        scratch.collect_garbage(&lock);
        assert_eq!(kept(&scratch, &servers), [true, false, false]);
        drop(theirs);
    }

    #[test]
    fn the_keep_counts_come_from_the_environment_strictly() {
        let keep = Keep::from_value(Some("3".into())).unwrap();
        assert_eq!((keep.servers, keep.implementations, keep.others), (3, 3, 3));
        let err = Keep::from_value(Some("three".into())).unwrap_err();
        assert!(
            err.message.contains("FENCELAB_GC_KEEP=\"three\""),
            "{}",
            err.message
        );
        assert_eq!(Keep::from_value(None).unwrap(), Keep::default());
    }
}
