//! The scratch workspace: where the engine writes the crates it builds (the
//! judge, the implementations, the server that hosts them) and how it keeps
//! concurrent runs apart.
//!
//! It lives in a cache (`Place`: the user's choice, `CARGO_TARGET_DIR`, the
//! running fencelab's own target directory, else `~/.cache/fencelab`), never
//! among a project's sources, and is shared by every lab crate and run, so the
//! dependencies (SQLite above all) are compiled once per user, not per lab.
//! Every crate's directory is named after a hash of its contents and written
//! once, atomically, so a crate that exists is complete and is never rewritten
//! under a build or a run that uses it; the collector (`collector.rs`) removes
//! only crates no live run has pinned.

use std::collections::hash_map::DefaultHasher;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use crate::error::Error;

mod collector;
pub use collector::KEEP_ENV;
pub(crate) use collector::Keep;
pub(crate) use collector::Pin;

/// The project's lock file, so that scratch builds resolve to exactly the
/// versions fencelab itself was built with, and need nothing from the network.
const LOCK_FILE: &str = include_str!("../../../Cargo.lock");

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
    pub(crate) keep: Keep,
}

/// A crate written into the scratch workspace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct CrateDir {
    /// The package name, which is also its directory under `crates/`:
    /// `<kind>-<hash of the contents>`.
    pub name: String,
}

impl CrateDir {
    /// The crate's name as Rust code refers to it (`-` becomes `_`).
    pub(crate) fn ident(&self) -> String {
        self.name.replace('-', "_")
    }
}

/// The exclusive lock on the scratch workspace, held while its manifest is
/// written and cargo builds; released when dropped.
pub(crate) struct WorkspaceLock {
    file: File,
}

impl Drop for WorkspaceLock {
    /// Unlocks before the descriptor is closed: an flock belongs to the open
    /// file, which a child forked meanwhile (by another thread, between its
    /// fork and its exec) also holds, so closing our descriptor alone would
    /// leave the workspace locked until that child execs, and a run finishing
    /// then would skip its collection (`Pin`'s drop).
    fn drop(&mut self) {
        let _ = rustix::fs::flock(&self.file, rustix::fs::FlockOperation::Unlock);
    }
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

/// The environment variable that says where scratch builds go (`--cache
/// DIR` says it first, as a value: see `Place::find`).
pub(crate) const CACHE_ENV: &str = "FENCELAB_CACHE";

/// Where the scratch builds go, and why there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// `--cache DIR` or `FENCELAB_CACHE`: a cache of the user's choosing.
    Chosen(PathBuf),
    /// `CARGO_TARGET_DIR`: the user's shared target directory.
    CargoTargetDir(PathBuf),
    /// The target directory fencelab itself runs from (its own project), so
    /// that its dependencies, SQLite above all, are compiled once for both.
    Running(PathBuf),
    /// The user's cache directory (`$XDG_CACHE_HOME/fencelab`, else
    /// `~/.cache/fencelab`): shared by every lab crate and every run.
    UserCache(PathBuf),
    /// No home directory: the project's own target directory.
    Project(PathBuf),
}

impl Place {
    /// Where scratch builds go (see `Place`), for a project whose own target
    /// directory is `project_target`: `cache` (`--cache DIR`) when given.
    pub(crate) fn find(cache: Option<&Path>, project_target: &Path) -> Place {
        Place::find_in(cache, project_target, &|name| std::env::var_os(name))
    }

    /// [`Place::find`] in an environment given as a lookup (the tests' own,
    /// so that no test writes the process's environment, which others read).
    fn find_in(
        cache: Option<&Path>,
        project_target: &Path,
        env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Place {
        let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(dir) = cache.map(Path::to_path_buf).or_else(|| var(CACHE_ENV)) {
            return Place::Chosen(dir);
        }
        if let Some(dir) = var("CARGO_TARGET_DIR") {
            return Place::CargoTargetDir(dir);
        }
        if let Some(dir) = running_target_dir() {
            return Place::Running(dir);
        }
        match var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache"))) {
            Some(cache) => Place::UserCache(cache.join("fencelab")),
            None => Place::Project(project_target.to_path_buf()),
        }
    }

    /// The directory this place names.
    pub(crate) fn dir(&self) -> &Path {
        match self {
            Place::Chosen(d)
            | Place::CargoTargetDir(d)
            | Place::Running(d)
            | Place::UserCache(d)
            | Place::Project(d) => d,
        }
    }

    /// The cargo target directory scratch builds use here: the directory
    /// itself when it is a target directory already, else its `target/`.
    pub(crate) fn target_dir(&self) -> PathBuf {
        match self {
            Place::Chosen(d) | Place::UserCache(d) => d.join("target"),
            Place::CargoTargetDir(d) | Place::Running(d) | Place::Project(d) => d.clone(),
        }
    }

