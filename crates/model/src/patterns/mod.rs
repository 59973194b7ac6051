//! Name patterns as tfprof reads them: a comma-separated list of RE2
//! regexes, each matching a whole name. The views' name filters, the
//! accounting's op types and the event log's tags all take one; `re2`
//! rewrites RE2's spelling into the `regex` crate's.

pub(crate) mod re2;

use std::fmt;

use regex::Regex;

use crate::error::{Error, Result};

/// A list of RE2-style regexes, each matching a whole name (RE2 `FullMatch`).
#[derive(Clone, Debug)]
pub struct RegexList {
    patterns: Vec<String>,
    compiled: Vec<Regex>,
}

impl RegexList {
    /// Parses a comma-separated list (empty pieces dropped, as tfprof does).
    pub fn parse(flag: &str, value: &str) -> Result<Self> {
        let patterns: Vec<String> = split_list(value).map(str::to_owned).collect();
        Self::from_patterns(flag, patterns)
    }

    pub fn from_patterns(flag: &str, patterns: Vec<String>) -> Result<Self> {
        let compiled = patterns
            .iter()
            .map(|p| {
                let invalid = |why: &str| Error::flag(format!("--{flag}"), format!("invalid regex '{p}': {why}"));
                let rust = re2::to_rust_syntax(p).map_err(|why| invalid(&why))?;
                regex::RegexBuilder::new(&format!(r"\A(?:{rust})\z")).octal(true).build().map_err(|e| {
                    let detail = e.to_string();
                    invalid(detail.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim())
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(RegexList { patterns, compiled })
    }

    /// tfprof treats exactly `[".*"]` as "everything" without running a regex.
    pub fn is_match_all(&self) -> bool {
        self.patterns.len() == 1 && self.patterns[0] == ".*"
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether any regex fully matches `name`.
    pub fn matches(&self, name: &str) -> bool {
        self.compiled.iter().any(|r| r.is_match(name))
    }

    /// The compiled regexes, in the order given (op view selects per regex).
    pub fn regexes(&self) -> &[Regex] {
        &self.compiled
    }

    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

impl fmt::Display for RegexList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.patterns.join(","))
    }
}

/// A comma-separated list's pieces, empty ones dropped (as tfprof splits
/// its list flags).
pub fn split_list(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').filter(|s| !s.is_empty())
}
