//! The crates the engine writes into the scratch workspace: the bridge (as
//! fencelab compiles it), the judge (the suite bound to the bridge's proxy),
//! one crate per implementation (its file verbatim, the bridge's dispatch
//! appended) and the servers hosting them. Each is content-addressed
//! (`Scratch::write_crate`), so an unchanged one is never written or built
//! again; the judge and the server carry a build id that `identity` checks.

use super::scratch::{CrateDir, Scratch, hash_of};
use crate::error::Error;
use crate::lab::suite::SuiteFiles;

/// Dependency lines shared by the scratch crates; the versions are fencelab's
/// own (a unit test checks them against Cargo.toml).
const RUSQLITE: &str = r#"rusqlite = { version = "0.43.0", features = ["bundled"] }"#;
const SERDE: &str = r#"serde = { version = "1.0.229", features = ["derive"] }"#;
const SERDE_JSON: &str = r#"serde_json = "1.0.154""#;
const LIBC: &str = r#"libc = "0.2.191""#;
const LANDLOCK: &str = r#"landlock = "0.4.8""#;
const NIX: &str = r#"nix = { version = "0.31.3", default-features = false, features = ["sched", "signal", "socket"] }"#;
/// The cage's own rustix: the system calls it makes between fork and exec.
const CAGE_RUSTIX: &str =
    r#"rustix = { version = "1.1.6", features = ["event", "fs", "mount", "process", "thread"] }"#;
const RUSTIX: &str = r#"rustix = { version = "1.1.6", features = ["event", "fs", "net", "param", "pipe", "process", "rand", "stdio", "termios", "time"] }"#;
const TEMPFILE: &str = r#"tempfile = "3.27.0""#;

/// The name of the judge's test that prints its build id.
pub(super) const BUILD_ID_TEST: &str = "fencelab_build_id";
pub(super) const BUILD_ID_PREFIX: &str = "fencelab-build-id: ";
/// The name of the judge's test that prints what its process was given
/// (a unit test compares a judge forked by its zygote with one executed).
pub(crate) const PROBE_TEST: &str = "fencelab_judge_probe";

pub(super) fn manifest(name: &str, extra: &str, dependencies: &[String]) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n{extra}\n\
         [dependencies]\n{}\n",
        dependencies.join("\n")
    )
}

pub(super) fn path_dependency(krate: &CrateDir) -> String {
    format!("{} = {{ path = \"../{}\" }}", krate.name, krate.name)
}

/// The cage crate's sources (`crates/cage/src/*.rs`), listed by build.rs.
const CAGE_FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/cage.rs"));
/// The bridge's sources (`src/bridge/*.rs`), listed by build.rs.
const BRIDGE_FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/bridge.rs"));

/// The cage crate, as fencelab depends on it (`crates/cage`), its library
/// named `cage` as the bridge names it; its dependencies pinned to its own.
fn write_cage(scratch: &Scratch) -> Result<CrateDir, Error> {
    let lib = "[lib]\nname = \"cage\"\n";
    let mut files = vec![(
        "Cargo.toml".to_string(),
        manifest(
            "cage-NAME",
            lib,
            &[LANDLOCK, LIBC, NIX, CAGE_RUSTIX].map(String::from),
        ),
    )];
    for (name, contents) in CAGE_FILES {
        files.push((format!("src/{name}"), contents.to_string()));
    }
    let cage = scratch.write_crate("cage", &files)?;
    // Not a member the builder lists: kept from the garbage collector by use.
    scratch.touch(&[&cage]);
    Ok(cage)
}

