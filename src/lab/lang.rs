//! The lab's two languages, and a text written in both. Every text a learner
//! or an instructor reads comes in Japanese and English; `Text` holds the pair,
//! so that a missing translation is a loading error, not a blank on screen.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize};

/// A language the worksheet is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    Ja,
    En,
}

impl Lang {
    /// Every language, in the order they are offered.
    pub const ALL: [Lang; 2] = [Lang::Ja, Lang::En];

    /// The code used on the command line and in the TOML files.
    pub fn code(self) -> &'static str {
        match self {
            Lang::Ja => "ja",
            Lang::En => "en",
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl FromStr for Lang {
    type Err = UnknownLang;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Lang::ALL
            .into_iter()
            .find(|lang| lang.code() == s)
            .ok_or_else(|| UnknownLang(s.to_owned()))
    }
}

/// A language code that is not one of [`Lang::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLang(pub String);

impl fmt::Display for UnknownLang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let choices: Vec<&str> = Lang::ALL.iter().map(|lang| lang.code()).collect();
        write!(
            f,
            "unknown language `{}`: choose one of {}",
            self.0,
            choices.join(", ")
        )
    }
}

impl std::error::Error for UnknownLang {}

/// One text in both languages. Surrounding whitespace is dropped when loading,
/// so that a multi-line string may open and close on lines of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Text {
    #[serde(deserialize_with = "trimmed")]
    pub ja: String,
    #[serde(deserialize_with = "trimmed")]
    pub en: String,
}

impl Text {
    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::Ja => &self.ja,
            Lang::En => &self.en,
        }
    }
}

fn trimmed<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    Ok(text.trim().to_owned())
}
