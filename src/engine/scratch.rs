//! The scratch workspace: where the engine writes the crates it builds (the
//! judge, the implementations, the server that hosts them) and how it keeps
//! concurrent runs apart.
//!
//! It lives in the target directory, never among the project's sources. Every
//! crate's directory is named after a hash of its contents and written once,
//! atomically, so a crate that exists is complete and is never rewritten under a
//! build or a run that uses it. Builds share the target directory of the running
//! fencelab binary and its profile, so the dependencies (SQLite above all) are
//! compiled once for fencelab and its scratch crates alike.

use std::collections::BTreeSet;
use std::collections::hash_map::DefaultHasher;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// The project's lock file, so that scratch builds resolve to exactly the
/// versions fencelab itself was built with, and need nothing from the network.
const LOCK_FILE: &str = include_str!("../../Cargo.lock");

/// The scratch workspace in a target directory.
#[derive(Debug, Clone)]
pub struct Scratch {
    /// `<target>/fencelab/ws`
    pub root: PathBuf,
    /// The cargo target directory shared with fencelab's own build.
    pub target_dir: PathBuf,
    /// Whether to build with `--release` (when fencelab itself was).
    pub release: bool,
    /// How much the garbage collector keeps.
    pub keep: Keep,
}

/// A crate written into the scratch workspace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CrateDir {
    /// The package name, which is also its directory under `crates/`:
    /// `<kind>-<hash of the contents>`.
    pub name: String,
}

impl CrateDir {
    /// The crate's name as Rust code refers to it (`-` becomes `_`).
    pub fn ident(&self) -> String {
        self.name.replace('-', "_")
    }
}

/// The exclusive lock on the scratch workspace, held while its manifest is
/// written and cargo builds; released when dropped.
pub struct WorkspaceLock {
    _file: File,
}

/// A hash of some texts, as 16 hex digits.
pub fn hash_of<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut hasher = DefaultHasher::new();
    for part in parts {
        part.len().hash(&mut hasher);
        part.hash(&mut hasher);
    }
    format!("{:016x}", hasher.finish())
}

impl Scratch {
    /// The scratch workspace for a project whose own target directory is
    /// `project_target` (used when fencelab does not run from a target directory).
    pub fn locate(project_target: &Path) -> Result<Scratch, Error> {
        let target_dir = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .or_else(running_target_dir)
            .unwrap_or_else(|| project_target.to_path_buf());
        let target_dir = std::path::absolute(&target_dir).unwrap_or(target_dir);
        Ok(Scratch {
            root: target_dir.join("fencelab").join("ws"),
            target_dir,
            release: !cfg!(debug_assertions),
            keep: Keep::from_env()?,
        })
    }

