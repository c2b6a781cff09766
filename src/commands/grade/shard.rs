//! Which submissions one runner grades when a class is split between N
//! (`--shard K/N`, or `--shard auto` from the engine that started it).
//!
//! A submission's shard is a function of its own key alone (`key`, `index_of`).
//! So adding or removing a submission moves no other one. Every runner of a
//! matrix agrees without talking to the others, whatever order the shell lists
//! the paths in. Going from N to N+1 shards moves about 1/(N+1) of them. The
//! price of that stability is that balance is statistical, not exact. No
//! assignment that depends on a submission's key alone can promise equal shards
//! for every class (the unit tests measure it).

use std::path::{Component, Path, PathBuf};

use crate::error::Error;
use crate::lab::lang::Lang;

/// One share of a class: the K-th (1-based) of N.
pub(crate) type Shard = (usize, usize);

/// What `--shard` was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShardArg {
    Given(Shard),
    /// `auto`: from the environment.
    Auto,
}

/// A shard, and the variables it was read from (none when given as K/N).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub shard: Shard,
    /// `JOB_COMPLETION_INDEX=2, FENCELAB_SHARDS=8`.
    pub from: Option<String>,
}

/// Parses `--shard`'s value: `auto` or `K/N` with 1 <= K <= N.
pub(crate) fn parse_arg(text: &str) -> Result<ShardArg, String> {
    if text.trim() == "auto" {
        return Ok(ShardArg::Auto);
    }
    parse_k_of_n(text)
        .map(ShardArg::Given)
        .ok_or_else(|| format!("{text:?}: give K/N with 1 <= K <= N (e.g. 2/4), or auto"))
}

fn parse_k_of_n(text: &str) -> Option<Shard> {
    let (k, n) = text.split_once('/')?;
    let (k, n): (usize, usize) = (k.trim().parse().ok()?, n.trim().parse().ok()?);
    (k >= 1 && k <= n).then_some((k, n))
}

/// The variables `--shard auto` reads, in order, each engine's own:
/// - `FENCELAB_SHARD=K/N`, 1-based, as `--shard`;
/// - Kubernetes' Indexed Job: `JOB_COMPLETION_INDEX`, 0-based, with
///   `FENCELAB_SHARDS=N`;
/// - Slurm's job array: `SLURM_ARRAY_TASK_ID` from `SLURM_ARRAY_TASK_MIN` by
///   `SLURM_ARRAY_TASK_STEP`, `SLURM_ARRAY_TASK_COUNT`;
/// - GitLab's parallel job: `CI_NODE_INDEX`, 1-based, `CI_NODE_TOTAL`.
pub(crate) const VARIABLES: [&str; 4] = [
    "FENCELAB_SHARD",
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "CI_NODE_INDEX",
];