/// The bridge crate: protocol, client, server and proxy, as fencelab
/// compiles them, over the cage crate.
pub(super) fn write_bridge(scratch: &Scratch) -> Result<CrateDir, Error> {
    let cage = write_cage(scratch)?;
    let mut deps = vec![path_dependency(&cage)];
    deps.extend([RUSQLITE, SERDE, SERDE_JSON, LIBC, RUSTIX].map(String::from));
    let mut files = vec![
        // Also a cdylib: a Python server forked per trial enters its cage
        // with it (`zygote`).
        (
            "Cargo.toml".to_string(),
            manifest(
                "bridge-NAME",
                "[lib]\ncrate-type = [\"rlib\", \"cdylib\"]\n",
                &deps,
            ),
        ),
    ];
    for (name, contents) in BRIDGE_FILES {
        let file = match *name {
            // The cage's set-up is fencelab's to call, not the scratch
            // crates': unused in this crate, and not dead code.
            "mod.rs" => (
                "src/lib.rs".into(),
                format!("#![allow(dead_code)]\n{contents}"),
            ),
            // fencelab's own: its tests, and what implementation crates include.
            "tests.rs" | "dispatch.rs" => continue,
            _ => (format!("src/{name}"), contents.to_string()),
        };
        files.push(file);
    }
    scratch.write_crate("bridge", &files)
}

/// The judge crate: the suite, bound to the bridge's proxy (its binding line
/// replaced), with a test of fencelab's that prints the build id. Returns the
/// crate and its build id.
pub(super) fn write_judge(
    scratch: &Scratch,
    bridge: &CrateDir,
    suite: &SuiteFiles,
) -> Result<(CrateDir, String), Error> {
    let sources = suite
        .files
        .iter()
        .flat_map(|(p, c)| [p.as_str(), c.as_str()]);
    let init = judge_init(bridge);
    let build_id =
        hash_of(sources.chain([bridge.name.as_str(), suite.binding.as_str(), init.as_str()]));
    let root_path = &suite.root;
    let proxy = format!("use {}::proxy as lease;", bridge.ident());
    let deps = vec![
        path_dependency(bridge),
        RUSQLITE.to_string(),
        TEMPFILE.to_string(),
    ];
    let mut files = vec![
        ("Cargo.toml".to_string(), manifest("judge-NAME", "", &deps)),
        (
            "src/lib.rs".to_string(),
            "//! The judge's tests are in tests/.\n".to_string(),
        ),
    ];
    for (path, contents) in &suite.files {
        let contents = if path == root_path && ends_in_an_attribute(contents) {
            // Verbatim: it fails to build as cargo would fail it.
            contents.clone()
        } else if path == root_path {
            let mut root = contents.replacen(&suite.binding, &proxy, 1);
            root.push_str(&format!(
                "\n/// Prints the id of the sources this judge was built from (run by fencelab).\n\
                 #[test]\n#[ignore]\nfn {BUILD_ID_TEST}() {{\n    println!(\"{BUILD_ID_PREFIX}{build_id}\");\n}}\n"
            ));
            root.push_str(&init);
            root
        } else {
            contents.clone()
        };
        files.push((format!("tests/{path}"), contents));
    }
    Ok((scratch.write_crate("judge", &files)?, build_id))
}

/// What the judge's root file ends with: the bridge's `judge_zygote::init`
/// among the functions the C library runs before `main`, so that the
/// runner can start the judge once and fork it per trial.
fn judge_init(bridge: &CrateDir) -> String {
    format!(
        "\n/// What this process was given, as a judge (run by fencelab's tests).\n\
         #[test]\n#[ignore]\nfn {PROBE_TEST}() {{\n    {bridge}::judge_zygote::probe();\n}}\n\
         \n/// Before `main`: a judge started as a zygote forks here (run by fencelab).\n\
         #[used]\n#[unsafe(link_section = \".init_array\")]\n\
         static FENCELAB_JUDGE_ZYGOTE: unsafe extern \"C\" fn(\n    std::ffi::c_int,\n    \
         *mut *mut std::ffi::c_char,\n    *mut *mut std::ffi::c_char,\n) = {bridge}::judge_zygote::init;\n",
        bridge = bridge.ident()
    )
}

