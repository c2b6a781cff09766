//! The wheats' lines of `verify`'s summary: the shipped correct
//! implementations run through the suite beside the mutants, each of which
//! must pass every test, as the reference does.

use std::fmt::Write as _;

use super::WheatsChecked;
use crate::lab::lang::Lang;
use crate::output::printer::{Layout, indent};
use crate::output::width::wrap;

/// How many wheats pass the suite; each that does not, with its failing
/// tests (or that it does not compile).
pub(super) fn render_wheats(layout: &Layout, wheats: &WheatsChecked) -> String {
    let line = sentence(layout.lang, wheats.checked, wheats.failed.len());
    let mut out = String::new();
    if wheats.failed.is_empty() {
        let _ = writeln!(out, "{}", wrap(&line, layout.width));
        return out;
    }
    let _ = writeln!(out, "{}", layout.out.red(&wrap(&line, layout.width)));
    for failed in &wheats.failed {
        let why = match (failed.tests.is_empty(), layout.lang) {
            (false, _) => failed.tests.join(", "),
            (true, Lang::En) => "does not compile (the messages are in --json)".to_string(),
            (true, Lang::Ja) => "コンパイルできません（メッセージは --json に）".to_string(),
        };
        let text = format!("{}: {why}", failed.path);
        let _ = writeln!(out, "{}", indent(&wrap(&text, layout.width - 4), 2));
    }
    out
}

/// The wheats' line.
fn sentence(lang: Lang, checked: usize, failed: usize) -> String {
    match (lang, failed) {
        (Lang::En, 0) if checked == 1 => "the wheat passes the suite".to_string(),
        (Lang::En, 0) => format!("all {checked} wheats pass the suite"),
        (Lang::En, n) => {
            format!("{n} of {checked} wheats fail the suite (every wheat must pass it):")
        }
        (Lang::Ja, 0) => format!("正しい実装（wheat）{checked} 個がすべてスイートに通りました"),
        (Lang::Ja, n) => format!(
            "正しい実装（wheat）{checked} 個中 {n} 個がスイートに通りません（すべて通るべきです）:"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::verify::WheatFailure;

    fn checked(failed: usize) -> WheatsChecked {
        WheatsChecked {
            checked: 22,
            passed: 22 - failed,
            failed: (0..failed)
                .map(|i| WheatFailure {
                    id: format!("w{i}"),
                    path: format!("wheats/w{i}.toml"),
                    tests: if i == 0 {
                        vec![
                            "step4::reclaims_at_exact_expiry".to_string(),
                            "step4::fresh_job_is_free_at_time_zero".to_string(),
                        ]
                    } else {
                        Vec::new()
                    },
                    detail: "it does not compile:\nerror[E0308]: mismatched types".to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_wheats_lines_in_both_languages() {
        for lang in [Lang::En, Lang::Ja] {
            let mut printer = Layout::plain();
            printer.lang = lang;
            printer.width = 80;
            let screen = format!(
                "{}{}",
                render_wheats(&printer, &checked(0)),
                render_wheats(&printer, &checked(2))
            );
            insta::assert_snapshot!(format!("wheats_{}", lang.code()), screen);
        }
    }
}
