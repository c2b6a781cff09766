//! Reading back a value's `Debug` text (compact or pretty), so that two values
//! can be compared field by field: `Some(Job { id: "a", fence: 2 })` becomes
//! the leaves `id = "a"` and `fence = 2`. Only what `#[derive(Debug)]` writes
//! is understood; anything else is not read at all, and then shown as text.

/// One leaf of a value: where it is (field names and list positions, joined
/// with `.`; wrappers such as `Ok(..)` and `Some(..)` add nothing), where it
/// is with every wrapper and type (two values compare field by field only
/// when their leaves' shapes agree), and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Leaf {
    pub path: String,
    pub shape: String,
    pub text: String,
}

/// The leaves of the value `text`, and whether it has a named field anywhere
/// (a struct); `None` when it is not a derived `Debug` text.
pub(crate) fn fields(text: &str) -> Option<(Vec<Leaf>, bool)> {
    let tokens = tokenize(text)?;
    let mut parser = Parser { tokens, at: 0 };
    let value = parser.value()?;
    if parser.at != parser.tokens.len() {
        return None;
    }
    let mut leaves = Vec::new();
    let mut named = false;
    flatten(
        &value,
        &mut Vec::new(),
        &mut Vec::new(),
        &mut leaves,
        &mut named,
    );
    Some((leaves, named))
}

#[derive(Debug)]
enum Value {
    Atom(String),
    Struct(String, Vec<(String, Value)>),
    Tuple(String, Vec<Value>),
    List(Vec<Value>),
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Punct(char),
}

fn tokenize(text: &str) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '{' | '}' | '(' | ')' | '[' | ']' | ',' => {
                chars.next();
                tokens.push(Token::Punct(c));
            }
            ':' => {
                chars.next();
                if chars.peek() == Some(&':') {
                    // A path (`a::b`) belongs to the word before it.
                    chars.next();
                    match tokens.last_mut() {
                        Some(Token::Word(w)) => w.push_str("::"),
                        _ => return None,
                    }
                    let mut rest = String::new();
                    while let Some(&c) = chars.peek() {
                        if c.is_alphanumeric() || c == '_' {
                            rest.push(c);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    if let Some(Token::Word(w)) = tokens.last_mut() {
                        w.push_str(&rest);
                    }
                } else {
                    tokens.push(Token::Punct(':'));
                }
            }
            '"' | '\'' => {
                let quote = c;
                let mut word = String::new();
                word.push(c);
                chars.next();
                let mut closed = false;
                while let Some(c) = chars.next() {
                    word.push(c);
                    if c == '\\' {
                        word.push(chars.next()?);
                    } else if c == quote {
                        closed = true;
                        break;
                    }
                }
                if !closed {
                    return None;
                }
                tokens.push(Token::Word(word));
            }
            _ => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || "{}()[],:\"".contains(c) {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
        }
    }
    Some(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Token::Punct(c)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Value> {
        match self.peek()?.clone() {
            Token::Punct('(') => {
                self.at += 1;
                Some(Value::Tuple(String::new(), self.items(')')?))
            }
            Token::Punct('[') => {
                self.at += 1;
                Some(Value::List(self.items(']')?))
            }
            Token::Word(word) => {
                self.at += 1;
                if self.eat('{') {
                    let mut fields = Vec::new();
                    loop {
                        if self.eat('}') {
                            break;
                        }
                        let Some(Token::Word(name)) = self.peek().cloned() else {
                            return None;
                        };
                        self.at += 1;
                        if !self.eat(':') {
                            // `..` of a non-exhaustive struct, or not Debug at all.
                            return None;
                        }
                        fields.push((name, self.value()?));
                        if !self.eat(',') && self.peek() != Some(&Token::Punct('}')) {
                            return None;
                        }
                    }
                    Some(Value::Struct(word, fields))
                } else if self.eat('(') {
                    Some(Value::Tuple(word, self.items(')')?))
                } else {
                    Some(Value::Atom(word))
                }
            }
            Token::Punct(_) => None,
        }
    }

    /// Values separated by commas up to `close` (a trailing comma allowed).
    fn items(&mut self, close: char) -> Option<Vec<Value>> {
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Some(items);
            }
            items.push(self.value()?);
            if !self.eat(',') && self.peek() != Some(&Token::Punct(close)) {
                return None;
            }
        }
    }
}

