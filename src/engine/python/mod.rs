//! Python implementations: how the engine hosts a `.py` file of the contract.
//!
//! A Python implementation is not built by cargo: its server is the program
//! `python/fencelab_server.py` (standard library only, compiled into
//! fencelab), written into the scratch workspace beside the modules it hosts
//! (`pyserver-<hash>/`: the script, `hosted.json`, `impls/<key>/lease.py`, and
//! `reads`, the interpreter's directories). The judge starts and cages it as
//! it does a Rust server (`bridge::client`); the cage then also reads the
//! interpreter's directories and the one module it serves, nothing else
//! (`bridge::client::python_reads`).
//!
//! Where the cage has a PID namespace, a trial's server is not an
//! interpreter started afresh: the runner starts one forking server per
//! implementation (`Zygotes`: python/fencelab_forking.py, the
//! contract's standard library imported, the implementation not), and each
//! judge has it fork a child that enters the trial's cage with the bridge's
//! own code before it imports the implementation (`bridge::zygote` says
//! how, and why it keeps every guarantee of a server started afresh). The
//! servers the runner starts itself (fencelab's own implementations, which
//! a learner's tests are judged against) are forked so too, by the runner's
//! own request, where the bridge's cdylib is built (`Hosted::library`).
//!
//! "Building" is compiling every source with Python's own `compile()`: one
//! that does not compile is unviable, with Python's message and line. The
//! interpreter is `python3` on `PATH` (or `FENCELAB_PYTHON`), 3.10 or newer,
//! found once per process; without it a Python run stops with one line
//! saying what to install.
//!
//! What does not change between commands is asked once, as cargo builds a
//! crate once: the probe's answer (`probe_cache`: kept only for an
//! interpreter found, and only while nothing that chose it has changed),
//! Python's compile answers (by interpreter and sources) and a server
//! directory's `--identify` (its directory is named by its contents). A
//! warm `check` starts no interpreter before its trials.

mod imports;
mod wire;

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Duration;

use super::builder::{Host, Hosting, Implementation};
use super::policy::{Launch, Servers};
use super::process::{self, Limits, cage_error};
use super::scratch::{CrateDir, Pin, Scratch, hash_of};
use crate::bridge::sandbox::Cage;
use crate::error::Error;
use crate::lab::suite::{SuiteFiles, SuiteTest};

pub(crate) use wire::server;
/// The file name the judge recognises a Python server by.
pub(crate) const SERVER_FILE: &str = crate::bridge::protocol::PYTHON_SERVER;
/// The forking server, as shipped (`Zygotes`), written beside the server.
pub(crate) const FORKING: &str = include_str!("../../../python/fencelab_forking.py");
/// Its file name.
pub(crate) const FORKING_FILE: &str = "fencelab_forking.py";
/// The environment variable naming the interpreter to use instead of `python3`.
pub(crate) const PYTHON_ENV: &str = "FENCELAB_PYTHON";
/// The oldest Python the lab's contract is written for.
pub(crate) const OLDEST: (u32, u32) = (3, 10);

/// Whether an implementation is written in Python: its file's extension says.
pub(crate) fn is_python(implementation: &Implementation) -> bool {
    is_python_path(&implementation.shown_path)
}

/// Whether a path names a Python file.
pub(crate) fn is_python_path(path: &str) -> bool {
    path.ends_with(".py")
}

/// The interpreter found on this machine.
#[derive(Debug, Clone)]
pub(crate) struct Interpreter {
    /// Its executable, symbolic links resolved (a pyenv shim is a shell script).
    pub executable: PathBuf,
    /// The directories it reads (its prefix: the standard library, its shared
    /// library), which the cage must show.
    pub reads: Vec<PathBuf>,
}

/// The interpreter (`FENCELAB_PYTHON`, else `python3` on `PATH`), asked once
/// per process; an error in one line saying what to install when it is
/// missing or older than 3.10.
pub(crate) fn interpreter() -> Result<Interpreter, Error> {
    interpreter_in(crate::lab::lang::Lang::En)
}

/// [`interpreter`], its error in `lang`: what a Python command asks first,
/// so that a learner reads it in the language of the rest.
pub(crate) fn interpreter_in(lang: crate::lab::lang::Lang) -> Result<Interpreter, Error> {
    static FOUND: OnceLock<Result<Interpreter, Missing>> = OnceLock::new();
    FOUND
        .get_or_init(find)
        .clone()
        .map_err(|missing| missing.error(lang))
}

/// Why no interpreter can host a Python implementation: the name asked for,
/// and what it did.
#[derive(Debug, Clone)]
enum Missing {
    NotFound(String),
    NoVersion(String),
    TooOld(String, (u32, u32, u32)),
}

impl Missing {
    fn error(&self, lang: crate::lab::lang::Lang) -> Error {
        use crate::lab::lang::Lang;
        let message = match (lang, self) {
            (Lang::En, Missing::NotFound(name)) => {
                format!("a Python lab needs Python 3.10 or newer, and `{name}` is not on PATH")
            }
            (Lang::En, Missing::NoVersion(name)) => {
                format!("a Python lab needs Python 3.10 or newer; `{name}` did not say its version")
            }
            (Lang::En, Missing::TooOld(name, (major, minor, patch))) => format!(
                "a Python lab needs Python 3.10 or newer, and `{name}` is Python {major}.{minor}.{patch}"
            ),
            (Lang::Ja, Missing::NotFound(name)) => {
                format!("Python 3.10 以上が必要ですが、PATH に `{name}` が見つかりません")
            }
            (Lang::Ja, Missing::NoVersion(name)) => {
                format!("Python 3.10 以上が必要ですが、`{name}` はバージョンを答えません")
            }
            (Lang::Ja, Missing::TooOld(name, (major, minor, patch))) => format!(
                "Python 3.10 以上が必要ですが、`{name}` は Python {major}.{minor}.{patch} です"
            ),
        };
        Error::environment(message).with_next(match lang {
            Lang::En => {
                "install Python 3.10 or newer (`apt install python3`, or python.org), \
                 or set FENCELAB_PYTHON to its interpreter"
            }
            Lang::Ja => {
                "Python 3.10 以上をインストールするか（`apt install python3`、python.org）、\
                 FENCELAB_PYTHON で指定してください"
            }
        })
    }
}

fn find() -> Result<Interpreter, Missing> {
    let name = std::env::var_os(PYTHON_ENV)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "python3".into());
    let cache = probe_cache::Cache::for_name(&name);
    if let Some(found) = cache.as_ref().and_then(probe_cache::Cache::read) {
        return Ok(found);
    }
    let found = probe(&name)?;
    if let Some(cache) = &cache {
        cache.write(&found);
    }
    Ok(found)
}

