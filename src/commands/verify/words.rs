//! Every sentence `verify` prints, in both languages, in one place.

use crate::engine::outcome::MutantOutcome;
use crate::lab::lang::Lang;

/// What the implementation under test is called on screen when it is the
/// one built into fencelab (`Progress::started` is told this).
pub(crate) const BUILTIN_REFERENCE: &str = "the built-in reference";
pub(crate) use crate::lab::mutant::BUILTIN_MUTANTS;

pub(super) struct Words {
    pub step: &'static str,
    pub kill_matrix: &'static str,
    pub legend: &'static str,
    pub rows_left_out: &'static str,
    pub by_step: &'static str,
    pub kill_nothing: &'static str,
    pub should_kill: &'static str,
    pub should_kill_flaky: &'static str,
    pub should_pass: &'static str,
    pub killed_by_others: &'static str,
    pub does_not_compile: &'static str,
    pub cannot_apply: &'static str,
    pub every_test_passed: &'static str,
    pub find_not_once: &'static str,
    pub by: &'static str,
    pub rerun: &'static str,
    pub matrix_hint: &'static str,
    pub flaky: &'static str,
    pub next: &'static str,
    pub baseline_failed: &'static str,
    pub not_started: &'static str,
    pub equivalent: &'static str,
}

pub(super) fn words(lang: Lang) -> Words {
    match lang {
        Lang::En => Words {
            step: "step",
            kill_matrix: "Kill matrix",
            legend: "K killed, as declared · k killed, not declared · x declared killer that passed · o declared survivor that passed · ! declared survivor that failed · . passed · - not run · ~ flaky",
            rows_left_out: "(a test shows only where it kills or is declared for one of these mutants)",
            by_step: "Mutants by step",
            kill_nothing: "Tests that kill no mutant",
            should_kill: "should kill it but passed",
            should_kill_flaky: "should kill it but is flaky in the baseline",
            should_pass: "should pass under it but did not:",
            killed_by_others: "it was killed by other tests:",
            does_not_compile: "it does not compile:",
            cannot_apply: "it cannot be applied:",
            every_test_passed: "every test passed",
            find_not_once: "its find text is not there exactly once",
            by: "by",
            rerun: "rerun them with:",
            matrix_hint: "which test kills which mutant: fencelab verify --verbose (or --json FILE)",
            flaky: "flaky in the baseline, not trusted for kills:",
            next: "next:",
            baseline_failed: "baseline failed:",
            not_started: "not started",
            equivalent: "equivalent",
        },
        Lang::Ja => Words {
            step: "ステップ",
            kill_matrix: "キルマトリクス",
            legend: "K 宣言どおり検出 · k 宣言外の検出 · x 検出するはずが通った · o 通るはずで通った · ! 通るはずが失敗 · . 通った · - 未実行 · ~ 不安定",
            rows_left_out: "（これらのミュータントを検出するか、宣言に含まれるテストだけを表示）",
            by_step: "ステップごとのミュータント",
            kill_nothing: "どのミュータントも検出しないテスト",
            should_kill: "が検出するはずでしたが、通りました",
            should_kill_flaky: "が検出するはずでしたが、基準実行で不安定です",
            should_pass: "は通るはずでしたが、失敗しました:",
            killed_by_others: "ほかのテストが検出しました:",
            does_not_compile: "コンパイルできません:",
            cannot_apply: "適用できません:",
            every_test_passed: "すべてのテストが通りました",
            find_not_once: "find の文字列がちょうど 1 回現れません",
            by: "検出:",
            rerun: "これらだけを再実行:",
            matrix_hint: "どのテストがどのミュータントを検出するか: fencelab verify --verbose（または --json FILE）",
            flaky: "基準実行で不安定なため、検出に数えないテスト:",
            next: "次に:",
            baseline_failed: "基準実行の失敗:",
            not_started: "未着手",
            equivalent: "等価",
        },
    }
}

/// A mutant's outcome as the screen names it.
pub(super) fn outcome(outcome: MutantOutcome, lang: Lang) -> &'static str {
    match lang {
        Lang::En => outcome.label(),
        Lang::Ja => match outcome {
            MutantOutcome::Killed => "検出",
            MutantOutcome::Crashed => "クラッシュ",
            MutantOutcome::Timeout => "タイムアウト",
            MutantOutcome::Survived => "生存",
            MutantOutcome::Unviable => "コンパイル不可",
            MutantOutcome::Stale => "適用不可",
        },
    }
}