    /// Writes a crate of `kind` with `files` (paths relative to the crate)
    /// unless a crate with the same contents is there already. Its name is
    /// `<kind>-<hash of the files>`; the files say `<kind>-NAME` (or `<kind>_NAME`)
    /// where they need it, and get the final name in its place.
    pub fn write_crate(&self, kind: &str, files: &[(String, String)]) -> Result<CrateDir, Error> {
        let hash = hash_of(files.iter().flat_map(|(p, c)| [p.as_str(), c.as_str()]));
        let name = format!("{kind}-{hash}");
        let placeholder = format!("{kind}-NAME");
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(path, contents)| {
                let contents = contents
                    .replace(&placeholder, &name)
                    .replace(&placeholder.replace('-', "_"), &name.replace('-', "_"));
                (path.clone(), contents)
            })
            .collect();
        let dir = self.root.join("crates").join(&name);
        if dir.is_dir() {
            return Ok(CrateDir { name });
        }
        let staging_root = self.root.join("staging");
        std::fs::create_dir_all(&staging_root)
            .map_err(|e| Error::io("create", &staging_root, e))?;
        let staging = tempfile::Builder::new()
            .prefix(&name)
            .tempdir_in(&staging_root)
            .map_err(|e| Error::io("create a directory in", &staging_root, e))?;
        for (path, contents) in &files {
            let file = staging.path().join(path);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
            }
            std::fs::write(&file, contents).map_err(|e| Error::io("write", &file, e))?;
        }
        let crates = self.root.join("crates");
        std::fs::create_dir_all(&crates).map_err(|e| Error::io("create", &crates, e))?;
        let staged = staging.keep();
        if let Err(err) = std::fs::rename(&staged, &dir) {
            // Another run wrote the same crate first: its copy is as good as ours.
            let _ = std::fs::remove_dir_all(&staged);
            if !dir.is_dir() {
                return Err(Error::io("move a crate into", &dir, err)
                    .with_next("check the free space and permissions of the target directory"));
            }
        }
        Ok(CrateDir { name })
    }

    /// Takes the workspace's lock, waiting for another fencelab run to finish
    /// its build.
    pub fn lock(&self) -> Result<WorkspaceLock, Error> {
        std::fs::create_dir_all(&self.root).map_err(|e| Error::io("create", &self.root, e))?;
        let path = self.root.join(".lock");
        let file = File::create(&path).map_err(|e| Error::io("create", &path, e))?;
        // SAFETY: flock on a file descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(Error::io("lock", &path, std::io::Error::last_os_error()));
        }
        Ok(WorkspaceLock { _file: file })
    }

    /// Writes the workspace manifest with exactly `members` (every scratch crate
    /// of the build, path dependencies included), under the lock, and the lock
    /// file if there is none yet.
    pub fn set_members(&self, _lock: &WorkspaceLock, members: &[&CrateDir]) -> Result<(), Error> {
        let mut names: Vec<&str> = members.iter().map(|c| c.name.as_str()).collect();
        names.sort();
        names.dedup();
        let list: Vec<String> = names
            .iter()
            .map(|n| format!("    \"crates/{n}\","))
            .collect();
        // Scratch crates compile unoptimised even in release builds. The override
        // names them one by one: a change to the profile itself would change
        // every dependency's build hash (build scripts included), and SQLite
        // would be compiled again instead of reused from fencelab's own build.
        let overrides: String = names
            .iter()
            .map(|n| {
                format!(
                    "[profile.release.package.{n}]\nopt-level = 0\ndebug = false\n\n\
                     [profile.dev.package.{n}]\ndebug = false\n\n"
                )
            })
            .collect();
        let manifest = format!(
            "# Written by fencelab for its scratch builds; not part of any project.\n\
             [workspace]\nresolver = \"3\"\nmembers = [\n{}\n]\n\n{overrides}",
            list.join("\n")
        );
        write_if_changed(&self.root.join("Cargo.toml"), &manifest)?;
        // cargo adds the scratch crates to the lock file; it is seeded again
        // from fencelab's own whenever that changes (a dependency bump).
        let lock = self.root.join("Cargo.lock");
        let stamp = self.root.join(".lock-seed");
        let seed = hash_of([LOCK_FILE]);
        if !lock.exists() || std::fs::read_to_string(&stamp).ok().as_deref() != Some(seed.as_str())
        {
            std::fs::write(&lock, LOCK_FILE).map_err(|e| Error::io("write", &lock, e))?;
            std::fs::write(&stamp, &seed).map_err(|e| Error::io("write", &stamp, e))?;
        }
        Ok(())
    }

    /// The directory of a crate.
    pub fn dir(&self, krate: &CrateDir) -> PathBuf {
        self.root.join("crates").join(&krate.name)
    }

    /// The target directory's output for the profile scratch builds use.
    fn profile_dir(&self) -> PathBuf {
        self.target_dir
            .join(if self.release { "release" } else { "debug" })
    }

    /// Marks `crates` as just used (their directories' times), so that the
    /// garbage collector keeps the most recently used.
    pub fn touch(&self, crates: &[&CrateDir]) {
        let now = std::time::SystemTime::now();
        for krate in crates {
            if let Ok(dir) = File::open(self.dir(krate)) {
                let _ = dir.set_modified(now);
            }
        }
    }

    /// Takes the workspace's lock if no other run holds it now.
    fn try_lock(&self) -> Option<WorkspaceLock> {
        let file = File::create(self.root.join(".lock")).ok()?;
        // SAFETY: flock on a file descriptor we own.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        locked.then_some(WorkspaceLock { _file: file })
    }

    /// Pins `crates` for a run that is about to use them: until the returned
    /// pin is dropped (or the process holding it dies), the garbage collector
    /// removes none of them, whatever their age. Taken under the workspace
    /// lock, before it is released, so that no collector runs between the
    /// build and the pin.
    pub fn pin(&self, _lock: &WorkspaceLock, crates: &[&CrateDir]) -> Result<Pin, Error> {
        let live = self.root.join(LIVE_DIR);
        std::fs::create_dir_all(&live).map_err(|e| Error::io("create", &live, e))?;
        let (file, path) = tempfile::Builder::new()
            .prefix(&format!("{}-", std::process::id()))
            .suffix(".pin")
            .tempfile_in(&live)
            .map_err(|e| Error::io("create a file in", &live, e))?
            .keep()
            .map_err(|e| Error::io("create a file in", &live, e.error))?;
        // SAFETY: flock on a file descriptor we own. The kernel drops it when
        // the process ends, however it ends: a pin never outlives its run.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(Error::io("lock", &path, std::io::Error::last_os_error()));
        }
        let names: String = crates.iter().map(|c| format!("{}\n", c.name)).collect();
        std::fs::write(&path, names).map_err(|e| Error::io("write", &path, e))?;
        Ok(Pin {
            scratch: self.clone(),
            path,
            _file: file,
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
            // SAFETY: flock on a file descriptor we own; it fails while the
            // run that pinned is alive.
            let free = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0;
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
    pub fn collect_garbage(&self, lock: &WorkspaceLock) {
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
        for (kind, mut crates) in by_kind {
            let keep = self.keep.of(&kind);
            crates.retain(|(_, name)| !pinned.contains(name));
            crates.sort_by_key(|c| std::cmp::Reverse(c.0));
            for (_, name) in crates.into_iter().skip(keep) {
                let ident = name.replace('-', "_");
                let _ = std::fs::remove_dir_all(self.root.join("crates").join(&name));
                let _ = std::fs::remove_file(self.profile_dir().join(&name));
                let _ = std::fs::remove_file(self.profile_dir().join(format!("{name}.d")));
                for file in &deps_files {
                    let stem = file.strip_prefix("lib").unwrap_or(file);
                    if stem.starts_with(&format!("{ident}-")) {
                        let _ = std::fs::remove_file(deps.join(file));
                    }
                }
            }
        }
    }
}

/// The directory of the workspace that holds the pins of live runs.
const LIVE_DIR: &str = "live";

/// A live run's hold on the crates it uses (see `Scratch::pin`). Dropping it
/// releases them and then collects the garbage, unless another run is
/// building (that run collects when it is done).
pub struct Pin {
    scratch: Scratch,
    path: PathBuf,
    _file: File,
}

impl Drop for Pin {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
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
pub struct Keep {
    pub servers: usize,
    pub implementations: usize,
    /// Judges and bridges (they change only with fencelab itself).
    pub others: usize,
}

impl Default for Keep {
    fn default() -> Keep {
        Keep {
            servers: 16,
            implementations: 64,
            others: 2,
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

    /// The default, or what `FENCELAB_GC_KEEP` says (a number of servers and
    /// of implementations each).
    pub fn from_env() -> Result<Keep, Error> {
        let Some(value) = std::env::var_os(KEEP_ENV) else {
            return Ok(Keep::default());
        };
        let text = value.to_string_lossy();
        match text.trim().parse::<usize>() {
            Ok(n) => Ok(Keep {
                servers: n,
                implementations: n,
                ..Keep::default()
            }),
            Err(_) => Err(Error::input(format!(
                "{KEEP_ENV}={text:?}: give a whole number (how many unused servers and implementations to keep)"
            ))
            .with_next(format!("unset {KEEP_ENV} to keep the default (16 servers, 64 implementations)"))),
        }
    }
}

fn write_if_changed(path: &Path, contents: &str) -> Result<(), Error> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(contents) {
        return Ok(());
    }
    std::fs::write(path, contents).map_err(|e| Error::io("write", path, e))
}

/// The cargo target directory the running binary was built into, if it runs
/// from one (`<target>/<profile>/fencelab` or `<target>/<profile>/deps/<test>`).
fn running_target_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(4)
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

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
        // SAFETY: this test alone reads or writes the variable.
        unsafe { std::env::set_var(KEEP_ENV, "3") };
        assert_eq!(Keep::from_env().unwrap().servers, 3);
        unsafe { std::env::set_var(KEEP_ENV, "three") };
        let err = Keep::from_env().unwrap_err();
        assert!(
            err.message.contains("FENCELAB_GC_KEEP=\"three\""),
            "{}",
            err.message
        );
        unsafe { std::env::remove_var(KEEP_ENV) };
        assert_eq!(Keep::from_env().unwrap(), Keep::default());
    }
}