/// Asks the interpreter `name` what it is (through whatever `PATH` finds:
/// a pyenv shim is some 40 bash processes and a third of a second here).
fn probe(name: &std::ffi::OsStr) -> Result<Interpreter, Missing> {
    let shown = name.to_string_lossy().into_owned();
    let probe = "import json, os, sys; print(json.dumps([os.path.realpath(sys.executable), \
                 list(sys.version_info[:3]), sys.base_prefix, sys.base_exec_prefix]))";
    let output = Command::new(name)
        .args(["-I", "-S", "-c", probe])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .map_err(|_| Missing::NotFound(shown.clone()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let parsed: Option<(String, Vec<u32>, String, String)> = serde_json::from_str(text.trim()).ok();
    let Some((executable, version, prefix, exec_prefix)) =
        parsed.filter(|_| output.status.success())
    else {
        return Err(Missing::NoVersion(shown));
    };
    let version = (
        version.first().copied().unwrap_or(0),
        version.get(1).copied().unwrap_or(0),
        version.get(2).copied().unwrap_or(0),
    );
    if (version.0, version.1) < OLDEST {
        return Err(Missing::TooOld(shown, version));
    }
    let executable = PathBuf::from(executable);
    let mut reads: Vec<PathBuf> = vec![PathBuf::from(prefix), PathBuf::from(exec_prefix)];
    if let Some(dir) = executable.parent() {
        reads.push(dir.to_path_buf());
    }
    reads.sort();
    reads.dedup();
    Ok(Interpreter { executable, reads })
}

/// The probe's answer kept between commands (`find`), so that a command
/// asks the interpreter what it is only when something that could change
/// the answer has changed. Only an interpreter found, 3.10 or newer, is
/// kept: a missing or old one is asked every time, and says so in one line.
/// One answer per key, the `KEPT` most recent: commands run from
/// directories at other depths (every directory above is looked at), or
/// under another `.python-version`, have other keys, and with one answer
/// kept each replaced the other's (a `check` in a lab alternating with a
/// `grade` elsewhere asked every time).
///
/// The key is everything the probe's answer depends on: the name asked for,
/// `PATH`, the file `PATH` finds for it (path, size, modification time,
/// inode: a pyenv shim, say), and what a version manager behind such a file
/// reads to choose (pyenv's global `version` beside its shims directory,
/// `.python-version` and asdf's `.tool-versions` in the working directory
/// and every directory above it). The answer is used only while the
/// interpreter it names is still the file it was.
mod probe_cache {
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    use super::Interpreter;
    use crate::engine::scratch::{Place, hash_of};

    /// The variables a version manager's shim reads to choose (pyenv's;
    /// asdf's per-tool one): part of the key.
    const CHOOSERS: [&str; 3] = ["PYENV_VERSION", "PYENV_ROOT", "ASDF_PYTHON_VERSION"];

    /// How many answers the file keeps (one per key: a directory the
    /// command ran from, a PATH, ...).
    const KEPT: usize = 16;

    /// The file of the cache, and the key of this process's probe.
    pub(super) struct Cache {
        file: PathBuf,
        key: String,
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    struct Kept {
        key: String,
        executable: PathBuf,
        /// What the executable was when the probe ran (`identity`).
        identity: String,
        reads: Vec<PathBuf>,
    }

    /// A file's identity: size, modification time, inode ("-": none).
    fn identity(path: &Path) -> String {
        std::fs::metadata(path).map_or_else(
            |_| "-".to_string(),
            |m| format!("{} {}.{} {}", m.len(), m.mtime(), m.mtime_nsec(), m.ino()),
        )
    }

    /// The file `PATH` finds for `name` (or `name` itself, when it is a path).
    fn on_path(name: &std::ffi::OsStr, path: &std::ffi::OsStr) -> Option<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let name = Path::new(name);
        let runnable = |p: &Path| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        if name.components().count() > 1 {
            return runnable(name).then(|| name.to_path_buf());
        }
        std::env::split_paths(path)
            .map(|dir| dir.join(name))
            .find(|p| runnable(p))
    }

    impl Cache {
        /// The cache for the interpreter `name`; None where `PATH` finds
        /// nothing of that name (the probe then says so) or no cache can be.
        pub(super) fn for_name(name: &std::ffi::OsStr) -> Option<Cache> {
            let dir = Place::find(None, Path::new("target"))
                .target_dir()
                .join("fencelab");
            Cache::at(
                name,
                &std::env::var_os("PATH").unwrap_or_default(),
                &CHOOSERS.map(|v| std::env::var_os(v).unwrap_or_default()),
                &std::env::current_dir().ok()?,
                &dir,
            )
        }

        /// [`Cache::for_name`] with `PATH`, the choosers' variables, the working directory and the
        /// cache's directory given.
        pub(super) fn at(
            name: &std::ffi::OsStr,
            path: &std::ffi::OsStr,
            chosen: &[std::ffi::OsString],
            cwd: &Path,
            dir: &Path,
        ) -> Option<Cache> {
            let found = on_path(name, path)?;
            let found = std::path::absolute(&found).ok()?;
            let mut parts: Vec<String> = vec![
                name.to_string_lossy().into_owned(),
                path.to_string_lossy().into_owned(),
                found.to_string_lossy().into_owned(),
                identity(&found),
            ];
            parts.extend(chosen.iter().map(|v| v.to_string_lossy().into_owned()));
            if let Some(root) = found.parent().and_then(Path::parent) {
                parts.push(identity(&root.join("version")));
            }
            for above in cwd.ancestors() {
                for chooser in [".python-version", ".tool-versions"] {
                    parts.push(identity(&above.join(chooser)));
                }
            }
            Some(Cache {
                file: dir.join("python-interpreter.json"),
                key: hash_of(parts.iter().map(String::as_str)),
            })
        }

        /// Every answer kept, the most recently written first (none where
        /// the file is missing or not a list of them).
        fn all(&self) -> Vec<Kept> {
            /// One answer is written as fencelab wrote it before it kept
            /// several (a single object): an older fencelab sharing the
            /// target directory still reads it.
            #[derive(serde::Deserialize)]
            #[serde(untagged)]
            enum File {
                One(Kept),
                Many(Vec<Kept>),
            }
            match std::fs::read_to_string(&self.file)
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok())
            {
                Some(File::One(kept)) => vec![kept],
                Some(File::Many(all)) => all,
                None => Vec::new(),
            }
        }

        /// The interpreter kept for this key, if it is still what it was.
        pub(super) fn read(&self) -> Option<Interpreter> {
            let kept = self.all().into_iter().find(|k| k.key == self.key)?;
            (kept.identity == identity(&kept.executable)).then_some(Interpreter {
                executable: kept.executable,
                reads: kept.reads,
            })
        }

        /// Keeps `found` for this key, beside the `KEPT - 1` answers
        /// written most recently for other keys (each keeps its own rather
        /// than replace the other's); at best: a cache that cannot be
        /// written is asked again next time.
        pub(super) fn write(&self, found: &Interpreter) {
            let mut all = self.all();
            all.retain(|k| k.key != self.key);
            all.insert(
                0,
                Kept {
                    key: self.key.clone(),
                    executable: found.executable.clone(),
                    identity: identity(&found.executable),
                    reads: found.reads.clone(),
                },
            );
            all.truncate(KEPT);
            let Some(dir) = self.file.parent() else {
                return;
            };
            if std::fs::create_dir_all(dir).is_err() {
                return;
            }
            if let Ok(mut file) = tempfile::NamedTempFile::new_in(dir) {
                use std::io::Write;
                let text = match &all[..] {
                    [one] => serde_json::to_string(one),
                    _ => serde_json::to_string(&all),
                }
                .expect("JSON");
                if file.write_all(text.as_bytes()).is_ok() {
                    let _ = file.persist(&self.file);
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// A shim-like script `python3` in `bin/`, beside pyenv's `version`.
        fn shim(root: &Path) -> PathBuf {
            use std::os::unix::fs::PermissionsExt;
            let bin = root.join("shims");
            std::fs::create_dir_all(&bin).unwrap();
            let shim = bin.join("python3");
            std::fs::write(&shim, "#!/bin/sh\nexec real \"$@\"\n").unwrap();
            std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::write(root.join("version"), "3.11.7\n").unwrap();
            bin
        }

        fn found(executable: &Path) -> Interpreter {
            Interpreter {
                executable: executable.to_path_buf(),
                reads: vec![PathBuf::from("/usr")],
            }
        }

        /// Sets a file's modification time (a change the key must see even
        /// within the filesystem's clock's resolution).
        fn touch(file: &Path, secs: i64) {
            let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs as u64);
            std::fs::File::options()
                .write(true)
                .open(file)
                .unwrap()
                .set_modified(time)
                .unwrap();
        }

        #[test]
        fn the_probes_answer_is_kept_until_what_chose_the_interpreter_changes() {
            let root = tempfile::tempdir().unwrap();
            let bin = shim(root.path());
            let work = root.path().join("lab");
            std::fs::create_dir_all(&work).unwrap();
            let dir = root.path().join("cache");
            let real = root.path().join("python3.11");
            std::fs::write(&real, "an interpreter").unwrap();
            let name = std::ffi::OsStr::new("python3");
            let none = [std::ffi::OsString::new()];
            let cache = |path: &Path| Cache::at(name, path.as_os_str(), &none, &work, &dir);

            // Nothing of that name on PATH: no cache (the probe says so).
            assert!(cache(&root.path().join("nowhere")).is_none());
            let kept = cache(&bin).unwrap();
            assert!(kept.read().is_none(), "nothing kept yet");
            kept.write(&found(&real));
            let again = cache(&bin).unwrap();
            assert_eq!(again.read().unwrap().executable, real);

            // pyenv's global version changes: asked again.
            touch(&root.path().join("version"), 1_000_000);
            assert!(cache(&bin).unwrap().read().is_none());
            cache(&bin).unwrap().write(&found(&real));
            assert!(cache(&bin).unwrap().read().is_some());
            // A local .python-version appears above the lab: asked again.
            std::fs::write(root.path().join(".python-version"), "3.12\n").unwrap();
            assert!(cache(&bin).unwrap().read().is_none());
            cache(&bin).unwrap().write(&found(&real));
            // The interpreter kept is no longer the file it was: asked again.
            touch(&real, 2_000_000);
            assert!(cache(&bin).unwrap().read().is_none());
            cache(&bin).unwrap().write(&found(&real));
            // Another PATH finding the same shim is another key.
            let other = format!("{}:/usr/bin", bin.display());
            assert!(cache(Path::new(&other)).unwrap().read().is_none());
            assert!(cache(&bin).unwrap().read().is_some());
            // PYENV_VERSION chooses another version: asked again.
            let chosen = [std::ffi::OsString::from("3.12.1")];
            let pinned = Cache::at(name, bin.as_os_str(), &chosen, &work, &dir).unwrap();
            assert!(pinned.read().is_none());
        }

        #[test]
        fn commands_run_from_two_directories_each_keep_their_answer() {
            let root = tempfile::tempdir().unwrap();
            let bin = shim(root.path());
            let dir = root.path().join("cache");
            let real = root.path().join("python3.11");
            std::fs::write(&real, "an interpreter").unwrap();
            let name = std::ffi::OsStr::new("python3");
            let none = [std::ffi::OsString::new()];
            let from = |work: &Path| Cache::at(name, bin.as_os_str(), &none, work, &dir).unwrap();
            // Each directory another key: a .python-version of its own (a
            // directory at another depth is one too).
            let place = |name: String| {
                let work = root.path().join(name);
                std::fs::create_dir_all(&work).unwrap();
                std::fs::write(work.join(".python-version"), "3.11\n").unwrap();
                work
            };
            // A `check` in a lab and a `grade` in a course directory, in turn:
            // neither answer replaces the other.
            let (lab, course) = (place("lab".into()), place("course".into()));
            assert_ne!(from(&lab).key, from(&course).key);
            from(&lab).write(&found(&real));
            // One answer is written as before (an older fencelab reads it).
            let text = std::fs::read_to_string(&from(&lab).file).unwrap();
            assert!(serde_json::from_str::<Kept>(&text).is_ok(), "{text}");
            from(&course).write(&found(&real));
            assert!(from(&lab).read().is_some(), "the lab's answer was replaced");
            assert!(from(&course).read().is_some());
            // Written again, an answer is kept once; beyond KEPT keys, the
            // oldest goes.
            from(&lab).write(&found(&real));
            for i in 0..KEPT - 1 {
                from(&place(format!("other{i}"))).write(&found(&real));
            }
            assert!(from(&lab).read().is_some(), "the most recent KEPT are kept");
            assert!(from(&course).read().is_none(), "the oldest went");
        }
    }
}

/// The hosting of Python implementations, and the pin that keeps their
/// servers from the garbage collector while the run uses them.
#[derive(Debug)]
pub(crate) struct Hosted {
    /// Per implementation, in the order given.
    pub hosting: Vec<Hosting>,
    pub pin: Option<Pin>,
    /// What the run forks their servers with (`Zygotes`), pinned with them;
    /// None when there are none.
    pub forking: Option<Forking>,
}

/// What a run forks Python servers with (`Zygotes`): the root's script,
/// and the bridge's cdylib.
#[derive(Debug, Clone)]
pub(crate) struct Forking {
    /// python/fencelab_forking.py in a directory of fencelab's own
    /// (`pyroot-<hash>/`, beside the server it compiles once for all): the
    /// run's root interpreter is started from it, so that nothing it holds,
    /// nor its command line, which every fork of it shows, names an
    /// implementation's directory.
    pub root: PathBuf,
    /// The bridge's cdylib, where it is built (by any earlier run that built
    /// fencelab's judge): with it the runner's forks of fencelab's own
    /// implementations enter their cage.
    pub library: Option<PathBuf>,
}

/// The key of a Python implementation (its source's hash).
fn key_of(source: &str) -> String {
    format!("py-{}", hash_of([source]))
}

/// Hosts `implementations` (all Python): checks that each compiles, writes
/// the servers (one for all, or one each, as `servers` says), asks each who
/// it is, and pins them.
pub(crate) fn host(
    scratch: &Scratch,
    implementations: &[Implementation],
    servers: Servers,
    import_first: bool,
) -> Result<Hosted, Error> {
    if implementations.is_empty() {
        return Ok(Hosted {
            hosting: Vec::new(),
            pin: None,
            forking: None,
        });
    }
    let python = interpreter()?;
    let errors = compile_errors_kept(scratch, &python, implementations)?;
    let viable: Vec<usize> = (0..implementations.len())
        .filter(|&i| errors[i].is_none())
        .collect();
    let groups: Vec<Vec<usize>> = match servers {
        Servers::Shared if viable.is_empty() => Vec::new(),
        Servers::Shared => vec![viable.clone()],
        Servers::Separate => viable.iter().map(|&i| vec![i]).collect(),
    };
    let lock = scratch.lock()?;
    let mut dirs: Vec<(CrateDir, Vec<usize>, String)> = Vec::new();
    for hosts in groups {
        let (dir, build) = write_server(scratch, &python, implementations, &hosts)?;
        dirs.push((dir, hosts, build));
    }
    let root = write_root(scratch, &python)?;
    let mut members: Vec<&CrateDir> = dirs.iter().map(|(d, _, _)| d).collect();
    members.push(&root);
    // The bridge as fencelab compiles it: its cdylib is there when a judge
    // was built with it (no cargo runs here for it).
    let bridge = super::crates::write_bridge(scratch)?;
    let library = scratch.cdylib(&bridge);
    let library = library.exists().then_some(library);
    if library.is_some() {
        members.push(&bridge);
    }
    scratch.touch(&members);
    let pin = scratch.pin(&lock, &members)?;
    drop(lock);
    let mut hosting: Vec<Hosting> = errors
        .into_iter()
        .map(|e| Hosting::Unviable {
            errors: e.unwrap_or_default(),
        })
        .collect();
    let expected: Vec<Expected<'_>> = dirs
        .iter()
        .map(|(dir, hosts, build)| Expected {
            script: scratch.dir(dir).join(SERVER_FILE),
            build,
            // As the table holds them: each once, in order.
            keys: hosts.iter().fold(Vec::new(), |mut keys, &i| {
                let key = key_of(&implementations[i].source);
                if !keys.contains(&key) {
                    keys.push(key);
                }
                keys
            }),
        })
        .collect();
    identify_once(&python, &expected)?;
    for (dir, hosts, _) in &dirs {
        let script = scratch.dir(dir).join(SERVER_FILE);
        for &i in hosts {
            hosting[i] = Hosting::Hosted(Host {
                program: script.clone(),
                key: key_of(&implementations[i].source),
                shown: None,
            });
        }
    }
    // A learner's or submissions' modules are imported once before any
    // trial, as a Rust server's constructors run once (`identity::check_server`).
    if import_first {
        let hosted: Vec<(usize, &Host)> = hosting
            .iter()
            .enumerate()
            .filter_map(|(i, h)| match h {
                Hosting::Hosted(host) => Some((i, host)),
                Hosting::Unviable { .. } => None,
            })
            .collect();
        let asked: Vec<(&Path, &str)> = hosted
            .iter()
            .map(|(_, h)| (h.program.as_path(), h.key.as_str()))
            .collect();
        let unviable: Vec<(usize, String)> = imports::import_errors(&asked)?
            .into_iter()
            .zip(&hosted)
            .filter_map(|(error, (i, _))| error.map(|e| (*i, e)))
            .collect();
        for (i, errors) in unviable {
            hosting[i] = Hosting::Unviable { errors };
        }
    }
    Ok(Hosted {
        hosting,
        pin: Some(pin),
        forking: Some(Forking {
            root: scratch.dir(&root).join(FORKING_FILE),
            library,
        }),
    })
}

/// Builds fencelab's judge (and so the bridge's cdylib, `Hosted::library`)
/// where that cdylib is not built yet and the runner would fork the servers
/// of a learner's Python tests (the cage has namespaces): once per bridge,
/// as a Python implementation's `check` or `grade` builds it. Nothing
/// fails here: without it, those servers start afresh.
pub(crate) fn build_library(
    scratch: &Scratch,
    servers: Servers,
    detail: Option<&super::cargo::Detail>,
) {
    if !crate::bridge::sandbox::Layers::probe().namespaces {
        return;
    }
    let built = scratch
        .lock()
        .and_then(|_lock| super::crates::write_bridge(scratch));
    if built.is_ok_and(|bridge| scratch.cdylib(&bridge).exists()) {
        return;
    }
    let suite = SuiteFiles::builtin();
    let plan = super::builder::Plan {
        suite: &suite,
        implementations: &[],
        time_limit: None,
        servers,
        judge_caged: false,
        detail,
    };
    let _ = super::builder::build(scratch, &plan);
}

/// The interpreter's identity: its path, size, modification time and
/// inode (what the caches of its answers are keyed by).
fn fingerprint(python: &Interpreter) -> String {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(&python.executable).map_or_else(
        |_| "-".to_string(),
        |m| format!("{} {}.{} {}", m.len(), m.mtime(), m.mtime_nsec(), m.ino()),
    );
    format!("{} {meta}", python.executable.display())
}

/// How many answers of [`compile_errors_kept`] the scratch workspace keeps
/// (the oldest go beyond it).
const COMPILED_KEPT: usize = 256;

/// [`compile_errors`], kept in the scratch workspace (`pycompiled/`) by the
/// interpreter's identity and the sources, as cargo keeps what it built of
/// a Rust crate: a `check` of an unchanged file compiles nothing again.
fn compile_errors_kept(
    scratch: &Scratch,
    python: &Interpreter,
    implementations: &[Implementation],
) -> Result<Vec<Option<String>>, Error> {
    let identity = fingerprint(python);
    let mut parts: Vec<&str> = vec![&identity];
    for implementation in implementations {
        parts.extend([implementation.shown_path.as_str(), &implementation.source]);
    }
    let dir = scratch.root.join("pycompiled");
    let file = dir.join(hash_of(parts));
    if let Some(answers) = std::fs::read_to_string(&file)
        .ok()
        .and_then(|text| serde_json::from_str::<Vec<Option<String>>>(&text).ok())
        .filter(|answers| answers.len() == implementations.len())
    {
        return Ok(answers);
    }
    let answers = compile_errors(python, implementations)?;
    // At best: an answer that cannot be kept is asked again next time.
    if std::fs::create_dir_all(&dir).is_ok() {
        let mut kept: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
                    .collect()
            })
            .unwrap_or_default();
        if kept.len() >= COMPILED_KEPT {
            kept.sort();
            for (_, old) in &kept[..kept.len() + 1 - COMPILED_KEPT] {
                let _ = std::fs::remove_file(old);
            }
        }
        if let Ok(mut temp) = tempfile::NamedTempFile::new_in(&dir) {
            use std::io::Write;
            let text = serde_json::to_string(&answers).expect("JSON");
            if temp.write_all(text.as_bytes()).is_ok() {
                let _ = temp.persist(&file);
            }
        }
    }
    Ok(answers)
}

/// Python's own message for each source that does not compile (`None` for
/// one that does), asked of one interpreter for all of them.
fn compile_errors(
    python: &Interpreter,
    implementations: &[Implementation],
) -> Result<Vec<Option<String>>, Error> {
    let dir = tempfile::tempdir()
        .map_err(|e| Error::io("create a directory in", &std::env::temp_dir(), e))?;
    let listing = dir.path().join("sources.json");
    let sources: Vec<serde_json::Value> = implementations
        .iter()
        .map(|i| serde_json::json!({ "shown": i.shown_path, "source": i.source }))
        .collect();
    std::fs::write(&listing, serde_json::to_string(&sources).expect("JSON"))
        .map_err(|e| Error::io("write", &listing, e))?;
    let mut command = Command::new(&python.executable);
    command
        .args(["-I", "-S", "-c", server(), "--check"])
        .arg(&listing)
        .current_dir(dir.path())
        .env_clear();
    let limits = Limits {
        time: Some(Duration::from_secs(120)),
        output_cap: 16 * 1024 * 1024,
        file_size: Some(1024 * 1024),
        cage: None,
        space: None,
        stop: None,
    };
    let finished = process::run(command, dir.path(), &limits).map_err(|e| {
        Error::environment(format!("cannot run {}: {e}", python.executable.display()))
    })?;
    let answers: Option<Vec<Option<String>>> = serde_json::from_str(finished.stdout.trim()).ok();
    match answers {
        Some(answers) if answers.len() == implementations.len() => Ok(answers),
        _ => Err(Error::internal(format!(
            "Python could not say which implementations compile: {}",
            finished.stderr.trim()
        ))),
    }
}

/// Writes the server directory hosting `hosts`; returns it and its build id.
fn write_server(
    scratch: &Scratch,
    python: &Interpreter,
    implementations: &[Implementation],
    hosts: &[usize],
) -> Result<(CrateDir, String), Error> {
    let mut seen: Vec<String> = Vec::new();
    let mut impls = Vec::new();
    let mut files = Vec::new();
    for &i in hosts {
        let key = key_of(&implementations[i].source);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key.clone());
        impls.push(serde_json::json!({ "key": key, "shown": implementations[i].shown_path }));
        files.push((
            format!("impls/{key}/lease.py"),
            implementations[i].source.clone(),
        ));
    }
    let build = hash_of(
        impls
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
    );
    let table = serde_json::json!({ "build": build, "impls": impls });
    let reads: String = python
        .reads
        .iter()
        .map(|p| format!("{}\n", p.to_string_lossy()))
        .collect();
    files.push(script(python, SERVER_FILE, server()));
    files.push(("hosted.json".to_string(), table.to_string()));
    files.push(("reads".to_string(), reads));
    let dir = scratch.write_crate("pyserver", &files)?;
    executable(scratch, &dir, &[SERVER_FILE])?;
    Ok((dir, build))
}