    /// Whether all of it is fencelab's (so that cleaning may remove it all).
    pub(crate) fn is_fencelabs_own(&self) -> bool {
        matches!(self, Place::Chosen(_) | Place::UserCache(_))
    }
}

impl Scratch {
    /// The scratch workspace for a project whose own target directory is
    /// `project_target` (used only when there is no home directory for a
    /// cache; see `Place`), where no `--cache` is given.
    pub fn locate(project_target: &Path) -> Result<Scratch, Error> {
        Scratch::at(&Place::find(None, project_target))
    }

    /// The scratch workspace at `place`.
    pub(crate) fn at(place: &Place) -> Result<Scratch, Error> {
        let target_dir = place.target_dir();
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
    pub(crate) fn write_crate(
        &self,
        kind: &str,
        files: &[(String, String)],
    ) -> Result<CrateDir, Error> {
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
    pub(crate) fn lock(&self) -> Result<WorkspaceLock, Error> {
        std::fs::create_dir_all(&self.root).map_err(|e| Error::io("create", &self.root, e))?;
        let path = self.root.join(".lock");
        let file = File::create(&path).map_err(|e| Error::io("create", &path, e))?;
        if let Err(err) = rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive) {
            return Err(Error::io("lock", &path, err.into()));
        }
        Ok(WorkspaceLock { file })
    }

    /// Writes the workspace manifest with exactly `members` (every scratch crate
    /// of the build, path dependencies included), under the lock, and the lock
    /// file if there is none yet.
    pub(crate) fn set_members(
        &self,
        _lock: &WorkspaceLock,
        members: &[&CrateDir],
    ) -> Result<(), Error> {
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

    /// Where front ends remember what they checked once (a wheat that passed
    /// the suite, say): small files named by a hash of what was checked. The
    /// garbage collector leaves them; `cache clean` removes them with the rest.
    pub(crate) fn records_dir(&self) -> PathBuf {
        self.root.join("records")
    }

    /// The directory of a crate.
    pub(crate) fn dir(&self, krate: &CrateDir) -> PathBuf {
        self.root.join("crates").join(&krate.name)
    }

    /// Where cargo writes the cdylib of `krate` (the bridge's), once built.
    pub(crate) fn cdylib(&self, krate: &CrateDir) -> PathBuf {
        self.profile_dir()
            .join("deps")
            .join(format!("lib{}.so", krate.ident()))
    }

    /// The target directory's output for the profile scratch builds use.
    fn profile_dir(&self) -> PathBuf {
        self.target_dir
            .join(if self.release { "release" } else { "debug" })
    }

    /// Marks `crates` as just used (their directories' times), so that the
    /// garbage collector keeps the most recently used.
    pub(crate) fn touch(&self, crates: &[&CrateDir]) {
        let now = std::time::SystemTime::now();
        for krate in crates {
            if let Ok(dir) = File::open(self.dir(krate)) {
                let _ = dir.set_modified(now);
            }
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

    #[test]
    fn scratch_builds_go_where_the_user_says_else_beside_fencelab_else_to_the_user_cache() {
        let project = Path::new("/p/target");
        let with_cache = |name: &str| {
            if name == CACHE_ENV {
                Some("/c".into())
            } else {
                std::env::var_os(name)
            }
        };
        let chosen = Place::find_in(None, project, &with_cache);
        assert_eq!(chosen, Place::Chosen("/c".into()));
        assert_eq!(chosen.target_dir(), Path::new("/c/target"));
        // `--cache` comes before the environment.
        let given = Place::find_in(Some(Path::new("/given")), project, &with_cache);
        assert_eq!(given, Place::Chosen("/given".into()));
        // A unit test runs from cargo's target directory: fencelab's own.
        let without_cache = |name: &str| match name {
            CACHE_ENV => None,
            _ => std::env::var_os(name),
        };
        match Place::find_in(None, project, &without_cache) {
            Place::Running(dir) | Place::CargoTargetDir(dir) => {
                assert!(dir.join("CACHEDIR.TAG").exists() || dir.is_dir(), "{dir:?}")
            }
            other => panic!("expected fencelab's own target directory, got {other:?}"),
        }
        let user = Place::UserCache("/home/u/.cache/fencelab".into());
        assert_eq!(
            user.target_dir(),
            Path::new("/home/u/.cache/fencelab/target")
        );
        assert!(user.is_fencelabs_own() && !Place::Running("/t".into()).is_fencelabs_own());
    }
}
