//! What `verify --predictions` prints: each prediction beside what happened
//! (every kind of observation its killers made, and which tests made it),
//! with the tests scored by precision and recall, and the score out of the
//! mutants the form holds.

use std::fmt::Write as _;

use super::predictions::{Happened, Scorecard, Scored};
use crate::engine::outcome::MutantOutcome;
use crate::lab::mutant::Mutant;
use crate::lab::worksheet::Lang;
use crate::output::printer::Layout;
use crate::output::width::wrap;

struct Words {
    title: &'static str,
    step: &'static str,
    predicted: &'static str,
    happened: &'static str,
    nothing: &'static str,
    no_observation: &'static str,
    no_test: &'static str,
    score: &'static str,
    why: &'static str,
    /// After a label: `: ` in English, `：` in Japanese.
    colon: &'static str,
}

fn words(lang: Lang) -> Words {
    match lang {
        Lang::En => Words {
            title: "Predictions",
            step: "step",
            predicted: "you predicted",
            happened: "what happened",
            nothing: "(nothing)",
            no_observation: "(no observation)",
            no_test: "(no test)",
            score: "Score",
            why: "Why",
            colon: ": ",
        },
        Lang::Ja => Words {
            title: "予想と結果",
            step: "ステップ",
            predicted: "予想",
            happened: "結果",
            nothing: "（なし）",
            no_observation: "（観測なし）",
            no_test: "（テストなし）",
            score: "得点",
            why: "解説",
            colon: "：",
        },
    }
}

/// What a group of killers saw, as a reader of `lang` says it. Python has
/// no panics: an exception failed the call.
fn seen(h: &Happened, lang: Lang, python: bool) -> String {
    match (h.observation, h.outcome, lang) {
        (Some(kind), _, lang) => kind.label(lang).to_string(),
        (None, Some("panicked"), Lang::En) if python => "an exception, no observation".into(),
        (None, Some("panicked"), Lang::Ja) if python => "例外（観測なし）".into(),
        (None, Some("panicked"), Lang::En) => "a panic, no observation".into(),
        (None, Some("crashed"), Lang::En) => "a crash, no observation".into(),
        (None, Some("timeout"), Lang::En) => "a time limit, no observation".into(),
        (None, _, Lang::En) => "a failure without an observation".into(),
        (None, Some("panicked"), Lang::Ja) => "パニック（観測なし）".into(),
        (None, Some("crashed"), Lang::Ja) => "クラッシュ（観測なし）".into(),
        (None, Some("timeout"), Lang::Ja) => "時間切れ（観測なし）".into(),
        (None, _, Lang::Ja) => "観測のない失敗".into(),
    }
}

/// Why a mutant that no test killed is not scored.
fn unscored(outcome: MutantOutcome, lang: Lang) -> &'static str {
    match (outcome, lang) {
        (MutantOutcome::Unviable, Lang::En) => "it does not compile: not scored",
        (MutantOutcome::Stale, Lang::En) => "its find text is not there exactly once: not scored",
        (_, Lang::En) => "every test passed: not scored",
        (MutantOutcome::Unviable, Lang::Ja) => "コンパイルできません（採点しません）",
        (MutantOutcome::Stale, Lang::Ja) => {
            "find の文字列がちょうど 1 回現れません（採点しません）"
        }
        (_, Lang::Ja) => "すべてのテストが通りました（採点しません）",
    }
}

/// The predictions beside what happened, and the score.
pub fn render_predictions(
    layout: &Layout,
    card: &Scorecard,
    mutants: &[Mutant],
    lang: Lang,
) -> String {
    let s = &layout.out;
    let w = words(lang);
    let mut out = String::new();
    let _ = writeln!(out, "\n{}", s.bold(w.title));
    for m in &card.mutants {
        out.push_str(&render_scored(layout, m, mutants, lang));
    }
    let percent = if card.max_points > 0.0 {
        (card.points / card.max_points * 100.0).round()
    } else {
        0.0
    };
    let of = card.mutants.len() - card.scored;
    let total = match lang {
        Lang::En => format!(
            "{}{}{:.2}/{} ({percent}%) for {}",
            w.score,
            w.colon,
            card.points,
            card.max_points,
            match card.scored {
                1 => "1 prediction".to_string(),
                n => format!("{n} predictions"),
            }
        ),
        Lang::Ja => format!(
            "{}{}{:.2}/{}（{percent}%）、予想 {} 個",
            w.score, w.colon, card.points, card.max_points, card.scored
        ),
    };
    let rest = match (of, lang) {
        (0, _) => String::new(),
        (n, Lang::En) => format!(" ({n} more not scored: no test killed it)"),
        (n, Lang::Ja) => {
            format!("（ほかの {n} 個はどのテストも検出しなかったので採点していません）")
        }
    };
    let _ = writeln!(out, "\n{}", wrap(&format!("{total}{rest}"), layout.width));
    out
}