fn flatten(
    value: &Value,
    shown: &mut Vec<String>,
    shape: &mut Vec<String>,
    leaves: &mut Vec<Leaf>,
    named: &mut bool,
) {
    let mut leaf = |text: String, shown: &[String], shape: &[String]| {
        leaves.push(Leaf {
            path: shown.join("."),
            shape: shape.join("/"),
            text,
        })
    };
    match value {
        Value::Atom(text) => leaf(text.clone(), shown, shape),
        Value::Struct(name, fields) if fields.is_empty() => {
            leaf(format!("{name} {{}}"), shown, shape);
        }
        Value::Struct(name, fields) => {
            *named = true;
            shape.push(name.clone());
            for (field, value) in fields {
                shown.push(field.clone());
                shape.push(field.clone());
                flatten(value, shown, shape, leaves, named);
                shown.pop();
                shape.pop();
            }
            shape.pop();
        }
        // A wrapper (`Ok(..)`, `Some(..)`) adds nothing to the path shown,
        // but a different wrapper is a different shape.
        Value::Tuple(name, items) if items.len() == 1 && !name.is_empty() => {
            shape.push(format!("{name}()"));
            flatten(&items[0], shown, shape, leaves, named);
            shape.pop();
        }
        Value::List(items) if items.is_empty() => leaf("[]".to_string(), shown, shape),
        Value::Tuple(name, items) if items.is_empty() => leaf(format!("{name}()"), shown, shape),
        Value::Tuple(_, items) | Value::List(items) => {
            shape.push(format!("{}", items.len()));
            for (i, item) in items.iter().enumerate() {
                shown.push(format!("[{i}]"));
                shape.push(i.to_string());
                flatten(item, shown, shape, leaves, named);
                shown.pop();
                shape.pop();
            }
            shape.pop();
        }
    }
}

/// The value `text` (a derived `Debug` text, as the suite writes what it
/// expected and what came back) as a Python learner reads it: an `Ok` or a
/// `Some` is its value, `None`, `True` and `False` are Python's, `()` is
/// `None`, a struct is a `dict` (`{'id': 'job-1', ...}`), a string has
/// Python's quotes, and the contract's errors are what the Python contract
/// raises (`ValueError`, `sqlite3.Error`; python/CONTRACT.md). `None` when it
/// is not a derived `Debug` text.
pub(crate) fn python(text: &str) -> Option<String> {
    let tokens = tokenize(text)?;
    let mut parser = Parser { tokens, at: 0 };
    let value = parser.value()?;
    if parser.at != parser.tokens.len() {
        return None;
    }
    Some(python_value(&value))
}

/// A leaf of [`fields`] (an atom: a number, a string, `None`, `true`) as
/// Python writes it.
pub(crate) fn python_atom(text: &str) -> String {
    match text {
        "true" => "True".to_string(),
        "false" => "False".to_string(),
        "NaN" => "nan".to_string(),
        "()" => "None".to_string(),
        _ if text.starts_with('"') => python_str(text),
        _ => text.to_string(),
    }
}