/// Writes the root's directory: the forking script, and the server it
/// compiles once for every forking server (the same file as in each
/// server's directory), nothing of any implementation.
fn write_root(scratch: &Scratch, python: &Interpreter) -> Result<CrateDir, Error> {
    let files = [
        script(python, FORKING_FILE, FORKING),
        script(python, SERVER_FILE, server()),
    ];
    let dir = scratch.write_crate("pyroot", &files)?;
    executable(scratch, &dir, &[FORKING_FILE, SERVER_FILE])?;
    Ok(dir)
}

/// A script of fencelab's as written for `python`: `name` and its text.
fn script(python: &Interpreter, name: &str, text: &str) -> (String, String) {
    // -I: no PYTHON* variables, no user site, not the working directory on
    // sys.path; -u: what it prints reaches the judge at once (before an
    // os._exit, say); -S: no site module (faster, and nothing installed).
    let text = format!("#!{} -IuS\n{text}", python.executable.to_string_lossy());
    (name.to_string(), text)
}

/// Makes `files` of `dir` executable.
fn executable(scratch: &Scratch, dir: &CrateDir, files: &[&str]) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    for file in files {
        let script = scratch.dir(dir).join(file);
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io("make executable", &script, e))?;
    }
    Ok(())
}

/// The file in a server's directory saying which interpreter ran its
/// `--identify` and found it right (its directory is named by its
/// contents, so once is enough for that interpreter).
const IDENTIFIED_FILE: &str = "identified";

