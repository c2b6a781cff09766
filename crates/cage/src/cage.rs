//! The cage builder: what the program may read, write and execute, prepared
//! in the parent as a `Plan` of C strings and descriptors, which the child
//! enters (`contain`) without allocating.

use std::ffi::CString;
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::landlock::{Ruleset, ruleset, scopes_abstract_sockets};
use crate::memory::Memory;
use crate::mounts::{Root, root_plan};
use crate::place::{Place, absolute};
use crate::space::Space;

/// The system's programs and libraries: what any program needs to start.
/// Directories that are symbolic links (`/lib` -> `usr/lib`) are made links.
const SYSTEM: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// Single files of the system a program may read.
const SYSTEM_FILES: [&str; 7] = [
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// What the child does to enter a cage, prepared by the parent: C strings and
/// descriptor numbers only, so that the child allocates nothing.
#[derive(Debug)]
pub struct Plan {
    /// The new root, when namespaces are there.
    pub(crate) root: Option<Root>,
    /// The Landlock ruleset's descriptor, when the kernel has Landlock.
    pub(crate) ruleset: Option<RawFd>,
    /// The `cgroup.procs` of the cage's `Memory`, when it has one.
    pub(crate) cgroup: Option<RawFd>,
    /// The program the cage's last process executes itself, when the caller
    /// knows it (`Cage::executing`): then the init and the program are
    /// clones sharing the watcher's memory, not forks of it (`enter_root`).
    pub(crate) exec: Option<Exec>,
}

impl Plan {
    /// Whether entering it makes namespaces, and so processes: the
    /// process that enters it stays as the cage's watcher (`enter_root`).
    pub fn has_namespaces(&self) -> bool {
        self.root.is_some()
    }
}

/// A program and its command line and environment, as `execve` takes them,
/// prepared by the parent (`Cage::executing`, and the engine's clones).
pub struct Exec {
    pub(crate) program: CString,
    pub(crate) _strings: Vec<CString>,
    /// The addresses of `program`'s and `_strings`' bytes (on the heap, never
    /// moved), each list ended by 0: what execve reads, as plain numbers.
    pub(crate) argv: Vec<usize>,
    pub(crate) envp: Vec<usize>,
}

impl std::fmt::Debug for Exec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Exec({:?}, {} arguments)",
            self.program,
            self.argv.len() - 1
        )
    }
}

impl Exec {
    /// The program's path, its arguments and its environment, each list
    /// ended by a null: valid while this lives.
    fn pointers(
        &self,
    ) -> (
        *const libc::c_char,
        *const *const libc::c_char,
        *const *const libc::c_char,
    ) {
        (
            self.program.as_ptr(),
            self.argv.as_ptr().cast(),
            self.envp.as_ptr().cast(),
        )
    }

    /// Executes the program, with its arguments and environment: returns
    /// only where it could not be, with the errno. System calls only.
    pub fn execute(&self) -> libc::c_int {
        let (program, argv, envp) = self.pointers();
        // SAFETY: the pointers point into strings this `Exec` owns, each list
        // ended by a null (`Exec::new`), alive for the call.
        unsafe { libc::execve(program, argv, envp) };
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    }

    /// `program` run with `args` after it and exactly `env`; None where
    /// one of them holds a NUL byte.
    pub fn new(
        program: &Path,
        args: &[&std::ffi::OsStr],
        env: &[(std::ffi::OsString, std::ffi::OsString)],
    ) -> Option<Exec> {
        let program = CString::new(program.as_os_str().as_bytes()).ok()?;
        let mut strings = Vec::new();
        for arg in args {
            strings.push(CString::new(arg.as_bytes()).ok()?);
        }
        for (key, value) in env {
            let mut pair = key.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            strings.push(CString::new(pair).ok()?);
        }
        let (args_in, env_in) = strings.split_at(args.len());
        let address = |s: &CString| s.as_ptr() as usize;
        let mut argv = vec![address(&program)];
        argv.extend(args_in.iter().map(address));
        argv.push(0);
        let mut envp: Vec<_> = env_in.iter().map(address).collect();
        envp.push(0);
        Some(Exec {
            program,
            _strings: strings,
            argv,
            envp,
        })
    }
}

/// A prepared cage: what the child enters, and the descriptors it refers to,
/// held open by the parent until the child has started.
pub struct Cage {
    plan: Arc<Plan>,
    ruleset: Option<Ruleset>,
    _sources: Vec<OwnedFd>,
}

impl Cage {
    /// A cage for `program`, whose only writable place is `writable` (and
    /// /dev/null), which sees nothing of the machine but the system's
    /// programs and libraries, `program`, `writable` and `also` (a socket to
    /// connect to, say).
    #[cfg(test)] // the engine's cages read: `reading`, `new_reading`
    pub fn new(writable: &Path, program: &Path, also: &[&Path]) -> Cage {
        Cage::build(writable, program, also, &[], true)
    }

    /// The cage of `new`, which also reads (and executes) beneath `reads`:
    /// a Python server's interpreter, its standard library and the one
    /// module it serves.
    pub fn reading(writable: &Path, program: &Path, reads: &[PathBuf]) -> Cage {
        Cage::build(writable, program, &[], reads, true)
    }

    /// The cage of fencelab's own code run beside untrusted code (the
    /// implementations a learner's tests are judged against): Landlock and
    /// the limits, no namespaces (they cost about 5 ms a process, and this
    /// code neither reads nor sends anything it is not asked to).
    #[cfg(test)] // fencelab's own servers are caged by `trusted_reading`
    pub fn trusted(writable: &Path, program: &Path) -> Cage {
        Cage::build(writable, program, &[], &[], false)
    }

