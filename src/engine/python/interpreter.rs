//! Finding the Python interpreter once per process, and remembering the
//! probe's answer across commands while nothing that chose it changed.

use super::*;

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