fn render_scored(layout: &Layout, m: &Scored, mutants: &[Mutant], lang: Lang) -> String {
    let s = &layout.out;
    let w = words(lang);
    let mut out = String::new();
    let mark = if m.max_points == 0.0 {
        s.dim("-")
    } else if m.points >= m.max_points {
        s.green("✓")
    } else if m.points > 0.0 {
        s.yellow("~")
    } else {
        s.red("✗")
    };
    let points = if m.max_points > 0.0 {
        format!("  {:.2}/{}", m.points, m.max_points)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "\n{mark} {} {}{points}",
        s.bold(&m.mutant),
        s.dim(&format!("({} {})", w.step, m.step)),
    );
    // Laid out as what happened is, to be read side by side.
    let observation = m.predicted_observation.map(|o| o.label(lang));
    if observation.is_none() && m.predicted_tests.is_empty() {
        let _ = writeln!(out, "    {}{}{}", w.predicted, w.colon, w.nothing);
    } else {
        let tests = if m.predicted_tests.is_empty() {
            w.no_test.to_string()
        } else {
            m.predicted_tests.join(", ")
        };
        let line = format!(
            "      - {}{}{tests}",
            observation.unwrap_or(w.no_observation),
            w.colon
        );
        let _ = writeln!(out, "    {}{}", w.predicted, w.colon.trim_end());
        let _ = writeln!(out, "{}", wrap(&line, layout.width));
    }
    if m.max_points == 0.0 {
        let _ = writeln!(
            out,
            "{}",
            wrap(
                &format!("    {}{}{}", w.happened, w.colon, unscored(m.outcome, lang)),
                layout.width
            )
        );
        return out;
    }
    let _ = writeln!(out, "    {}{}", w.happened, w.colon.trim_end());
    // The edition is the mutant's file's: `python/lease.py`, or a lab's `lease.py`.
    let python = mutants.iter().find(|x| x.id == m.mutant).is_some_and(|x| {
        crate::lab::edition::Edition::of_file(&x.file) == crate::lab::edition::Edition::Python
    });
    for h in &m.happened {
        let line = format!(
            "      - {}{}{}",
            seen(h, lang, python),
            w.colon,
            h.tests.join(", ")
        );
        let _ = writeln!(out, "{}", wrap(&line, layout.width));
    }
    let right = m
        .predicted_tests
        .iter()
        .filter(|t| m.killers.contains(t))
        .count();
    let wrong = m.predicted_tests.len() - right;
    let precision = m.precision.map_or("-".to_string(), |p| format!("{p:.2}"));
    let tally = match lang {
        Lang::En => format!(
            "    tests: {right} of its {} named, {wrong} named that do not kill it (precision {precision}, recall {:.2})",
            match m.killers.len() {
                1 => "1 killer".to_string(),
                n => format!("{n} killers"),
            },
            m.recall
        ),
        Lang::Ja => format!(
            "    テスト：検出した {} 個のうち {right} 個を指名、検出しないテストを {wrong} 個指名（適合率 {precision}、再現率 {:.2}）",
            m.killers.len(),
            m.recall
        ),
    };
    let _ = writeln!(out, "{}", s.dim(&wrap(&tally, layout.width)));
    if m.points < m.max_points
        && let Some(mutant) = mutants.iter().find(|x| x.id == m.mutant)
    {
        let text = format!("    {}{}{}", w.why, w.colon, mutant.explanation.get(lang));
        let _ = writeln!(out, "{}", wrap(&text, layout.width));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::observation::ObservationKind;

    fn entry(id: &str, outcome: MutantOutcome, happened: Vec<Happened>, max: f64) -> Scored {
        let killers: Vec<String> = happened.iter().flat_map(|h| h.tests.clone()).collect();
        Scored {
            mutant: id.into(),
            step: 4,
            outcome,
            predicted_observation: Some(ObservationKind::Error),
            predicted_tests: Vec::new(),
            observations: happened.iter().filter_map(|h| h.observation).collect(),
            happened,
            killers,
            precision: None,
            recall: 0.0,
            points: 0.0,
            max_points: max,
        }
    }

    #[test]
    fn every_entry_says_what_happened_and_one_no_test_killed_is_not_scored() {
        let card = Scorecard {
            mutants: vec![
                entry(
                    "crashes",
                    MutantOutcome::Crashed,
                    vec![Happened {
                        observation: None,
                        outcome: Some("crashed"),
                        tests: vec!["step4::a".into()],
                    }],
                    1.0,
                ),
                entry("survives", MutantOutcome::Survived, Vec::new(), 0.0),
            ],
            scored: 1,
            points: 0.0,
            max_points: 1.0,
        };
        let en = render_predictions(&Layout::plain(), &card, &[], Lang::En);
        assert!(en.contains("✗ crashes (step 4)  0.00/1\n"), "{en}");
        assert!(
            en.contains("    you predicted:\n      - error: (no test)\n"),
            "{en}"
        );
        assert!(
            en.contains("    what happened:\n      - a crash, no observation: step4::a\n"),
            "{en}"
        );
        assert!(en.contains("- survives (step 4)\n"), "{en}");
        assert!(
            en.contains("    what happened: every test passed: not scored\n"),
            "{en}"
        );
        assert!(
            en.contains(
                "Score: 0.00/1 (0%) for 1 prediction (1 more not scored: no test killed it)"
            ),
            "{en}"
        );
        let ja = render_predictions(&Layout::plain(), &card, &[], Lang::Ja);
        assert!(
            ja.contains("      - クラッシュ（観測なし）：step4::a\n"),
            "{ja}"
        );
        assert!(
            ja.contains("    結果：すべてのテストが通りました（採点しません）\n"),
            "{ja}"
        );
    }
}