/// `Verifying`'s text.
pub(super) fn verifying(lang: Lang, mutants: usize, implementation: &str, dir: &str) -> String {
    let (implementation, dir) = match lang {
        Lang::En => (implementation.to_string(), dir.to_string()),
        Lang::Ja => (
            if implementation == BUILTIN_REFERENCE {
                "組み込みの参照実装".to_string()
            } else {
                implementation.to_string()
            },
            if dir == BUILTIN_MUTANTS {
                "fencelab 組み込み".to_string()
            } else {
                dir.to_string()
            },
        ),
    };
    match lang {
        Lang::En => format!("{} of {implementation} from {dir}", mutants_en(mutants)),
        Lang::Ja => format!("{implementation} の {mutants} 個のミュータント（{dir}）"),
    }
}

/// `Baseline`'s text when it passed.
pub(super) fn baseline_passed(lang: Lang, tests: usize, secs: f64) -> String {
    match lang {
        Lang::En => {
            format!("all {tests} tests pass on the unmutated implementation, twice ({secs:.1}s)")
        }
        Lang::Ja => {
            format!("変更前の実装で {tests} 個のテストがすべて 2 回とも通りました（{secs:.1} 秒）")
        }
    }
}

/// The verdict line's text.
pub(super) fn verdict(
    lang: Lang,
    mutants: usize,
    not_as_declared: usize,
    outcomes: &str,
) -> String {
    match (lang, not_as_declared) {
        (Lang::En, 0) if mutants == 1 => format!("1 mutant, as declared ({outcomes})"),
        (Lang::En, 0) => format!("all {mutants} mutants as declared ({outcomes})"),
        (Lang::En, n) => format!(
            "{n} of {} not as declared ({outcomes})",
            mutants_en(mutants)
        ),
        (Lang::Ja, 0) if mutants == 1 => {
            format!("1 個のミュータントが宣言どおりです（{outcomes}）")
        }
        (Lang::Ja, 0) => format!("{mutants} 個のミュータントがすべて宣言どおりです（{outcomes}）"),
        (Lang::Ja, n) => {
            format!("{mutants} 個中 {n} 個のミュータントが宣言どおりではありません（{outcomes}）")
        }
    }
}

/// `1 mutant`, `2 mutants`.
pub(super) fn mutants_en(n: usize) -> String {
    if n == 1 {
        "1 mutant".to_string()
    } else {
        format!("{n} mutants")
    }
}

/// One step's line in the table of mutants by step (what follows the count
/// starts in the same column on every line).
pub(super) fn step_tally(lang: Lang, mutants: usize, as_declared: usize) -> String {
    let not = mutants - as_declared;
    match (lang, mutants, not) {
        (Lang::En, 1, 0) => " 1 mutant,  as declared".to_string(),
        (Lang::En, 1, _) => " 1 mutant,  not as declared".to_string(),
        (Lang::En, n, 0) => format!("{n:>2} mutants, all as declared"),
        (Lang::En, n, not) => format!("{n:>2} mutants, {not} not as declared"),
        (Lang::Ja, 1, 0) => " 1 個、宣言どおり".to_string(),
        (Lang::Ja, 1, _) => " 1 個、宣言どおりではない".to_string(),
        (Lang::Ja, n, 0) => format!("{n:>2} 個、すべて宣言どおり"),
        (Lang::Ja, n, not) => format!("{n:>2} 個、{not} 個が宣言どおりではない"),
    }
}

/// What to do about a mutant that survived although killers were declared.
pub(super) fn survived_next(lang: Lang, file: &str) -> String {
    match lang {
        Lang::En => format!(
            "no test told it apart from the implementation. If none can (an equivalent mutant), \
             record it in {file}: remove `killers` and add equivalent = \"why no test can tell\"; \
             verify then expects it to survive. Otherwise the suite lacks an observation: add a \
             test that reads what the diff above changes (a return value, an error or the stored row)."
        ),
        Lang::Ja => format!(
            "どのテストも実装と区別できませんでした。区別できるテストがありえない（等価なミュータント）なら、\
             {file} の `killers` を消して equivalent = \"区別できない理由\" を書いてください。verify はその後、\
             生存を期待します。そうでなければスイートに観測が足りません。上の差分が変えるもの（戻り値、エラー、\
             保存された行）を読むテストを追加してください。"
        ),
    }
}

/// What to do about a mutant declared equivalent that a test killed.
pub(super) fn equivalent_killed_next(lang: Lang, file: &str) -> String {
    match lang {
        Lang::En => format!(
            "it is declared equivalent, but tests tell it apart: remove `equivalent` from {file} and declare the tests that kill it as `killers`"
        ),
        Lang::Ja => format!(
            "等価と宣言されていますが、テストが区別しました: {file} の `equivalent` を消し、検出したテストを `killers` に書いてください"
        ),
    }
}