/// `arg` resolved: as given, or read from the environment (`get`).
pub(crate) fn resolve(
    arg: ShardArg,
    lang: Lang,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, Error> {
    match arg {
        ShardArg::Given(shard) => Ok(Resolved { shard, from: None }),
        ShardArg::Auto => from_env(lang, get),
    }
}

/// The process's environment, an empty variable counting as unset.
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn say(lang: Lang, en: String, ja: String) -> String {
    match lang {
        Lang::En => en,
        Lang::Ja => ja,
    }
}

fn from_env(lang: Lang, get: &dyn Fn(&str) -> Option<String>) -> Result<Resolved, Error> {
    let number = |name: &str| -> Result<Option<usize>, Error> {
        let Some(value) = get(name) else {
            return Ok(None);
        };
        value.trim().parse::<usize>().map(Some).map_err(|_| {
            Error::input(say(
                lang,
                format!("--shard auto: {name}={value:?} is not a whole number"),
                format!("--shard auto: {name}={value:?} は0以上の整数ではありません"),
            ))
            .with_next(say(
                lang,
                format!("unset {name} or give it a number, or give --shard K/N"),
                format!("{name} を外すか整数にしてください（または --shard K/N を指定）"),
            ))
        })
    };
    let needs = |have: &str, value: usize, missing: &str, what_en: &str, what_ja: &str| {
        Error::input(say(
            lang,
            format!("--shard auto: {have}={value} is set, but not {missing} ({what_en})"),
            format!(
                "--shard auto: {have}={value} はありますが、{missing}（{what_ja}）がありません"
            ),
        ))
        .with_next(say(
            lang,
            format!("set {missing} beside {have}, or give --shard K/N"),
            format!("{have} と一緒に {missing} を設定してください（または --shard K/N を指定）"),
        ))
    };
    let out_of_range = |en: String, ja: String| {
        Error::input(say(
            lang,
            format!("--shard auto: {en}"),
            format!("--shard auto: {ja}"),
        ))
        .with_next(say(
            lang,
            "check the job's index and count variables, or give --shard K/N".to_string(),
            "ジョブのインデックスと総数の変数を確認してください（または --shard K/N を指定）"
                .to_string(),
        ))
    };
    if let Some(value) = get("FENCELAB_SHARD") {
        let shard = parse_k_of_n(&value).ok_or_else(|| {
            Error::input(say(
                lang,
                format!("--shard auto: FENCELAB_SHARD={value:?} is not K/N with 1 <= K <= N"),
                format!(
                    "--shard auto: FENCELAB_SHARD={value:?} は 1 <= K <= N の K/N ではありません"
                ),
            ))
            .with_next(say(
                lang,
                "set it as --shard takes it, e.g. FENCELAB_SHARD=2/4".to_string(),
                "--shard と同じ形で設定してください（例: FENCELAB_SHARD=2/4）".to_string(),
            ))
        })?;
        return Ok(Resolved {
            shard,
            from: Some(format!("FENCELAB_SHARD={}/{}", shard.0, shard.1)),
        });
    }
    if let Some(index) = number("JOB_COMPLETION_INDEX")? {
        let n = number("FENCELAB_SHARDS")?.ok_or_else(|| {
            needs(
                "JOB_COMPLETION_INDEX",
                index,
                "FENCELAB_SHARDS",
                "the number of shards, the Job's completions",
                "シャードの数、Job の completions",
            )
        })?;
        if index >= n {
            return Err(out_of_range(
                format!(
                    "JOB_COMPLETION_INDEX={index} counts from 0, so with FENCELAB_SHARDS={n} it must be below {n}"
                ),
                format!(
                    "JOB_COMPLETION_INDEX={index} は0から数えるので、FENCELAB_SHARDS={n} なら {n} 未満のはずです"
                ),
            ));
        }
        return Ok(Resolved {
            shard: (index + 1, n),
            from: Some(format!("JOB_COMPLETION_INDEX={index}, FENCELAB_SHARDS={n}")),
        });
    }
    if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
        let n = number("SLURM_ARRAY_TASK_COUNT")?.ok_or_else(|| {
            needs(
                "SLURM_ARRAY_TASK_ID",
                id,
                "SLURM_ARRAY_TASK_COUNT",
                "the number of tasks of the array",
                "配列のタスク数",
            )
        })?;
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
        let offset = id.checked_sub(min).filter(|o| o % step == 0);
        let index = offset.map(|o| o / step).filter(|i| *i < n);
        let Some(index) = index else {
            return Err(out_of_range(
                format!(
                    "SLURM_ARRAY_TASK_ID={id} is not one of the {n} tasks from SLURM_ARRAY_TASK_MIN={min} by {step} \
                     (give the array as one range, e.g. --array=1-{n})"
                ),
                format!(
                    "SLURM_ARRAY_TASK_ID={id} は SLURM_ARRAY_TASK_MIN={min} から {step} 刻みの {n} 個のタスクのどれでもありません\
                     （配列は --array=1-{n} のように一つの範囲で指定してください）"
                ),
            ));
        };
        return Ok(Resolved {
            shard: (index + 1, n),
            from: Some(format!(
                "SLURM_ARRAY_TASK_ID={id}, SLURM_ARRAY_TASK_COUNT={n}"
            )),
        });
    }
    if let Some(index) = number("CI_NODE_INDEX")? {
        let n = number("CI_NODE_TOTAL")?.ok_or_else(|| {
            needs(
                "CI_NODE_INDEX",
                index,
                "CI_NODE_TOTAL",
                "the number of parallel jobs",
                "並列ジョブの数",
            )
        })?;
        if index == 0 || index > n {
            return Err(out_of_range(
                format!(
                    "CI_NODE_INDEX={index} counts from 1, so with CI_NODE_TOTAL={n} it must be 1 to {n}"
                ),
                format!(
                    "CI_NODE_INDEX={index} は1から数えるので、CI_NODE_TOTAL={n} なら 1〜{n} のはずです"
                ),
            ));
        }
        return Ok(Resolved {
            shard: (index, n),
            from: Some(format!("CI_NODE_INDEX={index}, CI_NODE_TOTAL={n}")),
        });
    }
    Err(Error::input(say(
        lang,
        format!(
            "--shard auto: no shard in the environment (none of {} is set)",
            VARIABLES.join(", ")
        ),
        format!(
            "--shard auto: 環境にシャードの指定がありません（{} のどれも設定されていません）",
            VARIABLES.join(", ")
        ),
    ))
    .with_next(say(
        lang,
        "run it as a job of a Kubernetes Indexed Job, a Slurm array or a GitLab parallel job, \
         set FENCELAB_SHARD=K/N, or give --shard K/N"
            .to_string(),
        "Kubernetes の Indexed Job、Slurm の配列ジョブ、GitLab の parallel ジョブとして実行するか、\
         FENCELAB_SHARD=K/N を設定するか、--shard K/N を指定してください"
            .to_string(),
    )))
}

