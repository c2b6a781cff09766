//! What a submission says reaches a terminal and a CI log as text, never as
//! a command: its panic (ESC, BEL, `\r`, lines GitHub's or Azure's runner
//! would read as commands) and its file's name (a newline, an ESC).

use super::grade_env;

/// Where the reference's `renew` starts: the panic goes before it.
const RENEW: &str =
    "    check_ttl(ttl)?;\n    check_now(now)?;\n    let conn = open(path.as_ref())?;";

const PANIC: &str = r#"    panic!("clear\u{1b}[2J clip\u{1b}]52;c;cHduZWQ=\u{7}\rhidden\n  ::stop-commands::guessed\n::error::pwned\n##[error]pwned");
"#;

#[test]
fn a_submissions_panic_and_name_are_printed_as_text_not_commands() {
    let dir = tempfile::tempdir().unwrap();
    let source = fencelab::lab::reference::REFERENCE.replacen(RENEW, &format!("{PANIC}{RENEW}"), 1);
    let name = "evil\n\u{1b}[2J::error::name.rs";
    let file = dir.path().join(name);
    std::fs::write(&file, source).unwrap();
    let file = file.display().to_string();
    let summary = dir.path().join("summary.md");
    let env = [
        ("GITHUB_STEP_SUMMARY", summary.as_os_str()),
        ("NO_COLOR", "1".as_ref()),
    ];
    for github in [false, true] {
        let mut args = vec![file.as_str(), "--timeout", "10"];
        if github {
            args.push("--github");
        }
        let (_, stdout, stderr) = grade_env(dir.path(), &args, &env);
        let everything = format!("{stdout}{stderr}");
        // What it panicked with is there, shown.
        assert!(everything.contains("clear\\u{1b}[2J"), "{everything}");
        assert!(everything.contains("evil\\n\\u{1b}[2J"), "{everything}");
        for bad in ['\u{1b}', '\u{7}', '\r'] {
            assert!(
                !everything.contains(bad),
                "{bad:?} printed raw:\n{everything}"
            );
        }
        let mut lines = stdout.lines().map(str::trim_start);
        let commands: Vec<&str> = match github {
            false => everything.lines().map(str::trim_start).collect(),
            true => {
                // Paused first, with a token nobody could guess; resumed
                // only for fencelab's own annotations.
                let first = lines.next().unwrap_or_default();
                let token = first.strip_prefix("::stop-commands::").expect(&stdout);
                assert!(token.len() >= 32 && token != "guessed", "{first}");
                let resume = format!("::{token}::");
                assert!(stdout.lines().any(|l| l == resume), "{stdout}");
                let after: Vec<&str> = stdout.split(&resume).nth(1).unwrap().lines().collect();
                assert!(after.iter().any(|l| l.starts_with("::error")), "{stdout}");
                after
                    .into_iter()
                    .chain(stderr.lines())
                    .map(str::trim_start)
                    .collect()
            }
        };
        for line in commands {
            let ours =
                github && (line.starts_with("::error file=") || line.starts_with("::error title="));
            assert!(
                ours || !(line.starts_with("::") || line.starts_with("##[")),
                "a line a runner would run: {line:?}\n{everything}"
            );
        }
    }
}