/// One server to identify: its script, the build it must say and the keys
/// it must host, in order.
struct Expected<'a> {
    script: PathBuf,
    build: &'a str,
    keys: Vec<String>,
}

/// [`identify`], once per server directory and interpreter: the servers
/// whose directory has no marker for `python` yet, all at once.
fn identify_once(python: &Interpreter, servers: &[Expected<'_>]) -> Result<(), Error> {
    let identity = fingerprint(python);
    let marker = |e: &Expected<'_>| e.script.with_file_name(IDENTIFIED_FILE);
    let unknown: Vec<&Expected<'_>> = servers
        .iter()
        .filter(|e| !std::fs::read_to_string(marker(e)).is_ok_and(|said| said == identity))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    identify(&unknown)?;
    for expected in unknown {
        // At best: a marker that cannot be written means asking again next time.
        let _ = std::fs::write(marker(expected), &identity);
    }
    Ok(())
}

/// Each server must say it is this build and hosts exactly its keys: the
/// first one's script runs (`--identify DIR...`), and says so of every
/// directory, whose server must be that very file.
fn identify(servers: &[&Expected<'_>]) -> Result<(), Error> {
    let dir = tempfile::tempdir()
        .map_err(|e| Error::io("create a directory in", &std::env::temp_dir(), e))?;
    let dirs: Vec<&Path> = servers
        .iter()
        .map(|e| e.script.parent().unwrap_or(Path::new("/")))
        .collect();
    let mut command = Command::new(&servers[0].script);
    command
        .arg("--identify")
        .args(&dirs)
        .current_dir(dir.path())
        .env_clear();
    let limits = Limits {
        time: Some(Duration::from_secs(30 + servers.len() as u64 / 10)),
        output_cap: 1024 * 1024 + 1024 * servers.len(),
        file_size: Some(1024 * 1024),
        cage: None,
        space: None,
        stop: None,
    };
    let finished = process::run(command, dir.path(), &limits)
        .map_err(|e| Error::environment(format!("cannot run the Python server: {e}")))?;
    #[derive(serde::Deserialize)]
    struct Identity {
        dir: PathBuf,
        same: bool,
        build: String,
        impls: Vec<Key>,
    }
    #[derive(serde::Deserialize)]
    struct Key {
        key: String,
    }
    let said: Vec<Option<Identity>> = finished
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).ok())
        .collect();
    let right = said.len() == servers.len()
        && said
            .iter()
            .zip(servers.iter().zip(&dirs))
            .all(|(id, (e, dir))| {
                id.as_ref().is_some_and(|id| {
                    id.same
                        && id.dir == *dir
                        && id.build == e.build
                        && id.impls.iter().map(|k| &k.key).eq(e.keys.iter())
                })
            });
    match right {
        true => Ok(()),
        false => Err(Error::internal(format!(
            "the Python server did not say it hosts this run's implementations: {} {}",
            finished.stdout.trim(),
            finished.stderr.trim()
        ))
        .with_next("run again; if it happens again, report it with the command you ran")),
    }
}