/// What to do about a declared killer that passed on its mutant, which
/// other tests killed (`killers`, their names).
pub(super) fn wrong_killer_next(lang: Lang, file: &str, killers: &str) -> String {
    match lang {
        Lang::En => format!(
            "a test declared in {file} does not tell this mutant apart. If the tests that do ({killers}) \
             are the ones that should, declare them as `killers`; otherwise change the diff so that it \
             breaks what the declared test observes."
        ),
        Lang::Ja => format!(
            "{file} で宣言されたテストがこのミュータントを区別しません。区別したテスト（{killers}）が\
             本来の検出役なら、それらを `killers` に書いてください。そうでなければ、宣言したテストが\
             観測するものを壊すように差分を変えてください。"
        ),
    }
}

/// A mutant's outcome as the screen names it, from its JSON label.
pub(super) fn outcome_named(lang: Lang, label: &str) -> &'static str {
    [
        MutantOutcome::Killed,
        MutantOutcome::Crashed,
        MutantOutcome::Timeout,
        MutantOutcome::Survived,
        MutantOutcome::Unviable,
        MutantOutcome::Stale,
    ]
    .into_iter()
    .find(|o| o.label() == label)
    .map_or("?", |o| outcome(o, lang))
}

/// A test's outcome as the screen names it (from its JSON label).
pub(super) fn test_outcome(label: &str, lang: Lang) -> &str {
    match (lang, label) {
        (Lang::Ja, "failed") => "失敗",
        (Lang::Ja, "crashed") => "クラッシュ",
        (Lang::Ja, "timeout") => "タイムアウト",
        (Lang::Ja, "not started") => "未着手",
        (Lang::Ja, "no verdict") => "判定なし",
        (Lang::Ja, "passed") => "合格",
        (_, label) => label,
    }
}

/// A mutant's test time, labelled as what it is: its tests' times added up
/// (they run beside other mutants' tests, so it is more than the wall time).
pub(super) fn test_time(lang: Lang, secs: f64) -> String {
    match lang {
        Lang::En => format!("{secs:.1}s of tests"),
        Lang::Ja => format!("テスト計 {secs:.1} 秒"),
    }
}

/// How many more there are than the ones named (` +3 more`).
pub(super) fn more(lang: Lang, n: usize) -> String {
    match lang {
        Lang::En => format!(" +{n} more"),
        Lang::Ja => format!("、ほか {n} 件"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mutant_is_singular_and_no_space_comes_before_a_comma() {
        let shown = |text: String| {
            assert!(!text.contains(" ,"), "{text}");
            assert!(!text.contains("1 mutants"), "{text}");
            assert!(!text.contains("all 1 "), "{text}");
            text
        };
        assert_eq!(
            shown(verifying(Lang::En, 1, "src/lease.rs", "mutants")),
            "1 mutant of src/lease.rs from mutants"
        );
        assert_eq!(
            shown(verifying(Lang::En, 2, "src/lease.rs", "mutants")),
            "2 mutants of src/lease.rs from mutants"
        );
        assert_eq!(
            shown(verdict(Lang::En, 1, 0, "1 killed")),
            "1 mutant, as declared (1 killed)"
        );
        assert_eq!(
            shown(verdict(Lang::En, 1, 1, "1 survived")),
            "1 of 1 mutant not as declared (1 survived)"
        );
        assert_eq!(
            shown(verdict(Lang::Ja, 1, 0, "1 検出")),
            "1 個のミュータントが宣言どおりです（1 検出）"
        );
        for lang in Lang::ALL {
            for (n, ok) in [(1, 1), (1, 0), (5, 5), (5, 1), (12, 12)] {
                shown(step_tally(lang, n, ok));
            }
        }
        // What follows the count starts in one column, whatever the count.
        let after = |text: &str| {
            let comma = text.find(", ").expect("a comma") + 2;
            comma + text[comma..].len() - text[comma..].trim_start().len()
        };
        assert_eq!(
            after(&step_tally(Lang::En, 1, 1)),
            after(&step_tally(Lang::En, 5, 5))
        );
        assert_eq!(step_tally(Lang::En, 1, 0), " 1 mutant,  not as declared");
        assert_eq!(step_tally(Lang::En, 5, 4), " 5 mutants, 1 not as declared");
        assert_eq!(step_tally(Lang::Ja, 1, 1), " 1 個、宣言どおり");
    }
}