/// An implementation crate: its file verbatim as the crate root (so that any
/// line number in a message is the file's own), with the bridge's dispatch
/// appended as a hidden module.
pub(super) fn write_implementation(
    scratch: &Scratch,
    bridge: &CrateDir,
    source: &str,
) -> Result<CrateDir, Error> {
    let mut lib = source.to_string();
    if !lib.ends_with('\n') {
        lib.push('\n');
    }
    // A file ending in an attribute fails to build as cargo would fail it.
    if !ends_in_an_attribute(source) {
        lib.push_str(&format!(
            "\n#[doc(hidden)]\n#[allow(missing_docs, unused, clippy::all)]\npub mod __fencelab_bridge {{\n    \
             extern crate {} as bridge;\n    include!(\"fencelab_dispatch.rs\");\n}}\n",
            bridge.ident()
        ));
    }
    let deps = vec![path_dependency(bridge), RUSQLITE.to_string()];
    let files = vec![
        // Warnings are never shown, and a flood of them (60,000 unused
        // variables: 185 MB of cargo's JSON) costs the batch their reading.
        (
            "Cargo.toml".to_string(),
            manifest("impl-NAME", "[lints.rust]\nwarnings = \"allow\"\n", &deps),
        ),
        ("src/lib.rs".to_string(), lib),
        (
            "src/fencelab_dispatch.rs".to_string(),
            include_str!("../bridge/dispatch.rs").to_string(),
        ),
    ];
    scratch.write_crate("impl", &files)
}

/// Whether `source` ends in an outer attribute or doc comment with no item
/// after it. cargo rejects such a file, but anything fencelab appended would
/// become that item, and be built. proc-macro2 reads the tokens as rustc
/// does: comments, strings, raw strings and doc comments.
fn ends_in_an_attribute(source: &str) -> bool {
    use proc_macro2::{Delimiter, TokenStream, TokenTree};
    // A file it cannot read keeps fencelab's tail: rustc says what is wrong.
    let Ok(tokens) = source.parse::<TokenStream>() else {
        return false;
    };
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    matches!(
        tokens.as_slice(),
        [.., TokenTree::Punct(hash), TokenTree::Group(group)]
            if hash.as_char() == '#' && group.delimiter() == Delimiter::Bracket
    )
}

/// The key a server hosts an implementation's crate under: the crate's name,
/// a hash of its files, so a server's `--identify` proves which sources it
/// was built from.
pub(super) fn key_of(krate: &CrateDir) -> String {
    krate.name.clone()
}

/// Where rustc sees an implementation's file (its crate's root), in messages
/// and panic locations.
fn compiled_path(krate: &CrateDir) -> String {
    crate::bridge::server::compiled_path(&krate.name)
}

/// The compiler's messages about an implementation's crate as its author
/// reads them: its file under its shown path, the bridge's dispatch (appended
/// by `write_implementation`) under a name that says what it is.
pub(super) fn shown_errors(krate: &CrateDir, errors: &str, shown_path: &str) -> String {
    let errors = errors.replace(&compiled_path(krate), shown_path).replace(
        &format!("crates/{}/src/fencelab_dispatch.rs", krate.name),
        DISPATCH,
    );
    signatures_said(&errors)
}

/// What the compiler calls the bridge's dispatch in a learner's messages.
const DISPATCH: &str = "<fencelab's calls of the contract's API>";

/// The compiler's messages with each error found in fencelab's calls (a
/// function whose signature is not the contract's) said as a learner needs
/// it: which function, where it is, and the contract's signature; not
/// fencelab's generated code.
fn signatures_said(errors: &str) -> String {
    let blocks: Vec<&str> = errors.split("\n\n").collect();
    let said: Vec<String> = blocks
        .iter()
        .map(|block| signature_said(block).unwrap_or_else(|| block.to_string()))
        .collect();
    said.join("\n\n")
}