/// The judge of a learner's own Python tests, as shipped: it collects and
/// runs the tests of one file (`python/fencelab_tests.py`).
pub(crate) const RUNNER: &str = include_str!("../../../python/fencelab_tests.py");
/// The scratch crate a learner's Python tests' judge is written to
/// (`pyjudge-<hash>`; `outcome::failure_text` leaves its path out).
pub(crate) const JUDGE_CRATE: &str = "pyjudge";
/// The file name the runner and the cage recognise a Python judge by.
pub(crate) const RUNNER_FILE: &str = "fencelab_tests.py";
/// The lab's API as those tests import it: every call sent to the
/// implementation's server (`python/lease_proxy.py`, written as `api/lease.py`).
use wire::proxy;
/// What the runner prints before the message of a file it cannot collect.
const UNCOLLECTABLE: &str = "fencelab-tests: cannot collect: ";

/// Whether a suite is a learner's Python tests: its root file says.
pub(crate) fn is_python_suite(suite: &SuiteFiles) -> bool {
    is_python_path(&suite.root)
}

/// A learner's Python tests made into a judge, or why they cannot be.
#[derive(Debug)]
pub(crate) enum Judge {
    /// The runner (a program taking libtest's `--exact NAME`), the tests it
    /// collected, and the pin that keeps its directory.
    Ready {
        program: PathBuf,
        tests: Vec<SuiteTest>,
        pin: Pin,
    },
    /// The file does not compile, or raised while it was imported: Python's
    /// message, with the file as the learner named it.
    Unviable { errors: String },
}

/// The module name a learner's test file is imported under: its own stem
/// when that is a plain identifier other than `lease`.
fn module_name(file: &str) -> String {
    let stem = file.strip_suffix(".py").unwrap_or(file);
    let plain = stem
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain && stem != "lease" && stem != RUNNER_FILE.trim_end_matches(".py") {
        stem.to_string()
    } else {
        "learner_tests".to_string()
    }
}

/// Writes the judge of `suite` (a learner's Python test file: its root is
/// the path shown to the learner) into the scratch workspace, pins it, asks
/// it who it is and, caged, which tests it collects.
pub(crate) fn judge(scratch: &Scratch, suite: &SuiteFiles) -> Result<Judge, Error> {
    let python = interpreter()?;
    let source = suite
        .files
        .iter()
        .find(|(path, _)| *path == suite.root)
        .map(|(_, text)| text.clone())
        .unwrap_or_default();
    let file = Path::new(&suite.root)
        .file_name()
        .map_or("tests.py".into(), |n| n.to_string_lossy().into_owned());
    let build = hash_of([RUNNER, proxy(), suite.root.as_str(), source.as_str()]);
    let info = serde_json::json!({
        "build": build,
        "module": module_name(&file),
        "file": file,
        "shown": suite.root,
    });
    let reads: String = python
        .reads
        .iter()
        .map(|p| format!("{}\n", p.to_string_lossy()))
        .collect();
    let files = vec![
        (
            RUNNER_FILE.to_string(),
            format!("#!{} -IuS\n{RUNNER}", python.executable.to_string_lossy()),
        ),
        ("api/lease.py".to_string(), proxy().to_string()),
        (format!("mine/{file}"), source),
        ("judge.json".to_string(), info.to_string()),
        ("reads".to_string(), reads),
    ];
    let lock = scratch.lock()?;
    let dir = scratch.write_crate(JUDGE_CRATE, &files)?;
    scratch.touch(&[&dir]);
    let pin = scratch.pin(&lock, &[&dir])?;
    drop(lock);
    let program = scratch.dir(&dir).join(RUNNER_FILE);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io("make executable", &program, e))?;
    let said = ask_judge(&program, &["--identify"], false)?;
    let identity: Option<serde_json::Value> = serde_json::from_str(said.stdout.trim()).ok();
    if identity.as_ref().and_then(|v| v["build"].as_str()) != Some(build.as_str()) {
        return Err(Error::internal(format!(
            "the judge of the Python tests did not say it was written for them: {} {}",
            said.stdout.trim(),
            said.stderr.trim()
        ))
        .with_next("run again; if it happens again, report it with the command you ran"));
    }
    // Collecting imports the learner's file: its code runs, so in the cage.
    let listed = ask_judge(&program, &["--list"], true)?;
    if let Some(message) = listed
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix(UNCOLLECTABLE))
    {
        let errors: String = serde_json::from_str(message).unwrap_or_else(|_| message.to_string());
        return Ok(Judge::Unviable { errors });
    }
    if listed.timed_out() || listed.status.is_none_or(|s| !s.success()) {
        let said = [listed.stdout.trim(), listed.stderr.trim()].join("\n");
        return Ok(Judge::Unviable {
            errors: format!(
                "{}: collecting its tests did not end well: {}",
                suite.root,
                if listed.timed_out() {
                    "it took longer than 30 s".to_string()
                } else {
                    said.trim().to_string()
                }
            ),
        });
    }
    let tests = listed
        .stdout
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(crate::lab::suite::test_named)
        .collect();
    Ok(Judge::Ready {
        program,
        tests,
        pin,
    })
}

/// Runs the Python judge `program` with `args` (at most 30 s; in the cage of
/// an untrusted judge when `caged`).
fn ask_judge(program: &Path, args: &[&str], caged: bool) -> Result<process::Finished, Error> {
    let dir = tempfile::tempdir()
        .map_err(|e| Error::io("create a directory in", &std::env::temp_dir(), e))?;
    let cage = caged.then(|| Cage::new_reading(dir.path(), program, &[], &judge_reads(program)));
    let mut command = Command::new(program);
    command.args(args).current_dir(dir.path()).env_clear();
    let limits = Limits {
        time: Some(Duration::from_secs(30)),
        output_cap: 1024 * 1024,
        file_size: Some(1024 * 1024),
        cage: cage.as_ref().map(Cage::plan),
        ..Default::default()
    };
    process::run(command, dir.path(), &limits).map_err(|e| {
        Error::environment(format!("cannot run {}: {e}", program.display()))
            .with_next("run again; if it happens again, report it with the command you ran")
    })
}

