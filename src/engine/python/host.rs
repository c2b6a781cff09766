//! Hosting Python implementations: their sources compiled by Python, the
//! server written beside them, and each server directory identified once.

use super::*;

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
    let bridge = crate::engine::crates::write_bridge(scratch)?;
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
    detail: Option<&crate::engine::cargo::Detail>,
) {
    if !crate::bridge::sandbox::Layers::probe().namespaces {
        return;
    }
    let built = scratch
        .lock()
        .and_then(|_lock| crate::engine::crates::write_bridge(scratch));
    if built.is_ok_and(|bridge| scratch.cdylib(&bridge).exists()) {
        return;
    }
    let suite = SuiteFiles::builtin();
    let plan = crate::engine::builder::Plan {
        suite: &suite,
        implementations: &[],
        time_limit: None,
        servers,
        judge_caged: false,
        detail,
    };
    let _ = crate::engine::builder::build(scratch, &plan);
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
pub(super) fn script(python: &Interpreter, name: &str, text: &str) -> (String, String) {
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
pub(super) struct Expected<'a> {
    pub(super) script: PathBuf,
    pub(super) build: &'a str,
    pub(super) keys: Vec<String>,
}

/// [`identify`], once per server directory and interpreter: the servers
/// whose directory has no marker for `python` yet, all at once.
pub(super) fn identify_once(python: &Interpreter, servers: &[Expected<'_>]) -> Result<(), Error> {
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
pub(super) fn identify(servers: &[&Expected<'_>]) -> Result<(), Error> {
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