fn signature_said(block: &str) -> Option<String> {
    let first = block.lines().next()?;
    if !first.starts_with("error") || !block.contains(&format!("--> {DISPATCH}")) {
        return None;
    }
    let name: String = block
        .split("super::")
        .nth(1)?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let contract = crate::lab::reference::items(crate::lab::reference::REFERENCE)
        .into_iter()
        .find(|i| i.function_name() == Some(name.as_str()))?
        .split_body()?
        .0
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("( ", "(")
        .replace(", )", ")");
    // rustc's note names the learner's function where it is defined.
    let at = block
        .lines()
        .skip_while(|l| !l.starts_with("note: function defined here"))
        .find_map(|l| l.trim_start().strip_prefix("--> "));
    let rustc = first.split_once(": ").map_or(first, |(_, m)| m);
    let mut out = format!("error: `{name}` does not have the contract's signature ({rustc})\n");
    if let Some(at) = at {
        out.push_str(&format!("  --> {at}\n"));
    }
    out.push_str(&format!(
        "  the contract: {contract}\n  next: give `{name}` exactly these parameters and this return type"
    ));
    Some(out)
}

/// The server crate hosting `hosted` (each crate once), and its build id.
/// Nothing of where the implementations' files lie is in it (their shown
/// paths are given when it starts), so a source graded from another
/// directory, or under another name, is served by the server already built.
pub(super) fn write_server(
    scratch: &Scratch,
    bridge: &CrateDir,
    hosted: &[CrateDir],
) -> Result<(CrateDir, String), Error> {
    let build_id = hash_of(hosted.iter().map(|c| c.name.as_str()));
    let bridge_ident = bridge.ident();
    let entries: Vec<String> = hosted
        .iter()
        .map(|krate| {
            format!(
                "        {bridge_ident}::server::Hosted {{\n            key: {key:?},\n            \
                 compiled_path: {compiled:?},\n            \
                 dispatch: {ident}::__fencelab_bridge::dispatch,\n        }},",
                key = key_of(krate),
                compiled = compiled_path(krate),
                ident = krate.ident(),
            )
        })
        .collect();
    let main = format!(
        "//! The server hosting this run's implementations (written by fencelab).\n\n\
         fn main() {{\n    {bridge_ident}::server::main(\n        {build_id:?},\n        &[\n{}\n        ],\n    )\n}}\n",
        entries.join("\n")
    );
    let mut deps = vec![path_dependency(bridge)];
    deps.extend(hosted.iter().map(path_dependency));
    let files = vec![
        ("Cargo.toml".to_string(), manifest("server-NAME", "", &deps)),
        ("src/main.rs".to_string(), main),
    ];
    Ok((scratch.write_crate("server", &files)?, build_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The suite's race tests find the runner behind a judge's zygote by
    /// its first argument (`support.rs` has no bridge to ask).
    #[test]
    fn the_suite_knows_the_zygotes_argument() {
        let support = include_str!("../../tests/behaviour/support.rs");
        let zygote = crate::bridge::judge_zygote::ZYGOTE_ARG;
        assert!(support.contains(&format!("const JUDGE_ZYGOTE_ARG: &str = \"{zygote}\";")));
    }

    /// Each `true` would have the appended tail attach to the attribute.
    #[test]
    fn a_file_ending_in_an_attribute_is_seen() {
        for source in [
            "fn a() {}\n#[test]\n",
            "fn a() {}\n#[cfg(any())] // why\n/* done */",
            "fn a() {}\n/// A doc comment with no item.\n",
            "fn a() {}\n#[allow(unused)]",
        ] {
            assert!(ends_in_an_attribute(source), "{source}");
        }
        for source in [
            "fn a() {}\n",
            "#![allow(unused)]\n",
            "//! Inner docs.\n",
            "fn a() {}\n// #[test]\n",
            "fn a() {}\n/* #[test] */\n",
            "const A: &str = \"#[test]\";\n",
            "macro_rules! m { () => {} }\nm![];\n",
            "fn a() {\n", // unclosed: rustc says so
        ] {
            assert!(!ends_in_an_attribute(source), "{source}");
        }
    }

    /// Fails where a learner is shown fencelab's generated call.
    #[test]
    fn a_changed_signature_is_said_with_the_contracts() {
        let errors = format!(
            "error[E0061]: this function takes 3 arguments but 2 arguments were supplied\n   --> {DISPATCH}:14:44\n    |\n 14 |         Request::State {{ path, job_id }} => super::state(&path, &job_id).map(|job| {{\n    |\nnote: function defined here\n   --> sig.rs:126:8\n    |\n\nerror: aborting due to 1 previous error"
        );
        let said = signatures_said(&errors);
        assert!(
            !said.contains("Request::State") && !said.contains(DISPATCH),
            "{said}"
        );
        assert!(said.starts_with("error: `state` does not have the contract's signature (this function takes 3 arguments but 2 arguments were supplied)\n  --> sig.rs:126:8\n  the contract: pub fn state(path: impl AsRef<Path>, job_id: &str)"), "{said}");
        assert!(
            said.ends_with("\n\nerror: aborting due to 1 previous error"),
            "{said}"
        );
        // Another error is left as rustc wrote it.
        assert_eq!(
            signatures_said("error[E0308]: x\n --> a.rs:1:1"),
            "error[E0308]: x\n --> a.rs:1:1"
        );
    }

    /// Fails where a scratch crate's dependency drifts from the version
    /// fencelab (or the cage crate) was built with: offline, it would not build.
    #[test]
    fn scratch_dependencies_are_fencelabs_own() {
        let pinned = |manifest: &str, lines: &[&str]| {
            let manifest: toml::Table = toml::from_str(manifest).unwrap();
            let deps = manifest["dependencies"].as_table().unwrap();
            for line in lines {
                let ours: toml::Table = toml::from_str(line).unwrap();
                let (name, spec) = ours.iter().next().unwrap();
                let version = |v: &toml::Value| match v {
                    toml::Value::String(s) => s.clone(),
                    other => other["version"].as_str().unwrap().to_string(),
                };
                assert_eq!(version(spec), version(&deps[name]), "{name}");
            }
        };
        let all = [RUSQLITE, SERDE, SERDE_JSON, LIBC, RUSTIX, TEMPFILE];
        pinned(include_str!("../../Cargo.toml"), &all);
        let cage = include_str!("../../crates/cage/Cargo.toml");
        // The scratch cage's dependencies are the cage's, features and all.
        let manifest: toml::Table = toml::from_str(cage).unwrap();
        let mut ours = toml::Table::new();
        for line in [LANDLOCK, LIBC, NIX, CAGE_RUSTIX] {
            ours.extend(toml::from_str::<toml::Table>(line).unwrap());
        }
        assert_eq!(
            manifest["dependencies"].as_table().unwrap(),
            &ours,
            "update `write_cage`'s dependencies"
        );
    }

    /// The scratch cage holds every source file of the cage crate's (its
    /// tests' folders aside): fails where build.rs's list misses one.
    #[test]
    fn the_scratch_bridge_has_every_module_the_bridge_declares() {
        let root = include_str!("../bridge/mod.rs");
        let listed: Vec<&str> = BRIDGE_FILES.iter().map(|(name, _)| *name).collect();
        let declared: Vec<String> = (root.lines())
            .filter_map(|l| {
                l.trim_start_matches("pub(crate) ")
                    .trim_start_matches("pub ")
                    .strip_prefix("mod ")
            })
            .filter_map(|l| l.strip_suffix(';'))
            .filter(|m| *m != "tests")
            .map(|m| format!("{m}.rs"))
            .collect();
        assert!(declared.len() >= 8, "{declared:?}");
        for module in &declared {
            assert!(
                listed.contains(&module.as_str()),
                "{module} is not in {listed:?}"
            );
        }
    }

    #[test]
    fn the_scratch_cage_has_every_source_of_the_cage_crate() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/cage/src");
        let mut sources: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".rs"))
            .collect();
        sources.sort();
        let listed: Vec<&str> = CAGE_FILES.iter().map(|(name, _)| *name).collect();
        assert_eq!(listed, sources);
        assert!(listed.contains(&"lib.rs"), "{listed:?}");
    }
}
