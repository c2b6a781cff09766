//! Reading the examples: a few YAML shapes, kept simple on purpose.

pub(super) fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The lines after `lines[at]` indented deeper than it, dedented (a block
/// scalar's or a list's lines); blank lines kept inside.
pub(super) fn block_after(lines: &[&str], at: usize) -> Vec<String> {
    let key = indent(lines[at]);
    let body: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) > key)
        .copied()
        .collect();
    let least = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = body
        .iter()
        .map(|l| l.get(least..).unwrap_or("").to_string())
        .collect();
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out
}

/// The range of lines of the mapping entry `lines[at]` (up to the next line
/// indented as little or less).
pub(super) fn entry(lines: &[&str], at: usize) -> std::ops::Range<usize> {
    let end = (at + 1..lines.len())
        .find(|i| !lines[*i].trim().is_empty() && indent(lines[*i]) <= indent(lines[at]))
        .unwrap_or(lines.len());
    at..end
}

/// The one line of `range` that is `text` once trimmed.
pub(super) fn the_line(lines: &[&str], range: std::ops::Range<usize>, text: &str) -> usize {
    let found: Vec<usize> = range.filter(|i| lines[*i].trim() == text).collect();
    assert_eq!(found.len(), 1, "`{text}` once: {found:?}");
    found[0]
}

/// A key's value in `range`: `key: value` on one line, or its block.
pub(super) fn value_of(lines: &[&str], range: std::ops::Range<usize>, key: &str) -> Vec<String> {
    let prefix = format!("{key}:");
    let at = range
        .clone()
        .find(|i| {
            let t = lines[*i].trim_start().trim_start_matches("- ");
            t == prefix || t.starts_with(&format!("{prefix} "))
        })
        .unwrap_or_else(|| panic!("no `{key}:` in lines {range:?}"));
    let rest = lines[at].trim_start().trim_start_matches("- ")[prefix.len()..].trim();
    match rest {
        "" | "|" => block_after(lines, at),
        _ => vec![rest.to_string()],
    }
}

/// GitHub Actions: the step named `step` of job `job`: its `run:` and its
/// `env:` (name, value).
pub(super) fn github_step(yaml: &str, job: &str, step: &str) -> (String, Vec<(String, String)>) {
    let lines: Vec<&str> = yaml.lines().collect();
    let jobs = the_line(&lines, 0..lines.len(), "jobs:");
    let job = the_line(&lines, entry(&lines, jobs), &format!("{job}:"));
    let at = the_line(&lines, entry(&lines, job), &format!("- name: {step}"));
    // The step's keys are indented as its `name:`, past the `- `.
    let range = at..entry(&lines, at).end;
    let run = value_of(&lines, range.clone(), "run").join("\n");
    let env = match range.clone().find(|i| lines[*i].trim() == "env:") {
        Some(e) => block_after(&lines, e)
            .iter()
            .map(|l| {
                let (k, v) = l.split_once(": ").expect("NAME: value");
                (k.to_string(), v.to_string())
            })
            .collect(),
        None => Vec::new(),
    };
    (run, env)
}

/// GitLab CI: the list `key` of job `job` (`script:`, `before_script:`).
pub(super) fn gitlab_list(yaml: &str, job: &str, key: &str) -> Vec<String> {
    let lines: Vec<&str> = yaml.lines().collect();
    let job = the_line(&lines, 0..lines.len(), &format!("{job}:"));
    value_of(&lines, entry(&lines, job), key)
        .iter()
        .map(|l| {
            l.strip_prefix("- ")
                .unwrap_or_else(|| panic!("a list item: {l}"))
                .to_string()
        })
        .collect()
}

/// A one-line value (`parallel: 20`) of job `job`.
pub(super) fn gitlab_value(yaml: &str, job: &str, key: &str) -> String {
    let lines: Vec<&str> = yaml.lines().collect();
    let job = the_line(&lines, 0..lines.len(), &format!("{job}:"));
    value_of(&lines, entry(&lines, job), key).join("\n")
}

/// Kubernetes: the container's command line (`command:` as a flow list,
/// then each item of `args:`), and the manifest's one-line `key: value`s.
pub(super) fn k8s_argv(yaml: &str) -> Vec<String> {
    let lines: Vec<&str> = yaml.lines().collect();
    let all = 0..lines.len();
    let command = value_of(&lines, all.clone(), "command").join("");
    let mut argv: Vec<String> = serde_json::from_str(&command).expect("command: [\"...\", ...]");
    for item in value_of(&lines, all, "args") {
        let item = item.strip_prefix("- ").expect("an args item");
        assert!(
            !item.starts_with(['"', '\'', '|', '>']),
            "a plain one-line item: {item}"
        );
        argv.push(item.to_string());
    }
    argv
}

pub(super) fn k8s_value(yaml: &str, key: &str) -> String {
    let lines: Vec<&str> = yaml.lines().collect();
    value_of(&lines, 0..lines.len(), key).join("\n")
}

/// Kubernetes: the value of the container's variable `name`.
pub(super) fn k8s_env(yaml: &str, name: &str) -> String {
    let lines: Vec<&str> = yaml.lines().collect();
    let at = the_line(&lines, 0..lines.len(), &format!("- name: {name}"));
    lines[at + 1]
        .trim()
        .strip_prefix("value: ")
        .expect("value: on the next line")
        .trim_matches('"')
        .to_string()
}