fn python_value(value: &Value) -> String {
    let list = |items: &[Value]| -> Vec<String> { items.iter().map(python_value).collect() };
    match value {
        Value::Atom(text) => python_atom(text),
        Value::Struct(_, fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(name, value)| format!("'{name}': {}", python_value(value)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Value::List(items) => format!("[{}]", list(items).join(", ")),
        Value::Tuple(name, items) => match (name.as_str(), &items[..]) {
            ("Ok" | "Some", [inner]) => python_value(inner),
            ("Err", [error]) => python_error(error),
            ("", []) => "None".to_string(),
            ("", [one]) => format!("({},)", python_value(one)),
            ("", items) => format!("({})", list(items).join(", ")),
            (name, items) => format!("{name}({})", list(items).join(", ")),
        },
    }
}

/// The contract's error as the Python contract raises it.
fn python_error(error: &Value) -> String {
    let (variant, payload) = match error {
        Value::Tuple(name, items) => (name.as_str(), items.first()),
        Value::Atom(name) | Value::Struct(name, _) => (name.as_str(), None),
        Value::List(_) => ("", None),
    };
    match (variant, payload) {
        ("InvalidTtl" | "InvalidNow", _) => "ValueError".to_string(),
        ("Db", Some(Value::Atom(message))) if message.starts_with('"') => {
            format!("sqlite3.Error({})", python_str(message))
        }
        ("Db", _) => "sqlite3.Error".to_string(),
        _ => format!("Err({})", python_value(error)),
    }
}

/// A string as Rust's `Debug` writes it (`"a \"b\""`), as Python's `repr`
/// writes it (`'a "b"'`).
fn python_str(debug: &str) -> String {
    let inner = debug
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(debug);
    let mut text = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => text.push('\n'),
            Some('t') => text.push('\t'),
            Some('r') => text.push('\r'),
            Some('0') => text.push('\0'),
            Some('u') => {
                let code: String = chars
                    .by_ref()
                    .skip_while(|&c| c == '{')
                    .take_while(|&c| c != '}')
                    .collect();
                let decoded = u32::from_str_radix(&code, 16).ok().and_then(char::from_u32);
                text.push(decoded.unwrap_or('\u{fffd}'));
            }
            Some(other) => text.push(other),
            None => text.push('\\'),
        }
    }
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\x00"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<(String, String)> {
        fields(text)
            .unwrap()
            .0
            .into_iter()
            .map(|l| (l.path, l.text))
            .collect()
    }

    #[test]
    fn a_struct_in_wrappers_gives_its_fields() {
        let compact = r#"Ok(Some(Job { id: "a", owner: None, until: 1.5, fence: 2, result: Some("x, y"), done: false }))"#;
        let pretty = "Ok(\n    Some(\n        Job {\n            id: \"a\",\n            owner: None,\n            until: 1.5,\n            fence: 2,\n            result: Some(\n                \"x, y\",\n            ),\n            done: false,\n        },\n    ),\n)";
        assert_eq!(fields(compact), fields(pretty));
        assert_eq!(
            paths(compact),
            [
                ("id", "\"a\""),
                ("owner", "None"),
                ("until", "1.5"),
                ("fence", "2"),
                ("result", "\"x, y\""),
                ("done", "false")
            ]
            .map(|(p, t)| (p.to_string(), t.to_string()))
        );
        assert!(fields(compact).unwrap().1, "it has named fields");
    }

    #[test]
    fn different_wrappers_are_different_shapes() {
        let some = fields("Some(Row { fence: 1 })").unwrap().0;
        let ok = fields("Ok(Row { fence: 1 })").unwrap().0;
        assert_eq!(some[0].path, ok[0].path);
        assert_ne!(some[0].shape, ok[0].shape);
        assert!(!fields("Ok(None)").unwrap().1);
    }

    #[test]
    fn text_that_is_not_debug_is_not_read() {
        assert_eq!(fields("Job { id: \"a\", .. }"), None);
        assert_eq!(fields("Ok(Some(1)) trailing"), None);
        assert_eq!(fields("\"unclosed"), None);
    }

    #[test]
    fn values_read_as_python_writes_them() {
        let cases = [
            ("Ok(Some(1))", "1"),
            ("Ok(None)", "None"),
            ("Ok(true)", "True"),
            ("Ok(false)", "False"),
            ("Ok(())", "None"),
            ("Ok([Some(2), None, None])", "[2, None, None]"),
            ("Err(InvalidTtl(_))", "ValueError"),
            ("Err(InvalidNow(_))", "ValueError"),
            ("Err(Db(_))", "sqlite3.Error"),
            (
                r#"Err(Db("table jobs already exists"))"#,
                "sqlite3.Error('table jobs already exists')",
            ),
            (
                r#"Ok(Some(Job { id: "job-1", owner: Some("a"), until: 0.0, fence: 0, result: None, done: false }))"#,
                "{'id': 'job-1', 'owner': 'a', 'until': 0.0, 'fence': 0, 'result': None, 'done': False}",
            ),
            (
                r#"[("job-1", Row { owner: None, until: 0.0, fence: 1, result: None, done: 0 })]"#,
                "[('job-1', {'owner': None, 'until': 0.0, 'fence': 1, 'result': None, 'done': 0})]",
            ),
            (r#"Some("it's \"done\"\n")"#, r#"'it\'s "done"\n'"#),
            (r#"Some("it's")"#, r#""it's""#),
            ("Some(NaN)", "nan"),
        ];
        for (debug, python_text) in cases {
            assert_eq!(python(debug).as_deref(), Some(python_text), "{debug}");
        }
        let pretty = "Ok(\n    Some(\n        Job {\n            id: \"a\",\n            owner: None,\n            until: 1.5,\n            fence: 2,\n            result: Some(\n                \"x, y\",\n            ),\n            done: true,\n        },\n    ),\n)";
        assert_eq!(
            python(pretty).as_deref(),
            Some(
                "{'id': 'a', 'owner': None, 'until': 1.5, 'fence': 2, 'result': 'x, y', 'done': True}"
            )
        );
        assert_eq!(python("not debug at all ("), None);
        assert_eq!(python_atom("\"a\""), "'a'");
        assert_eq!(python_atom("false"), "False");
        assert_eq!(python_atom("130.75"), "130.75");
    }
}