    /// The cage of `trusted`, which also reads beneath `reads` (a Python
    /// server's interpreter and the one module it serves).
    pub fn trusted_reading(writable: &Path, program: &Path, reads: &[PathBuf]) -> Cage {
        Cage::build(writable, program, &[], reads, false)
    }

    /// The cage of `new`, which also reads beneath `reads`: a learner's
    /// Python tests' interpreter and their judge's own directory.
    pub fn new_reading(writable: &Path, program: &Path, also: &[&Path], reads: &[PathBuf]) -> Cage {
        Cage::build(writable, program, also, reads, true)
    }

    /// This cage, for a child that joins the trial's `space` first (its
    /// writable place is then the space's tmpfs): Landlock's rules hold for
    /// inodes, and it skips the directory a tmpfs is mounted on, so the
    /// tmpfs's own root gets the trial's rights.
    pub fn within(mut self, space: Option<&Space>) -> Cage {
        if space.is_some_and(|s| s.join.net.is_some()) && scopes_abstract_sockets() {
            let plan = Arc::get_mut(&mut self.plan).expect("within before it is shared");
            if let Some(root) = &mut plan.root {
                root.own_net = false;
            }
        }
        if let Some(space) = space
            && let Ok(root) = space.root.try_clone()
            && let Some(ruleset) = &mut self.ruleset
            && ruleset.allow_all(&root)
        {
            self._sources.push(root);
        }
        self
    }

    /// This cage, with every process of it in `memory` (see `Memory`),
    /// which the caller keeps until the child has started, and removes once
    /// the cage's processes are gone.
    pub fn bounded(mut self, memory: Option<&Memory>) -> Cage {
        if let Some(memory) = memory {
            let plan = Arc::get_mut(&mut self.plan).expect("bounded before it is shared");
            plan.cgroup = Some(memory.procs_fd());
        }
        self
    }

    /// This cage, for a child that ends in executing `program` (an absolute
    /// path) with `args` after it and exactly `env`, as its caller's `execve`
    /// would: `enter`, given a listener, then executes it itself, from a
    /// clone, where the cage has a PID namespace (see `enter_root`), and
    /// returns as before where it has none. Only for a server's `enter`
    /// whose caller goes on to execute that very program.
    pub fn executing(
        mut self,
        program: &Path,
        args: &[&std::ffi::OsStr],
        env: &[(std::ffi::OsString, std::ffi::OsString)],
    ) -> Cage {
        if program.is_absolute() {
            let plan = Arc::get_mut(&mut self.plan).expect("executing before it is shared");
            plan.exec = Exec::new(program, args, env);
        }
        self
    }

    fn build(
        writable: &Path,
        program: &Path,
        also: &[&Path],
        reads: &[PathBuf],
        namespaces: bool,
    ) -> Cage {
        let mut places: Vec<(PathBuf, Place)> = Vec::new();
        for dir in SYSTEM {
            places.push((PathBuf::from(dir), Place::System));
        }
        for file in SYSTEM_FILES {
            let place = if file.starts_with("/dev/") {
                Place::Device
            } else {
                Place::System
            };
            places.push((PathBuf::from(file), place));
        }
        places.push((absolute(program), Place::System));
        for read in reads {
            places.push((absolute(read), Place::System));
        }
        for extra in also {
            places.push((absolute(extra), Place::Device));
        }
        let writable = absolute(writable);
        places.push((writable.clone(), Place::Trial));
        // The places that exist, each opened once (O_PATH: not read).
        let mut opened: Vec<(PathBuf, Place, Option<OwnedFd>, Option<PathBuf>)> = Vec::new();
        for (path, place) in places {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.file_type().is_symlink() && SYSTEM.contains(&path.to_str().unwrap_or("")) {
                let text = std::fs::read_link(&path).ok();
                opened.push((path.clone(), place, open_path(&path), text));
            } else if let Some(fd) = open_path(&path) {
                opened.push((path, place, Some(fd), None));
            }
        }
        let ruleset = ruleset(&opened);
        // /proc is there for what needs /proc/self/exe (a test that runs its
        // own binary again, `std::env::current_exe`), but only under
        // Landlock, which gives no right to read anything in it, and keeps
        // the links of other processes (`cwd`, `exe`, `fd`) out of reach, as
        // it refuses to trace them. Without Landlock there is no /proc.
        if ruleset.is_some() {
            opened.push((PathBuf::from("/proc"), Place::Shown, None, None));
        }
        // Namespaces are not probed here (a fork, 5 ms: once per judge, so
        // once per trial): the child tries them, and goes on without them
        // where the kernel refuses (`enter_root`).
        let root = namespaces.then(|| root_plan(&writable, &opened)).flatten();
        Cage {
            plan: Arc::new(Plan {
                root,
                ruleset: ruleset.as_ref().map(Ruleset::raw_fd),
                cgroup: None,
                exec: None,
            }),
            ruleset,
            _sources: opened.into_iter().filter_map(|(_, _, fd, _)| fd).collect(),
        }
    }

    /// What the child enters (see `enter`).
    pub fn plan(&self) -> Arc<Plan> {
        self.plan.clone()
    }
}

fn open_path(path: &Path) -> Option<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    // O_PATH opens without reading.
    rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).ok()
}

#[cfg(test)]
mod tests;
