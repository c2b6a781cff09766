//! What `verify --predictions` prints: each prediction beside what happened.

use std::fmt::Write as _;

use crate::output::printer::Printer;

impl Printer {
    /// The predictions beside what happened, and the score.
    pub fn render_predictions(
        &self,
        card: &crate::commands::verify::predictions::Scorecard,
        mutants: &[crate::lab::mutant::Mutant],
        lang: crate::lab::worksheet::Lang,
    ) -> String {
        use crate::lab::worksheet::Lang;
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
            let mark = match m.points {
                2 => s.green("✓"),
                1 => s.yellow("~"),
                _ => s.red("✗"),
            };
            let _ = writeln!(
                out,
                "\n{mark} {} {}  {}/{}",
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
            let _ = writeln!(out, "    {predicted}: {guess}");
            let kinds: Vec<&str> = m.observations.iter().map(|o| o.name()).collect();
            let killers = if m.killers.len() > 3 {
                format!("{} (+{})", m.killers[..3].join(", "), m.killers.len() - 3)
            } else {
                m.killers.join(", ")
            };
            let _ = writeln!(out, "    {happened}: {} · {killers}", kinds.join(", "));
            if m.points < m.max_points
                && let Some(mutant) = mutants.iter().find(|x| x.id == m.mutant)
            {
                let _ = writeln!(out, "    {}: {}", s.dim(why), mutant.explanation.get(lang));
            }
        }
        let percent = (card.points * 100)
            .checked_div(card.max_points)
            .unwrap_or(0);
        let _ = writeln!(
            out,
            "\n{score}: {}/{} ({percent}%)",
            card.points, card.max_points
        );
        out
    }
}