/// A submission's key: its path as given, relative to `cwd` when it is an
/// absolute path beneath it, without `.` components, joined by `/`.
pub(crate) fn key(path: &Path, cwd: &Path) -> String {
    let relative = if path.is_absolute() {
        path.strip_prefix(cwd).unwrap_or(path)
    } else {
        path
    };
    let mut parts: Vec<String> = Vec::new();
    let mut rooted = false;
    for component in relative.components() {
        match component {
            Component::Prefix(p) => parts.push(p.as_os_str().to_string_lossy().into_owned()),
            Component::RootDir => rooted = true,
            Component::CurDir => {}
            Component::ParentDir => parts.push("..".to_string()),
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
        }
    }
    let joined = parts.join("/");
    if rooted { format!("/{joined}") } else { joined }
}

/// The shard (0-based index of `n`) a key falls in: a stable hash of the key
/// (SHA-256), spread over the `n` shards by `jump`.
pub(crate) fn index_of(key: &str, n: usize) -> usize {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    jump(u64::from_le_bytes(first), n)
}

/// Jump consistent hash (Lamping and Veach, "A Fast, Minimal Memory,
/// Consistent Hash Algorithm", 2014): a bucket in 0..n for `key`, such that
/// going from n to n+1 buckets moves a key only into the new one.
fn jump(mut key: u64, n: usize) -> usize {
    let (mut b, mut j): (i64, i64) = (-1, 0);
    while j < n as i64 {
        b = j;
        key = key.wrapping_mul(2862933555777941757).wrapping_add(1);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b as usize
}

/// The paths of `shard`, in the order given.
pub(crate) fn take(paths: &[PathBuf], (k, n): Shard, cwd: &Path) -> Vec<PathBuf> {
    paths
        .iter()
        .filter(|p| index_of(&key(p, cwd), n) == k - 1)
        .cloned()
        .collect()
}

/// The line a sharded run starts with: the shard as `--shard` takes it, where
/// it came from, and how many of the class it took (or that it took none).
pub(crate) fn render_taken(lang: Lang, resolved: &Resolved, taken: usize, total: usize) -> String {
    let (k, n) = resolved.shard;
    let from = match (&resolved.from, lang) {
        (Some(from), Lang::En) => format!(" (from {from})"),
        (Some(from), Lang::Ja) => format!("（{from} から）"),
        (None, _) => String::new(),
    };
    let noun = |count: usize| {
        if count == 1 {
            "submission"
        } else {
            "submissions"
        }
    };
    match (lang, taken) {
        (Lang::En, 0) => format!(
            "shard {k}/{n}{from}: none of the {total} {} falls in this shard; \
             its report is empty and merges with the others",
            noun(total)
        ),
        (Lang::Ja, 0) => format!(
            "シャード {k}/{n}{from}: 提出物 {total} 件のうち、このシャードに入るものはありません。\
             レポートは空で、ほかのシャードとそのままマージできます"
        ),
        (Lang::En, _) => format!("shard {k}/{n}{from}: {taken} of {total} {}", noun(total)),
        (Lang::Ja, _) => format!("シャード {k}/{n}{from}: 提出物 {total} 件のうち {taken} 件"),
    }
}

/// The paths this run grades and its shard, said on stderr: all of them
/// when `arg` is `None`.
pub(crate) fn select(
    paths: &[PathBuf],
    arg: Option<ShardArg>,
    printer: &mut crate::output::printer::Printer,
) -> Result<(Vec<PathBuf>, Option<Shard>), Error> {
    let Some(arg) = arg else {
        return Ok((paths.to_vec(), None));
    };
    let resolved = resolve(arg, printer.lang, &env)?;
    let cwd = std::env::current_dir().unwrap_or_default();
    let taken = take(paths, resolved.shard, &cwd);
    printer.status(
        crate::output::printer::Verb::Grading,
        &render_taken(printer.lang, &resolved, taken.len(), paths.len()),
    );
    Ok((taken, Some(resolved.shard)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn auto(vars: &[(&str, &str)]) -> Result<Shard, String> {
        resolve(ShardArg::Auto, Lang::En, &env_of(vars))
            .map(|r| r.shard)
            .map_err(|e| format!("{}\nnext: {}", e.message, e.next.unwrap_or_default()))
    }

    #[test]
    fn each_engines_variables_give_the_same_1_based_shard() {
        assert_eq!(auto(&[("FENCELAB_SHARD", "3/8")]), Ok((3, 8)));
        // Kubernetes counts from 0, GitLab from 1, Slurm from the array's min.
        assert_eq!(
            auto(&[("JOB_COMPLETION_INDEX", "2"), ("FENCELAB_SHARDS", "8")]),
            Ok((3, 8))
        );
        assert_eq!(
            auto(&[("CI_NODE_INDEX", "3"), ("CI_NODE_TOTAL", "8")]),
            Ok((3, 8))
        );
        assert_eq!(
            auto(&[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_COUNT", "8"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
            ]),
            Ok((3, 8))
        );
        assert_eq!(
            auto(&[
                ("SLURM_ARRAY_TASK_ID", "2"),
                ("SLURM_ARRAY_TASK_COUNT", "8")
            ]),
            Ok((3, 8))
        );
        assert_eq!(
            auto(&[
                ("SLURM_ARRAY_TASK_ID", "20"),
                ("SLURM_ARRAY_TASK_COUNT", "8"),
                ("SLURM_ARRAY_TASK_MIN", "10"),
                ("SLURM_ARRAY_TASK_STEP", "5"),
            ]),
            Ok((3, 8))
        );
        // FENCELAB_SHARD wins over an engine's variables.
        assert_eq!(
            auto(&[
                ("FENCELAB_SHARD", "1/2"),
                ("CI_NODE_INDEX", "3"),
                ("CI_NODE_TOTAL", "8")
            ]),
            Ok((1, 2))
        );
    }

    #[test]
    fn auto_without_a_shard_or_with_a_half_or_bad_one_is_refused_by_name() {
        let err = auto(&[]).unwrap_err();
        assert!(
            err.contains("none of FENCELAB_SHARD, JOB_COMPLETION_INDEX"),
            "{err}"
        );
        assert!(err.contains("next: run it as a job"), "{err}");
        let err = auto(&[("JOB_COMPLETION_INDEX", "2")]).unwrap_err();
        assert!(
            err.contains("JOB_COMPLETION_INDEX=2 is set, but not FENCELAB_SHARDS"),
            "{err}"
        );
        let err = auto(&[("JOB_COMPLETION_INDEX", "8"), ("FENCELAB_SHARDS", "8")]).unwrap_err();
        assert!(err.contains("counts from 0"), "{err}");
        let err = auto(&[("CI_NODE_INDEX", "0"), ("CI_NODE_TOTAL", "8")]).unwrap_err();
        assert!(err.contains("counts from 1"), "{err}");
        let err = auto(&[("FENCELAB_SHARD", "0/4")]).unwrap_err();
        assert!(err.contains("FENCELAB_SHARD=\"0/4\""), "{err}");
        let err = auto(&[("CI_NODE_INDEX", "two"), ("CI_NODE_TOTAL", "8")]).unwrap_err();
        assert!(
            err.contains("CI_NODE_INDEX=\"two\" is not a whole number"),
            "{err}"
        );
        let err = auto(&[
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ])
        .unwrap_err();
        assert!(err.contains("not one of the 3 tasks"), "{err}");
        // An empty variable is unset (`env`), and Japanese is Japanese.
        let err = resolve(ShardArg::Auto, Lang::Ja, &env_of(&[])).unwrap_err();
        assert!(
            err.message.contains("環境にシャードの指定がありません"),
            "{}",
            err.message
        );
        assert!(err.next.unwrap().contains("Indexed Job"));
    }

    #[test]
    fn the_shard_argument_takes_k_of_n_or_auto() {
        assert_eq!(parse_arg("2/4"), Ok(ShardArg::Given((2, 4))));
        assert_eq!(parse_arg("auto"), Ok(ShardArg::Auto));
        for bad in ["0/4", "5/4", "1/0", "2", "x/4", "automatic"] {
            assert!(parse_arg(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_key_is_the_path_relative_to_where_grade_runs() {
        let cwd = Path::new("/home/runner/work/class");
        for given in [
            "submissions/alice",
            "./submissions/alice/",
            "submissions/./alice",
            "/home/runner/work/class/submissions/alice",
        ] {
            assert_eq!(key(Path::new(given), cwd), "submissions/alice", "{given}");
        }
        assert_eq!(key(Path::new("/elsewhere/a.rs"), cwd), "/elsewhere/a.rs");
    }

    fn class(size: usize) -> Vec<PathBuf> {
        (1..=size)
            .map(|i| PathBuf::from(format!("submissions/student-{i:03}")))
            .collect()
    }

    fn sizes(paths: &[PathBuf], n: usize) -> Vec<usize> {
        (1..=n)
            .map(|k| take(paths, (k, n), Path::new("/")).len())
            .collect()
    }

    #[test]
    fn two_hundred_submissions_over_8_shards_are_each_within_a_quarter_of_the_mean() {
        let paths = class(200);
        let sizes = sizes(&paths, 8);
        assert_eq!(
            sizes.iter().sum::<usize>(),
            200,
            "each in exactly one shard"
        );
        // 25 each on average: 19 to 31.
        assert!(sizes.iter().all(|s| (19..=31).contains(s)), "{sizes:?}");
        assert_eq!(
            sizes,
            [25, 28, 28, 23, 29, 22, 20, 25],
            "the assignment is stable across releases"
        );
    }

    #[test]
    fn the_hash_spreads_like_a_uniform_one_over_many_classes() {
        // Balance is statistical (see the module's header): over many classes
        // of 200 the largest shard of 8 is on average about 33 (a uniform
        // assignment's), never the 50+ of a hash that clusters similar names.
        let mut largest = 0usize;
        for class in 0..300 {
            let paths: Vec<PathBuf> = (0..200)
                .map(|i| PathBuf::from(format!("hw{class}-user{i}.rs")))
                .collect();
            largest += sizes(&paths, 8).into_iter().max().unwrap();
        }
        let mean_largest = largest as f64 / 300.0;
        assert!((31.0..36.0).contains(&mean_largest), "{mean_largest}");
    }

    #[test]
    fn adding_a_submission_moves_only_that_one() {
        let before = class(200);
        let mut after = before.clone();
        after.insert(57, PathBuf::from("submissions/late-joiner"));
        let cwd = Path::new("/");
        for n in [2, 3, 8, 64] {
            let shard_of = |paths: &[PathBuf]| -> Vec<(PathBuf, usize)> {
                let mut all: Vec<(PathBuf, usize)> = (1..=n)
                    .flat_map(|k| take(paths, (k, n), cwd).into_iter().map(move |p| (p, k)))
                    .collect();
                all.sort();
                all
            };
            let old = shard_of(&before);
            let new: Vec<(PathBuf, usize)> = shard_of(&after)
                .into_iter()
                .filter(|(p, _)| p != Path::new("submissions/late-joiner"))
                .collect();
            assert_eq!(old, new, "{n} shards");
        }
        // And one more shard moves only what the new shard takes.
        let moved = before
            .iter()
            .filter(|p| index_of(&key(p, cwd), 8) != index_of(&key(p, cwd), 9))
            .count();
        assert!(
            moved == take(&before, (9, 9), cwd).len(),
            "{moved} moved going from 8 to 9 shards"
        );
    }

    #[test]
    fn the_shard_line_says_which_where_from_and_how_many_in_both_languages() {
        let auto = Resolved {
            shard: (3, 8),
            from: Some("JOB_COMPLETION_INDEX=2, FENCELAB_SHARDS=8".into()),
        };
        let given = Resolved {
            shard: (2, 4),
            from: None,
        };
        let lines: Vec<String> = [Lang::En, Lang::Ja]
            .into_iter()
            .flat_map(|lang| {
                [
                    render_taken(lang, &auto, 26, 200),
                    render_taken(lang, &given, 1, 1),
                    render_taken(lang, &auto, 0, 5),
                ]
            })
            .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }
}
