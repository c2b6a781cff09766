//! What `verify --predictions` prints: each prediction beside what happened,
//! with the tests scored by precision and recall.

use std::fmt::Write as _;

use crate::lab::worksheet::Lang;
use crate::output::printer::Printer;
use crate::output::width::wrap;

impl Printer {
    /// The predictions beside what happened, and the score.
    pub fn render_predictions(
        &self,
        card: &crate::commands::verify::predictions::Scorecard,
        mutants: &[crate::lab::mutant::Mutant],
        lang: Lang,
    ) -> String {
        let s = &self.out;
        let (title, predicted, happened, nothing, score, why) = match lang {
            Lang::Ja => ("予想と結果", "予想", "結果", "（なし）", "得点", "解説"),
            Lang::En => (
                "Predictions",
                "you predicted",
                "what happened",
                "(nothing)",
                "Score",
                "Why",
            ),
        };
        let mut out = String::new();
        let _ = writeln!(out, "\n{}", s.bold(title));
        for m in &card.mutants {
            let mark = if m.points >= m.max_points {
                s.green("✓")
            } else if m.points > 0.0 {
                s.yellow("~")
            } else {
                s.red("✗")
            };
            let _ = writeln!(
                out,
                "\n{mark} {} {}  {:.2}/{}",
                s.bold(&m.mutant),
                s.dim(&format!("(step {})", m.step)),
                m.points,
                m.max_points
            );
            let mut guess: Vec<String> = m
                .predicted_observation
                .map(|o| o.name().to_string())
                .into_iter()
                .collect();
            guess.extend(m.predicted_tests.iter().cloned());
            let guess = if guess.is_empty() {
                nothing.to_string()
            } else {
                guess.join(" · ")
            };
            let _ = writeln!(
                out,
                "{}",
                wrap(&format!("    {predicted}: {guess}"), self.width)
            );
            let kinds: Vec<&str> = m.observations.iter().map(|o| o.name()).collect();
            let killers = if m.killers.len() > 3 {
                format!("{} (+{})", m.killers[..3].join(", "), m.killers.len() - 3)
            } else {
                m.killers.join(", ")
            };
            let _ = writeln!(
                out,
                "{}",
                wrap(
                    &format!("    {happened}: {} · {killers}", kinds.join(", ")),
                    self.width
                )
            );
            let right = m
                .predicted_tests
                .iter()
                .filter(|t| m.killers.contains(t))
                .count();
            let wrong = m.predicted_tests.len() - right;
            let tally = match lang {
                Lang::En => format!(
                    "    tests: {right} of its {} killers named, {wrong} named that do not kill it (precision {}, recall {:.2})",
                    m.killers.len(),
                    m.precision.map_or("-".to_string(), |p| format!("{p:.2}")),
                    m.recall
                ),
                Lang::Ja => format!(
                    "    テスト: 検出した {} 個のうち {right} 個を指名、検出しないテストを {wrong} 個指名（適合率 {}、再現率 {:.2}）",
                    m.killers.len(),
                    m.precision.map_or("-".to_string(), |p| format!("{p:.2}")),
                    m.recall
                ),
            };
            let _ = writeln!(out, "{}", s.dim(&wrap(&tally, self.width)));
            if m.points < m.max_points
                && let Some(mutant) = mutants.iter().find(|x| x.id == m.mutant)
            {
                let text = format!("    {}: {}", s.dim(why), mutant.explanation.get(lang));
                let _ = writeln!(out, "{}", wrap(&text, self.width));
            }
        }
        let percent = if card.max_points > 0.0 {
            (card.points / card.max_points * 100.0).round()
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "\n{score}: {:.2}/{} ({percent}%)",
            card.points, card.max_points
        );
        out
    }
}
