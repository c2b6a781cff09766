use super::*;

use tempfile::TempDir;

/// A worksheet directory holding the given file contents.
fn dir_with(lab: &str, steps: &str) -> TempDir {
    let dir = TempDir::new().expect("create a temp dir");
    std::fs::write(dir.path().join(LAB_FILE), lab).expect("write lab.toml");
    std::fs::write(dir.path().join(STEPS_FILE), steps).expect("write steps.toml");
    dir
}

fn load_err(lab: &str, steps: &str) -> WorksheetError {
    let dir = dir_with(lab, steps);
    match Worksheet::load(dir.path()) {
        Ok(_) => panic!("the worksheet was accepted"),
        Err(err) => err,
    }
}

/// The 1-based line of the first line of `src` containing `needle`.
fn line_of(src: &str, needle: &str) -> usize {
    src.lines()
        .position(|line| line.contains(needle))
        .expect("needle in source")
        + 1
}

#[test]
fn builtin_loads_and_validates() {
    // Checked directly first, so that a broken file shows its error here.
    let parsed = Worksheet::parse(Path::new(BUILTIN_DIR), BUILTIN_LAB, BUILTIN_STEPS);
    let worksheet = parsed.unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(worksheet, Worksheet::builtin());

    let slugs: Vec<&str> = worksheet.steps.iter().map(|s| s.slug.as_str()).collect();
    assert_eq!(slugs, SLUGS);
    assert_eq!(worksheet.step(4).map(|s| s.slug.as_str()), Some("claim"));
    assert_eq!(worksheet.step_by_slug("renew").map(|s| s.number), Some(5));
    assert!(worksheet.step(0).is_none() && worksheet.step(9).is_none());
    assert!(worksheet.step_by_slug("claim_all").is_none());
    assert!(
        worksheet
            .lab
            .title
            .get(Lang::En)
            .starts_with("Keeping a stale")
    );
}

#[test]
fn code_in_the_worksheet_fits_80_columns_even_in_a_doc_comment() {
    // Prose is wrapped by whoever shows it; code is shown as written, in
    // a terminal, in WORKSHEET.md and behind `/// ` in a lab's lib.rs.
    let worksheet = Worksheet::builtin();
    let lab = &worksheet.lab;
    let mut texts = vec![
        &lab.summary,
        &lab.why,
        &lab.how,
        &lab.exercise,
        &lab.in_the_field,
        &lab.next,
    ];
    for step in &worksheet.steps {
        texts.extend([&step.contract, &step.rationale, &step.question]);
    }
    let mut blocks = 0;
    for lang in Lang::ALL {
        for text in &texts {
            let mut code = false;
            for line in text.get(lang).lines() {
                if line.trim_start().starts_with("```") {
                    code = !code;
                    blocks += usize::from(code);
                    continue;
                }
                // Columns: two for anything wider than ASCII, to be safe.
                let columns: usize = line.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum();
                assert!(
                    !code || columns + 4 <= 80,
                    "{lang}: {columns} columns: {line}"
                );
            }
        }
    }
    assert!(blocks >= 2, "the code blocks are found: {blocks}");
}

#[test]
fn the_python_edition_says_the_contract_in_pythons_words_only() {
    let python = Worksheet::python();
    let rust = Worksheet::builtin();
    assert_eq!(python.steps.len(), 8);
    let mut texts = vec![
        &python.lab.title,
        &python.lab.summary,
        &python.lab.why,
        &python.lab.how,
        &python.lab.exercise,
        &python.lab.in_the_field,
        &python.lab.next,
    ];
    for (step, shared) in python.steps.iter().zip(&rust.steps) {
        assert_eq!((step.number, &step.slug), (shared.number, &shared.slug));
        assert_ne!(step.contract, shared.contract, "step {}", step.number);
        texts.extend([&step.title, &step.contract, &step.rationale, &step.question]);
    }
    for lang in Lang::ALL {
        for text in &texts {
            let text = text.get(lang);
            for rust_word in [
                "Ok(",
                "Err(",
                "Some(",
                "Result<",
                "LeaseError",
                "Vec",
                "&str",
                "f64",
                "i64",
                "Rust",
                "todo!",
                "`true`",
                "`false`",
                "Job",
            ] {
                assert!(!text.contains(rust_word), "{lang}: `{rust_word}` in {text}");
            }
        }
    }
    let claim = python.step_by_slug("claim").expect("claim");
    assert!(claim.contract.en.contains("raises `ValueError`"));
    assert!(claim.contract.ja.contains("`ValueError` を上げます"));
    assert_eq!(Worksheet::of(Edition::Python), python);
    assert_eq!(Worksheet::of(Edition::Rust), rust);
}