/// What the cage of a Python judge (`fencelab_tests.py`) reads besides the
/// script: the interpreter's directories (listed in `reads` beside it) and
/// its own directory (the learner's file, the lab's API), nothing of any
/// implementation. Nothing for a Rust judge.
pub(crate) fn judge_reads(judge: &Path) -> Vec<PathBuf> {
    if judge.file_name().and_then(|n| n.to_str()) != Some(RUNNER_FILE) {
        return Vec::new();
    }
    let dir = judge.parent().unwrap_or(Path::new("."));
    let mut reads: Vec<PathBuf> = std::fs::read_to_string(dir.join("reads"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .collect();
    reads.push(dir.to_path_buf());
    reads
}

/// The forking servers of a run (`bridge::zygote`): one per Python
/// implementation whose trials the judge starts the server of, forked from
/// the run's root interpreter on its first trial (the root, started once
/// per run, imported what each needs and compiled the server) and ended
/// after its last (or with the run),
/// each handing every trial's judge a connection of its own. Where the
/// runner starts the servers itself (fencelab's own implementations, judged
/// by a learner's tests), it asks on that connection itself, for the cage it
/// gives those (`trusted`).
pub(crate) struct Zygotes {
    /// Per server program and key: how many trials have yet to ask.
    waiting: Mutex<HashMap<(PathBuf, String), usize>>,
    /// The servers running, shared with the trials that use them.
    running: Mutex<HashMap<(PathBuf, String), Arc<Zygote>>>,
    /// The root's script (`Forking::root`), where the servers fork.
    root_script: Option<PathBuf>,
    /// The bridge's cdylib (`Forking::library`): each forking server forks
    /// from its loop (`fencelab_forking_loop`) where it is named.
    library: Option<PathBuf>,
    /// The run's root interpreter, started on the first forking server's
    /// start, and shared with them.
    root: Mutex<Option<Arc<Root>>>,
    /// Starts the roots from a thread that lives as long as the run: a root
    /// dies with the thread that started it (its parent-death signal), and
    /// its forking servers with it.
    starter: Mutex<mpsc::Sender<(Command, mpsc::Sender<std::io::Result<Child>>)>>,
    /// Whether they fork the servers of fencelab's own implementations
    /// (`Launch::ByRunner`), caged as the runner cages those.
    trusted: bool,
    /// Whether this run's Python servers are forked at all.
    forks: bool,
}

/// A root interpreter (python/fencelab_forking.py `root`): its process and
/// the runner's end of its control socket, on which one start is asked at a
/// time (the answer, the forking server's pid, is opened as a pidfd before
/// the next: the root collects its ended children only while it answers).
pub(crate) struct Root {
    child: Mutex<Child>,
    control: Mutex<OwnedFd>,
}

/// One forking server: its process (a pidfd, where the kernel has them) and
/// the runner's end of its control socket, on which each trial's connection
/// is sent; and the root it was forked from, which lives as long.
pub(crate) struct Zygote {
    pidfd: Option<OwnedFd>,
    control: OwnedFd,
    _root: Arc<Root>,
}

/// A trial's connection to its forking server: the judge's end (inherited as
/// `ZYGOTE_ENV` says) and what keeps the server running meanwhile.
pub(crate) struct Handed {
    pub fd: OwnedFd,
    _server: Arc<Zygote>,
}

impl Zygotes {
    /// The forking servers the trials of `hosts` (one each) may use: Python
    /// implementations, where the cage has a PID namespace (nothing a child
    /// of a judge's starts then outlives its cage). Whose servers the judge
    /// starts (`Launch::ByJudge`), each judge asks for its own; whose the
    /// runner starts (`Launch::ByRunner`), the runner asks, where the
    /// bridge's cdylib (with which a child enters its cage) is built. None
    /// elsewhere, or without `forking`: each server is an interpreter
    /// started afresh, as before.
    pub(crate) fn for_hosts<'a>(
        hosts: impl Iterator<Item = &'a Host>,
        launch: Launch,
        forking: Option<&Forking>,
    ) -> Zygotes {
        let mut waiting: HashMap<(PathBuf, String), usize> = HashMap::new();
        let forks = forking.is_some_and(|f| launch == Launch::ByJudge || f.library.is_some())
            && crate::bridge::sandbox::Layers::probe().namespaces;
        if forks {
            for host in hosts {
                if host.program.file_name().and_then(|n| n.to_str()) == Some(SERVER_FILE) {
                    *waiting
                        .entry((host.program.clone(), host.key.clone()))
                        .or_default() += 1;
                }
            }
        }
        let (tx, rx) = mpsc::channel::<(Command, mpsc::Sender<std::io::Result<Child>>)>();
        if !waiting.is_empty() {
            std::thread::spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            });
        }
        Zygotes {
            waiting: Mutex::new(waiting),
            running: Mutex::new(HashMap::new()),
            root_script: forking.map(|f| f.root.clone()),
            library: forking.and_then(|f| f.library.clone()),
            root: Mutex::new(None),
            starter: Mutex::new(tx),
            trusted: launch == Launch::ByRunner,
            forks,
        }
    }

    /// `host` has one more trial (run again alone): where it has a forking
    /// server, that trial is forked too, from a server started again if
    /// its last trial let it go.
    pub(crate) fn expect_again(&self, host: &Host) {
        if self.forks && host.program.file_name().and_then(|n| n.to_str()) == Some(SERVER_FILE) {
            let id = (host.program.clone(), host.key.clone());
            *self
                .waiting
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(id)
                .or_default() += 1;
        }
    }

    /// A connection for one trial of `host`'s, starting its forking server
    /// on its first; None where the host has none (see `for_trials`).
    pub(crate) fn hand(&self, host: &Host) -> Result<Option<Handed>, Error> {
        let id = (host.program.clone(), host.key.clone());
        let last = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            let Some(left) = waiting.get_mut(&id) else {
                return Ok(None);
            };
            *left -= 1;
            let last = *left == 0;
            if last {
                waiting.remove(&id);
            }
            last
        };
        let server = {
            let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            let server = match running.get(&id) {
                Some(server) => server.clone(),
                None => {
                    let server = Arc::new(self.start(host)?);
                    running.insert(id.clone(), server.clone());
                    server
                }
            };
            // After its last trial, the server ends with that trial.
            if last {
                running.remove(&id);
            }
            server
        };
        let (judge, zygote) = crate::bridge::zygote::seqpacket_pair()
            .map_err(|e| cage_error("a connection to the forking Python server", e))?;
        crate::bridge::zygote::send_with(
            server.control.as_raw_fd(),
            b"trial",
            &[zygote.as_raw_fd()],
        )
        .map_err(|e| cage_error("a connection to the forking Python server", e))?;
        Ok(Some(Handed {
            fd: judge,
            _server: server,
        }))
    }

    /// Forks `host`'s forking server from the run's root, starting the root
    /// on the first.
    fn start(&self, host: &Host) -> Result<Zygote, Error> {
        let failed = |e: std::io::Error| cage_error("the forking Python server", e);
        let root = {
            let mut root = self.root.lock().unwrap_or_else(|e| e.into_inner());
            match &*root {
                Some(root) => root.clone(),
                None => {
                    let script = self
                        .root_script
                        .as_deref()
                        .ok_or_else(|| failed(std::io::Error::other("no root to fork it from")))?;
                    root.insert(Arc::new(self.start_root(script)?)).clone()
                }
            }
        };
        let (ours, theirs) = crate::bridge::zygote::seqpacket_pair().map_err(failed)?;
        let control = root.control.lock().unwrap_or_else(|e| e.into_inner());
        let asked = serde_json::json!({
            "key": host.key,
            "server": host.program,
            "library": self.library,
        });
        crate::bridge::zygote::send_with(
            control.as_raw_fd(),
            asked.to_string().as_bytes(),
            &[theirs.as_raw_fd()],
        )
        .map_err(failed)?;
        drop(theirs);
        let answer = crate::bridge::zygote::receive(control.as_raw_fd(), Some(ROOT_ANSWERS))
            .unwrap_or_default();
        let pid = serde_json::from_slice::<serde_json::Value>(&answer)
            .ok()
            .and_then(|v| v.get("pid").and_then(serde_json::Value::as_i64))
            .and_then(|pid| libc::pid_t::try_from(pid).ok())
            .ok_or_else(|| {
                failed(std::io::Error::other(format!(
                    "its root answered {:?}",
                    String::from_utf8_lossy(&answer)
                )))
            })?;
        // Opened while the root waits for the next start, before which it
        // collects none of its children: the pid is still this server's.
        // SAFETY: a system call with plain integers.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        drop(control);
        Ok(Zygote {
            // SAFETY: a descriptor the kernel just made for us.
            pidfd: (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) }),
            control: ours,
            _root: root,
        })
    }

    /// Starts the run's root interpreter, `forking` (`Forking::root`).
    fn start_root(&self, forking: &Path) -> Result<Root, Error> {
        let (ours, theirs) = crate::bridge::zygote::seqpacket_pair()
            .map_err(|e| cage_error("a control socket for the forking Python server", e))?;
        let mut command = Command::new(forking);
        command
            .arg("root")
            .arg(match self.trusted {
                true => "--forking-trusted",
                false => "--forking",
            })
            .env_clear()
            .envs(super::process::passed_on())
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let fd = theirs.as_raw_fd();
        // What a judge's limits give the server it starts: no core dump,
        // FILE_SIZE per file; the runner's own servers (`trusted`) have no
        // FILE_SIZE, as `process::start_light_serving` starts them. The
        // forking servers the root forks, and their children, inherit them.
        let limits = [
            Some((libc::RLIMIT_CORE, 0)),
            (!self.trusted).then_some((libc::RLIMIT_FSIZE, process::FILE_SIZE)),
        ];
        // SAFETY: only system calls between fork and exec: the control
        // socket becomes fd 3 (LISTENER_FD), inherited.
        unsafe {
            command.pre_exec(move || {
                for (resource, value) in limits.into_iter().flatten() {
                    let limit = libc::rlimit {
                        rlim_cur: value,
                        rlim_max: value,
                    };
                    libc::setrlimit(resource, &limit);
                }
                let target = crate::bridge::server::LISTENER_FD;
                let ok = if fd == target {
                    libc::fcntl(fd, libc::F_SETFD, 0) != -1
                } else {
                    libc::dup2(fd, target) != -1
                };
                if ok {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        let (reply, spawned) = mpsc::channel();
        let sent = self
            .starter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send((command, reply));
        let child = sent
            .ok()
            .and_then(|()| spawned.recv().ok())
            .unwrap_or_else(|| Err(std::io::Error::other("its starter is gone")))
            .map_err(|e| {
                Error::environment(format!("cannot start {}: {e}", forking.display())).with_next(
                    "run again (fencelab writes again what is missing); if it happens \
                         again, report it with the command you ran",
                )
            })?;
        drop(theirs);
        Ok(Root {
            child: Mutex::new(child),
            control: Mutex::new(ours),
        })
    }
}

/// How long a root may take to fork a forking server.
const ROOT_ANSWERS: Duration = Duration::from_secs(30);

impl Drop for Root {
    /// Kills it (and so every forking server it forked, and every cage
    /// those still watch: their parent-death signals) and collects it.
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Zygote {
    /// Kills it (and so every cage it still watches: their init's
    /// parent-death signal), and waits until it has ended (its root
    /// collects it). Without a pidfd, closing its control socket ends it.
    fn drop(&mut self) {
        let Some(pidfd) = &self.pidfd else { return };
        // SAFETY: system calls on a pidfd of ours and a pollfd of ours.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                pidfd.as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            );
            let mut poll = libc::pollfd {
                fd: pidfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            while libc::poll(&mut poll, 1, 5_000) < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
            }
        }
    }
}

impl Handed {
    /// Hands the connection down to the judge `spawn` starts: named in
    /// `ZYGOTE_ENV`; the descriptor returned is to be inherited by the judge
    /// alone (`process::run_judge` clears its close-on-exec flag
    /// in the judge's clone only), so the runner starts it without a fork.
    pub(crate) fn pass_to(&self, spawn: &mut process::Spawn) -> std::os::fd::RawFd {
        let fd = self.fd.as_raw_fd();
        // The pair's maker, this process, is what the judge finds as its peer.
        spawn.env.push((
            crate::bridge::zygote::ZYGOTE_ENV.into(),
            format!("{fd} {}", std::process::id()).into(),
        ));
        fd
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::sandbox::{Layers, Need};
    use crate::engine::builder::{self, Built, Plan};
    use crate::engine::policy::{Policy, Trust};
    use crate::engine::runner::{Runner, Trial};
    use crate::lab::suite::SuiteFiles;

    /// Held by each test here that starts a root: a root's command line is
    /// the same for every run of one scratch workspace, so one test's look
    /// for what its run left running would see another's roots.
    static ROOTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The processes whose command line holds `text`.
    fn running(text: &str) -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(text))
            .collect()
    }

    /// Runs `tests` on `host` (60 s each), one trial each, and asserts that
    /// every one passed.
    fn passes_on(runner: &Runner, host: &Host, tests: &[&str]) {
        let trials: Vec<Trial> = tests
            .iter()
            .map(|test| Trial {
                host: host.clone(),
                test: test.to_string(),
                limit: Duration::from_secs(60),
            })
            .collect();
        let mut outcomes = Vec::new();
        runner
            .run(&trials, |i, result| outcomes.push((i, result.outcome)))
            .unwrap();
        assert_eq!(outcomes.len(), tests.len());
        for (i, outcome) in &outcomes {
            assert!(outcome.passed(), "{}: {outcome:?}", trials[*i].test);
        }
    }

    /// Whether this process ignores SIGINT (a shell's background job does),
    /// as every process it starts then does: an interpreter started afresh
    /// keeps it ignored rather than install its own handler.
    fn sigint_ignored() -> bool {
        // SAFETY: reads this process's disposition into a struct of ours.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGINT, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
        }
    }

    #[test]
    fn a_python_trial_is_served_by_a_caged_fork_that_holds_nothing_of_the_forking_server() {
        if !Layers::test_needs(&[Need::Namespaces]) {
            return;
        }
        interpreter().expect("python3 3.10+ (.ci/run checks it first)");
        let _roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let scratch = Scratch::locate(&root.join("target")).expect("the scratch workspace");
        // The reference, refusing to be served unless it was forked from the
        // forking server, holding no capability (a fork that is never
        // executed keeps what its user namespace gave it, unless dropped),
        // with nothing of it open (only the standard streams
        // and the listening socket), in the environment its judge gave it,
        // with the signal handlers of an interpreter started afresh here (none
        // of the forking server's, none left at the defaults the fork set).
        let checks = format!(
            "if _sys.orig_argv[-1] != '--forking':\n    raise SystemExit('started afresh')\n\
             if _os.environ.get('TMPDIR') != _os.getcwd():\n    raise SystemExit('another environment')\n\
             if _signal.getsignal(_signal.SIGCHLD) != _signal.SIG_DFL:\n    raise SystemExit('a SIGCHLD handler')\n\
             if _sys._getframe(1).f_code.co_filename != _sys.argv[0]:\n    raise SystemExit('the server named after another file')\n\
             import ctypes as _ctypes\n\
             _libc = _ctypes.CDLL(None)\n\
             _sets = (_ctypes.c_uint32 * 6)()\n\
             _libc.capget((_ctypes.c_uint32 * 2)(0x20080522, 0), _sets)\n\
             if any(_sets):\n    raise SystemExit(f'a capability: {{list(_sets)}}')\n\
             if any(_libc.prctl(23, _cap, 0, 0, 0) == 1 for _cap in range(64)):\n    raise SystemExit('a capability in the bounding set')\n\
             if _ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) != 1:\n    raise SystemExit('not dumpable: its judge cannot read its descriptors')\n\
             _old = _ctypes.create_string_buffer(256)\n\
             _ctypes.CDLL(None).sigaction(_signal.SIGINT, None, _old)\n\
             _handler = int.from_bytes(_old.raw[:8], 'little')\n\
             _python = _signal.getsignal(_signal.SIGINT)\n\
             if not ((_handler == 1 and _python == _signal.SIG_IGN) if {} else \
                 (_handler not in (0, 1) and _python is _signal.default_int_handler)):\n    \
                 raise SystemExit('SIGINT unlike an interpreter started afresh')\n\
             for _fd in range(4, 4096):\n    \
                 try:\n        _os.fstat(_fd)\n    except OSError:\n        continue\n    \
                 raise SystemExit(f'descriptor {{_fd}} is open')\n",
            if sigint_ignored() { "True" } else { "False" },
        );
        // Its import once before the trials (`imports`) is no trial: the
        // checks are for the trial's server.
        let checks: String = checks.lines().map(|l| format!("    {l}\n")).collect();
        let source = format!(
            "{}\nimport os as _os, sys as _sys, signal as _signal\n\
             if _sys.argv[1:2] != ['--import']:\n{checks}",
            crate::lab::python::REFERENCE,
        );
        let implementation = Implementation {
            shown_path: "forked.py".into(),
            source,
        };
        let policy = Policy::of(Trust::Submissions);
        // The bridge's cdylib, so that the runner can name it.
        build_library(&scratch, policy.servers, None);
        let hosted = host(
            &scratch,
            std::slice::from_ref(&implementation),
            policy.servers,
            policy.import_first,
        )
        .unwrap();
        let Hosting::Hosted(host) = &hosted.hosting[0] else {
            panic!("it compiles: {:?}", hosted.hosting[0]);
        };
        let plan = Plan {
            suite: &SuiteFiles::builtin(),
            implementations: &[],
            time_limit: None,
            servers: policy.servers,
            judge_caged: policy.judge_caged,
            detail: None,
        };
        let Built::Done(build) = builder::build(&scratch, &plan).unwrap() else {
            panic!("the suite builds");
        };
        let tests = [
            "step1::creates_the_six_columns",
            "step2::new_job_returns_true",
            "step3::fresh_job_reads_the_defaults",
            // Its four claimers are judges run again in processes of their
            // own: each is served by a fork too (an interpreter started
            // afresh refuses), and none holds the trial's connection.
            "step4::claims_race_across_processes",
        ];
        let mut runner = Runner::new(build.judge.clone(), 2, &policy);
        // Forked by the bridge's loop where the runner names the bridge's
        // cdylib (built with the judge above), and by the forking server's
        // own loop in Python where it names none.
        let without = hosted
            .forking
            .clone()
            .map(|f| Forking { library: None, ..f });
        assert!(hosted.forking.as_ref().is_some_and(|f| f.library.is_some()));
        for forking in [hosted.forking.clone(), without] {
            runner.forking = forking;
            passes_on(&runner, host, &tests);
        }
        // Its forking server ended with its last trial, and the root it was
        // forked from with the run (both run the root's command line).
        let root = hosted.forking.as_ref().expect("forked").root.display();
        let forking = format!("{root} root --forking");
        assert!(running(&forking).is_empty(), "{:?}", running(&forking));
    }

    /// A learner's Python tests talk to fencelab's own implementations
    /// through servers the runner forks itself (where the bridge's cdylib is
    /// built): each in the cage the runner gives such a server (the
    /// implementation cannot be made to write outside the trial), holding
    /// nothing of the forking server's, and gone after its last trial.
    #[test]
    fn a_learners_python_tests_are_served_by_caged_forks_of_the_runners() {
        if !Layers::test_needs(&[Need::Namespaces, Need::Landlock]) {
            return;
        }
        interpreter().expect("python3 3.10+ (.ci/run checks it first)");
        let _roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let scratch = Scratch::locate(&root.join("target")).expect("the scratch workspace");
        let policy = Policy::of(Trust::LearnerTests);
        // fencelab's judge, built with the bridge: its cdylib is then there.
        let plan = Plan {
            suite: &SuiteFiles::builtin(),
            implementations: &[],
            time_limit: None,
            servers: policy.servers,
            judge_caged: false,
            detail: None,
        };
        let Built::Done(_build) = builder::build(&scratch, &plan).unwrap() else {
            panic!("the suite builds");
        };
        // The reference, refusing to serve unless the runner's forking
        // server forked it, with nothing of that server's open, in the
        // environment and with the file size limit a server the runner
        // starts has (the runner's own: `start_light_serving` sets none).
        // SAFETY: fills a struct of ours.
        let mut fsize: libc::rlimit = unsafe { std::mem::zeroed() };
        unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut fsize) };
        let python_limit = |v: libc::rlim_t| match v {
            libc::RLIM_INFINITY => -1,
            v => v as i128,
        };
        let source = format!(
            "{}\n\
             import os as _os, sys as _sys, resource as _resource\n\
             if _sys.orig_argv[-1] != '--forking-trusted':\n    raise SystemExit('not forked')\n\
             if dict(_os.environ) != {{'RUST_BACKTRACE': '0'}}:\n    raise SystemExit('another environment')\n\
             if _resource.getrlimit(_resource.RLIMIT_FSIZE) != ({}, {}):\n    raise SystemExit('another file size limit')\n\
             for _fd in range(4, 4096):\n    \
                 try:\n        _os.fstat(_fd)\n    except OSError:\n        continue\n    \
                 raise SystemExit(f'descriptor {{_fd}} is open')\n",
            crate::lab::python::REFERENCE,
            python_limit(fsize.rlim_cur),
            python_limit(fsize.rlim_max),
        );
        let implementation = Implementation {
            shown_path: "lease.py".into(),
            source,
        };
        let hosted = host(
            &scratch,
            std::slice::from_ref(&implementation),
            policy.servers,
            policy.import_first,
        )
        .unwrap();
        let forking = hosted.forking.as_ref().expect("a root to fork from");
        assert!(forking.library.is_some(), "the bridge's cdylib is built");
        let Hosting::Hosted(host) = &hosted.hosting[0] else {
            panic!("it compiles: {:?}", hosted.hosting[0]);
        };
        let outside = tempfile::tempdir().unwrap();
        let escape = outside.path().join("escape.db");
        let tests = format!(
            "import lease\n\
             \n\
             def test_served(tmp_path):\n    \
                 db = str(tmp_path / 'jobs.db')\n    \
                 lease.init_db(db)\n    \
                 assert lease.enqueue(db, 'j') is True\n\
             \n\
             def test_has_it_write_outside():\n    \
                 try:\n        lease.init_db({:?})\n    except Exception:\n        return\n    \
                 raise AssertionError('the implementation wrote outside its trial')\n",
            escape.to_str().unwrap()
        );
        let suite = SuiteFiles {
            target: "mine".into(),
            root: "forked_test.py".into(),
            files: vec![("forked_test.py".into(), tests)],
            binding: "import lease".into(),
            builtin: false,
        };
        let Judge::Ready { program, pin, .. } = judge(&scratch, &suite).unwrap() else {
            panic!("the tests are collected");
        };
        let mut runner = Runner::new(program, 2, &policy);
        runner.forking = hosted.forking.clone();
        passes_on(&runner, host, &["test_served", "test_has_it_write_outside"]);
        drop(pin);
        assert!(!escape.exists(), "the implementation wrote {escape:?}");
        let forking = format!("{} root --forking-trusted", forking.root.display());
        assert!(running(&forking).is_empty(), "{:?}", running(&forking));
    }

    /// Two implementations in two server directories (as `grade` hosts
    /// them): their forking servers are forked from one root, started from
    /// a directory of fencelab's own, serve from the bridge's loop (its
    /// cdylib built: the runner names it), and are gone with the run.
    #[test]
    fn a_runs_forking_servers_are_forked_from_one_root() {
        if !Layers::test_needs(&[Need::Namespaces]) {
            return;
        }
        interpreter().expect("python3 3.10+ (.ci/run checks it first)");
        let _roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let scratch = Scratch::locate(&root.join("target")).expect("the scratch workspace");
        let implementations: Vec<Implementation> = ["one.py", "two.py"]
            .iter()
            .map(|shown| Implementation {
                shown_path: shown.to_string(),
                source: crate::lab::python::REFERENCE.into(),
            })
            .collect();
        let policy = Policy::of(Trust::Submissions);
        build_library(&scratch, policy.servers, None);
        let hosted = host(
            &scratch,
            &implementations,
            policy.servers,
            policy.import_first,
        )
        .unwrap();
        let hosts: Vec<Host> = hosted
            .hosting
            .iter()
            .map(|h| match h {
                Hosting::Hosted(host) => host.clone(),
                Hosting::Unviable { errors } => panic!("it compiles: {errors}"),
            })
            .collect();
        assert_ne!(hosts[0].program, hosts[1].program, "a directory each");
        let forking = hosted.forking.as_ref().expect("a root to fork from");
        assert!(!forking.root.starts_with(hosts[0].program.parent().unwrap()));
        // Two trials each: after one of each, both servers still run.
        let zygotes =
            Zygotes::for_hosts(hosts.iter().chain(&hosts), Launch::ByJudge, Some(forking));
        let handed: Vec<Handed> = hosts
            .iter()
            .map(|host| zygotes.hand(host).unwrap().expect("forked"))
            .collect();
        let cmdline = format!("{} root --forking", forking.root.display());
        let root = zygotes
            .root
            .lock()
            .unwrap()
            .clone()
            .expect("a root started");
        let root_pid = root.child.lock().unwrap().id().to_string();
        assert!(handed.iter().all(|h| Arc::ptr_eq(&h._server._root, &root)));
        // The root's forks: the two forking servers, which show the root's
        // command line.
        let forks: Vec<(PathBuf, String)> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read_to_string(e.path().join("stat")).is_ok_and(|stat| {
                    let after = &stat[stat.rfind(')').unwrap() + 2..];
                    after.split(' ').nth(1) == Some(&root_pid)
                })
            })
            .filter_map(|e| Some((e.path(), std::fs::read(e.path().join("cmdline")).ok()?)))
            .map(|(p, c)| (p, String::from_utf8_lossy(&c).replace('\0', " ")))
            .collect();
        assert_eq!(forks.len(), 2, "{forks:?}");
        assert!(forks.iter().all(|(_, c)| c.contains(&cmdline)), "{forks:?}");
        // Each serves from the bridge's loop: its cdylib is loaded (a
        // forking server's loop in Python loads it at its first trial
        // only, and none comes here), and no handler of Python's catches
        // SIGCHLD (that loop's does).
        let library = forking
            .library
            .as_ref()
            .expect("the bridge's cdylib is built");
        let library = library.to_str().unwrap();
        for (proc, _) in &forks {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !std::fs::read_to_string(proc.join("maps")).is_ok_and(|m| m.contains(library)) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{proc:?} never loaded {library}"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            let status = std::fs::read_to_string(proc.join("status")).unwrap();
            let caught = status
                .lines()
                .find_map(|l| l.strip_prefix("SigCgt:"))
                .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
                .unwrap();
            assert_eq!(caught & (1 << (libc::SIGCHLD - 1)), 0, "{proc:?}: {status}");
        }
        drop(root);
        drop(handed);
        drop(zygotes);
        // (Other tests' roots run the same command line meanwhile.)
        let root = PathBuf::from(format!("/proc/{root_pid}"));
        for (proc, _) in forks.iter().chain([&(root, String::new())]) {
            let alive = std::fs::read_to_string(proc.join("stat"))
                .is_ok_and(|stat| !stat[stat.rfind(')').unwrap()..].starts_with(") Z"));
            assert!(!alive, "{proc:?} is still running");
        }
    }

    /// One interpreter identifies every server directory of a run; a
    /// directory whose server is not that file, or whose table says
    /// another build or other keys, is refused.
    #[test]
    fn every_server_is_identified_by_one_interpreter_and_a_stale_one_is_refused() {
        let Ok(python) = interpreter() else {
            eprintln!("no Python here");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, server: &str, build: &str, key: &str| -> PathBuf {
            let here = dir.path().join(name);
            std::fs::create_dir(&here).unwrap();
            let (file, text) = script(&python, SERVER_FILE, server);
            let path = here.join(file);
            std::fs::write(&path, text).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            let table =
                serde_json::json!({ "build": build, "impls": [{ "key": key, "shown": "x.py" }] });
            std::fs::write(here.join("hosted.json"), table.to_string()).unwrap();
            path
        };
        let expected = |script: PathBuf, build: &'static str, key: &str| Expected {
            script,
            build,
            keys: vec![key.to_string()],
        };
        let a = expected(write("a", server(), "b1", "k1"), "b1", "k1");
        let b = expected(write("b", server(), "b2", "k2"), "b2", "k2");
        identify(&[&a, &b]).expect("both are right");
        // Each refused: another server file, another build, other keys.
        let stale = expected(
            write("c", &format!("{}\n# stale\n", server()), "b3", "k3"),
            "b3",
            "k3",
        );
        assert!(identify(&[&a, &stale]).is_err());
        assert!(identify(&[&a, &expected(b.script.clone(), "b9", "k2")]).is_err());
        assert!(identify(&[&a, &expected(b.script.clone(), "b2", "k9")]).is_err());
    }
}
