//! The kill matrix: tests (rows, grouped by step) against mutants (columns,
//! numbered in report order), fitted to the width it is printed in. Mutants
//! are split into blocks that fit, a step's mutants kept together when they
//! can be; each block lists its mutants' numbers and ids below it, and shows
//! only the tests that kill one of its mutants or are declared for one (a row
//! of dots says nothing). Every column of a cell is the column of its header
//! digits, so the matrix reads back exactly (a test does so).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::Report;
use super::words::words;
use crate::engine::outcome::TestOutcome;
use crate::lab::suite;
use crate::output::printer::Layout;
use crate::output::width::{display_width, pad_right, truncate, wrap};

/// Where rows start: the name column is indented this much.
const ROW_INDENT: usize = 4;
/// The least number of mutant columns a block holds (names are cut to make room).
const MIN_COLUMNS: usize = 8;
/// The widest the name column gets.
const MAX_NAME: usize = 48;

/// The kill matrix of every mutant of the report.
pub fn render_kill_matrix(layout: &Layout, report: &Report) -> String {
    let all: Vec<usize> = (0..report.mutants.len()).collect();
    render_kill_matrix_of(layout, report, &all)
}

/// The kill matrix of the mutants `columns` (indices into the report's),
/// save those that ran no test (stale or unviable: a column of `-` says
/// nothing their details do not); nothing when no column is left.
pub(crate) fn render_kill_matrix_of(layout: &Layout, report: &Report, columns: &[usize]) -> String {
    let w = words(layout.lang);
    let s = &layout.out;
    let mut out = String::new();
    let columns: Vec<usize> = columns
        .iter()
        .copied()
        .filter(|&m| !report.mutants[m].tests.is_empty())
        .collect();
    if columns.is_empty() {
        return out;
    }
    let tests = suite::tests();
    let flaky: BTreeSet<&str> = report.baseline.flaky.iter().map(String::as_str).collect();
    let digits = report.mutants.len().max(1).to_string().len();
    let _ = writeln!(out, "{}", s.bold(w.kill_matrix));
    let _ = writeln!(
        out,
        "{}",
        s.dim(&wrap(&format!("  {}", w.legend), layout.width))
    );
    let _ = writeln!(
        out,
        "{}",
        s.dim(&wrap(&format!("  {}", w.rows_left_out), layout.width))
    );
    let short = |name: &str| name.split_once("::").map_or(name, |(_, n)| n).to_string();
    let longest = tests
        .iter()
        .map(|t| display_width(&short(&t.name)))
        .max()
        .unwrap_or(10)
        .min(MAX_NAME);
    // Room for the cells: two columns each.
    let room = |name: usize| layout.width.saturating_sub(ROW_INDENT + name + 1) / 2;
    let wanted = columns.len().clamp(1, MIN_COLUMNS);
    let name_width = if room(longest) >= wanted {
        longest
    } else {
        layout
            .width
            .saturating_sub(ROW_INDENT + 1 + 2 * wanted)
            .max(12)
    };
    let per_block = room(name_width).max(1);
    for block in blocks(report, &columns, per_block) {
        out.push('\n');
        // The header: each mutant's number, read downwards, above its cells.
        for row in 0..digits {
            let header: Vec<String> = block
                .iter()
                .map(|&m| {
                    let number = format!("{:>digits$}", m + 1);
                    number[row..row + 1].to_string()
                })
                .collect();
            let line = format!(
                "{}{}",
                " ".repeat(ROW_INDENT + name_width + 1),
                header.join(" ")
            );
            let _ = writeln!(out, "{}", s.dim(line.trim_end()));
        }
        let mut step = 0;
        for test in &tests {
            let cells: Vec<(char, String)> = block
                .iter()
                .map(|&m| cell(layout, report, m, &test.name, &flaky))
                .collect();
            if cells.iter().all(|(c, _)| *c == '.' || *c == '-') {
                continue;
            }
            if test.step != step {
                step = test.step;
                let _ = writeln!(out, "  {}", s.cyan(&format!("{} {step}", w.step)));
            }
            let name = pad_right(&truncate(&short(&test.name), name_width), name_width);
            let painted: Vec<&str> = cells.iter().map(|(_, p)| p.as_str()).collect();
            let _ = writeln!(out, "    {name} {}", painted.join(" "));
        }
        for &m in &block {
            let mutant = &report.mutants[m];
            let mark = if mutant.as_declared {
                s.green("✓")
            } else {
                s.red("✗")
            };
            let line = format!(
                "  {:>digits$} {mark} {} {}",
                m + 1,
                mutant.id,
                s.dim(&format!("({} {})", w.step, mutant.step))
            );
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// The cell of `test` under mutant `m`: its symbol and how it is painted.
fn cell(
    layout: &Layout,
    report: &Report,
    m: usize,
    test: &str,
    flaky: &BTreeSet<&str>,
) -> (char, String) {
    let s = &layout.out;
    let mutant = &report.mutants[m];
    let killer = mutant.killers.iter().any(|k| k == test);
    let survivor = mutant.survivors.iter().any(|k| k == test);
    let (symbol, paint): (char, fn(&crate::output::style::Style, &str) -> String) =
        match mutant.tests.get(test) {
            None => ('-', crate::output::style::Style::dim),
            Some(_) if flaky.contains(test) => ('~', crate::output::style::Style::yellow),
            Some(TestOutcome::Passed) if killer => ('x', crate::output::style::Style::red),
            Some(TestOutcome::Passed) if survivor => ('o', crate::output::style::Style::green),
            Some(TestOutcome::Passed) => ('.', crate::output::style::Style::dim),
            Some(_) if survivor => ('!', crate::output::style::Style::red),
            Some(_) if killer => ('K', crate::output::style::Style::green),
            Some(_) => ('k', crate::output::style::Style::yellow),
        };
    (symbol, paint(s, &symbol.to_string()))
}

/// The tests that kill none of the report's mutants, wrapped to the width.
pub(crate) fn render_killing_nothing(layout: &Layout, report: &Report) -> String {
    let w = words(layout.lang);
    let nothing: Vec<String> = suite::tests()
        .into_iter()
        .filter(|t| {
            report
                .mutants
                .iter()
                .all(|m| m.tests.get(&t.name).is_none_or(TestOutcome::passed))
        })
        .map(|t| t.name)
        .collect();
    if nothing.is_empty() || report.filtered {
        return String::new();
    }
    let text = format!(
        "{} ({}): {}",
        layout.out.bold(w.kill_nothing),
        nothing.len(),
        nothing.join(", ")
    );
    wrap(&text, layout.width) + "\n"
}

/// `columns` in blocks of at most `per_block`, cut at a change of step
/// whenever the next step's mutants would not fit whole.
fn blocks(report: &Report, columns: &[usize], per_block: usize) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &m in columns {
        match groups.last_mut() {
            Some(group) if report.mutants[group[0]].step == report.mutants[m].step => group.push(m),
            _ => groups.push(vec![m]),
        }
    }
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    for group in groups {
        for chunk in group.chunks(per_block) {
            match blocks.last_mut() {
                Some(block) if block.len() + chunk.len() <= per_block => {
                    block.extend_from_slice(chunk)
                }
                _ => blocks.push(chunk.to_vec()),
            }
        }
    }
    blocks
}