#[test]
fn a_python_file_out_of_step_is_refused_where_it_goes_wrong() {
    let path = Path::new(PYTHON_FILE);
    let src = BUILTIN_PYTHON.replacen("slug = \"state\"", "slug = \"status\"", 1);
    let err = Worksheet::builtin().in_python(path, &src).unwrap_err();
    let WorksheetError::Invalid { at, message, .. } = &err else {
        panic!("expected a validation error, got {err:?}");
    };
    assert!(message.contains("entry 3 is step 3 (status)"), "{message}");
    assert_eq!(
        at.as_ref().map(|at| at.line),
        Some(line_of(&src, "number = 3"))
    );
    let src = BUILTIN_PYTHON.replacen(&Worksheet::python().lab.summary.ja, "", 1);
    let err = Worksheet::builtin().in_python(path, &src).unwrap_err();
    assert!(
        err.to_string().contains("[summary] has no ja text"),
        "{err}"
    );
    let src = BUILTIN_PYTHON.replacen("[[step]]\nnumber = 8", "[[stop]]\nnumber = 8", 1);
    let err = Worksheet::builtin().in_python(path, &src).unwrap_err();
    assert!(matches!(err, WorksheetError::Parse { .. }), "{err}");
}

#[test]
fn the_checked_in_directory_loads_like_the_builtin() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(BUILTIN_DIR);
    let loaded = Worksheet::load(&dir).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(loaded, Worksheet::builtin());
}

#[test]
fn texts_are_trimmed_and_picked_by_language() {
    let worksheet = Worksheet::builtin();
    let claim = worksheet.step_by_slug("claim").expect("claim step");
    for lang in Lang::ALL {
        let contract = claim.contract.get(lang);
        assert_eq!(contract, contract.trim());
        assert!(contract.starts_with("`claim(path, job_id, owner, now, ttl)`"));
    }
    assert_ne!(claim.contract.get(Lang::Ja), claim.contract.get(Lang::En));
}

#[test]
fn malformed_toml_names_the_file_line_and_column() {
    let steps = "[[step]]\nnumber = 1\nslug = \"init_db\n";
    let err = load_err(BUILTIN_LAB, steps);
    let WorksheetError::Parse { path, at, .. } = &err else {
        panic!("expected a parse error, got {err:?}");
    };
    assert!(path.ends_with(STEPS_FILE));
    let at = at.as_ref().expect("a location");
    assert_eq!(at.line, 3);
    assert_eq!(at.source_line, "slug = \"init_db");
    let shown = err.to_string();
    assert!(
        shown.contains(&format!("{STEPS_FILE}:3:{}:", at.column)),
        "{shown}"
    );
    assert!(shown.contains("next:"), "{shown}");
}

#[test]
fn an_unknown_key_in_a_step_is_refused() {
    let steps = BUILTIN_STEPS.replacen("slug = \"state\"", "slug = \"state\"\ncolour = \"red\"", 1);
    let err = load_err(BUILTIN_LAB, &steps);
    let WorksheetError::Parse { at, message, .. } = &err else {
        panic!("expected a parse error, got {err:?}");
    };
    assert!(message.contains("colour"), "{message}");
    assert_eq!(
        at.as_ref().map(|at| at.line),
        Some(line_of(&steps, "colour"))
    );
}

#[test]
fn an_unknown_language_in_the_lab_is_refused() {
    let lab = BUILTIN_LAB.replacen("[summary]\n", "[summary]\nfr = \"Bonjour\"\n", 1);
    let err = load_err(&lab, BUILTIN_STEPS);
    let WorksheetError::Parse { path, message, .. } = &err else {
        panic!("expected a parse error, got {err:?}");
    };
    assert!(path.ends_with(LAB_FILE));
    assert!(message.contains("fr"), "{message}");
}

/// `BUILTIN_STEPS` without its step about `slug`.
fn steps_without(slug: &str) -> String {
    let mut parts: Vec<&str> = BUILTIN_STEPS.split("[[step]]").collect();
    let before = parts.len();
    parts.retain(|part| !part.contains(&format!("slug = \"{slug}\"")));
    assert_eq!(parts.len(), before - 1, "exactly one step about {slug}");
    parts.join("[[step]]")
}

#[test]
fn a_missing_step_is_refused() {
    let err = load_err(BUILTIN_LAB, &steps_without("claim"));
    let WorksheetError::Invalid { path, message, .. } = &err else {
        panic!("expected a validation error, got {err:?}");
    };
    assert!(path.ends_with(STEPS_FILE));
    assert!(message.contains("found 7 steps, expected 8"), "{message}");
    assert!(message.contains("claim"), "{message}");
}

#[test]
fn an_empty_steps_file_is_refused() {
    let err = load_err(BUILTIN_LAB, "# nothing yet\n");
    assert!(
        err.to_string().contains("found 0 steps, expected 8"),
        "{err}"
    );
}

#[test]
fn steps_out_of_order_are_refused_where_they_go_wrong() {
    // Step 7 (release) moved to the end: position 7 now holds number 8.
    let release = BUILTIN_STEPS
        .split("[[step]]")
        .find(|part| part.contains("slug = \"release\""))
        .expect("release step");
    let steps = format!("{}[[step]]{release}", steps_without("release"));
    let err = load_err(BUILTIN_LAB, &steps);
    let WorksheetError::Invalid { at, message, .. } = &err else {
        panic!("expected a validation error, got {err:?}");
    };
    assert!(
        message.contains("step 7 in file order has number 8"),
        "{message}"
    );
    assert_eq!(
        at.as_ref().map(|at| at.line),
        Some(line_of(&steps, "number = 8"))
    );
}

#[test]
fn a_wrong_slug_is_refused() {
    let steps = BUILTIN_STEPS.replacen("slug = \"state\"", "slug = \"status\"", 1);
    let err = load_err(BUILTIN_LAB, &steps);
    let WorksheetError::Invalid { at, message, .. } = &err else {
        panic!("expected a validation error, got {err:?}");
    };
    assert!(message.contains("`status`, expected `state`"), "{message}");
    assert_eq!(
        at.as_ref().map(|at| at.line),
        Some(line_of(&steps, "\"status\""))
    );
}

#[test]
fn empty_text_is_refused_in_either_language() {
    let steps = BUILTIN_STEPS.replacen(
        "title.en = \"Read the stored state\"",
        "title.en = \"  \"",
        1,
    );
    let err = load_err(BUILTIN_LAB, &steps);
    let WorksheetError::Invalid { at, message, .. } = &err else {
        panic!("expected a validation error, got {err:?}");
    };
    assert!(
        message.contains("step 3 (state) has no en title"),
        "{message}"
    );
    assert_eq!(
        at.as_ref().map(|at| at.line),
        Some(line_of(&steps, "title.en = \"  \""))
    );

    let title = format!("ja = \"{}\"", Worksheet::builtin().lab.title.ja);
    let lab = BUILTIN_LAB.replacen(&title, "ja = \"\"", 1);
    let err = load_err(&lab, BUILTIN_STEPS);
    assert!(err.to_string().contains("[title] has no ja text"), "{err}");
}

#[test]
fn a_missing_directory_says_what_to_give() {
    let dir = TempDir::new().expect("create a temp dir");
    let err = Worksheet::load(&dir.path().join("nowhere")).expect_err("no such directory");
    assert!(matches!(err, WorksheetError::Read { .. }));
    let shown = err.to_string();
    assert!(
        shown.contains(LAB_FILE) && shown.contains("next:"),
        "{shown}"
    );
}

#[test]
fn locations_count_lines_and_characters_from_one() {
    let src = "a = 1\nあい = x\n";
    let offset = src.find('x').expect("x in source");
    let at = Location::at(src, offset);
    assert_eq!((at.line, at.column), (2, 6));
    assert_eq!(at.source_line, "あい = x");
    assert_eq!(Location::at(src, 0).line, 1);
    assert_eq!(Location::at(src, usize::MAX).line, 3);
}

#[test]
fn languages_parse_from_their_codes_only() {
    for lang in Lang::ALL {
        assert_eq!(lang.to_string().parse::<Lang>(), Ok(lang));
    }
    assert_eq!("ja".parse::<Lang>(), Ok(Lang::Ja));
    let err = "fr".parse::<Lang>().expect_err("fr is not offered");
    assert_eq!(
        err.to_string(),
        "unknown language `fr`: choose one of ja, en"
    );
}
