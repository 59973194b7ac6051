//! tfprof matches names with RE2; rtfprof with the `regex` crate. The two
//! read a few patterns differently, so a pattern is rewritten into the
//! `regex` spelling of what RE2 means before it is compiled:
//!
//! - `\d \w \s \b` (and their negations) are ASCII in RE2, Unicode in
//!   `regex`;
//! - `\<` and `\>` are the literal `<` and `>` in RE2, word boundaries in
//!   `regex`;
//! - `\Q…\E` quotes a literal in RE2 only;
//! - inside a class, `[` is literal in RE2 and opens a nested class in
//!   `regex`, and `&&`, `--`, `~~` are literal in RE2 and set operations in
//!   `regex`;
//! - a `{` that does not start a counted repetition is literal in RE2 only;
//! - `\C` (one byte) exists in RE2 only; it is read as one character.
//!
//! Patterns RE2 rejects are rejected too, as `regex` would accept some of
//! them (a repeated repetition `a**`, flags other than `imsU`, `(?<name>…)`,
//! `\u`); tfprof's RE2 then never matches, rtfprof names the flag.
//! Octal escapes (`\101`) are left to the compiler's octal mode. Everything
//! else (`\pL`, `\x{41}`, repetitions, `(?P<name>…)`) is spelled the same.

const DIGIT: &str = "0-9";
const WORD: &str = "0-9A-Za-z_";
const SPACE: &str = r"\t\n\x0C\r ";

/// `pattern` (RE2 syntax) in the `regex` crate's syntax, or why RE2 rejects
/// it.
pub fn to_rust_syntax(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len() + 8);
    // Whether the last item was a repetition (`*`, `+`, `?`, `{n,m}`) and
    // whether its non-greedy `?` was seen: RE2 allows no other operator
    // after one.
    let mut after_repeat = false;
    let mut after_lazy = false;
    let mut chars = pattern.chars().peekable();
    // Inside `[...]`: whether the next char is the first of the class (a `]`
    // there is literal, as after `[^`).
    let mut in_class = false;
    let mut class_start = false;
    while let Some(c) = chars.next() {
        let at_class_start = std::mem::replace(&mut class_start, false);
        if !in_class {
            let repeat = match c {
                '*' | '+' | '?' => Some(c.to_string()),
                '{' => counted_repetition(chars.clone()),
                _ => None,
            };
            match repeat {
                Some(op) if c == '?' && after_repeat && !after_lazy => {
                    after_lazy = true;
                    out.push_str(&op);
                    continue;
                }
                Some(op) if after_repeat => return Err(format!("bad repetition operator: {op}")),
                Some(op) => {
                    for _ in 1..op.chars().count() {
                        chars.next();
                    }
                    out.push_str(&op);
                    after_repeat = true;
                    continue;
                }
                None => {
                    after_repeat = false;
                    after_lazy = false;
                }
            }
        }
        match c {
            '\\' => match chars.next() {
                None => out.push('\\'),
                Some('Q') => {
                    let mut literal = String::new();
                    while let Some(q) = chars.next() {
                        if q == '\\' && chars.peek() == Some(&'E') {
                            chars.next();
                            break;
                        }
                        literal.push(q);
                    }
                    if in_class {
                        literal.chars().for_each(|q| push_class_literal(&mut out, q));
                    } else {
                        out.push_str(&regex::escape(&literal));
                    }
                }
                Some('E') => {} // a stray `\E` ends nothing
                Some(e @ ('u' | 'U')) => return Err(format!("invalid escape sequence: \\{e}")),
                Some('C') if !in_class => out.push_str("(?s:.)"),
                Some(e) => match (ascii_class(e), in_class) {
                    // Inside a class its members join the class; a negated
                    // one is a nested class there.
                    (Some((members, false)), true) => out.push_str(members),
                    (Some((members, negated)), _) => out.push_str(&format!("[{}{members}]", if negated { "^" } else { "" })),
                    (None, _) => match e {
                        'b' if !in_class => out.push_str(r"(?-u:\b)"),
                        'B' if !in_class => out.push_str(r"(?-u:\B)"),
                        '<' | '>' => out.push(e),
                        _ => {
                            out.push('\\');
                            out.push(e);
                        }
                    },
                },
            },
            '[' if !in_class => {
                out.push('[');
                in_class = true;
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                class_start = true;
            }
            '[' if chars.peek() == Some(&':') => {
                // A POSIX class, `[:alpha:]`, spelled the same.
                out.push('[');
                for p in chars.by_ref() {
                    out.push(p);
                    if p == ']' {
                        break;
                    }
                }
            }
            ']' if in_class && !at_class_start => {
                out.push(']');
                in_class = false;
            }
            '{' if !in_class => out.push_str("\\{"),
            '(' if !in_class && chars.peek() == Some(&'?') => {
                out.push('(');
                check_group_flags(chars.clone())?;
            }
            // `--` is a range ending or starting at `-` in RE2, a set
            // difference in `regex`.
            '-' if in_class && out.ends_with('-') => out.push_str("\\-"),
            _ if in_class => push_class_literal(&mut out, c),
            _ => out.push(c),
        }
    }
    Ok(out)
}

/// RE2's ASCII meaning of the Perl class `\e`: its members, as written
/// inside `[...]`, and whether it is negated.
fn ascii_class(e: char) -> Option<(&'static str, bool)> {
    match e {
        'd' | 'D' => Some((DIGIT, e == 'D')),
        'w' | 'W' => Some((WORD, e == 'W')),
        's' | 'S' => Some((SPACE, e == 'S')),
        _ => None,
    }
}

/// The counted repetition (`{2}`, `{2,}`, `{2,5}`) that `rest`, just after
/// a `{`, starts, braces included; `None` when the `{` is a literal.
fn counted_repetition(rest: std::iter::Peekable<std::str::Chars<'_>>) -> Option<String> {
    let mut body = String::new();
    for c in rest {
        if c == '}' {
            let (low, high) = body.split_once(',').unwrap_or((&body, ""));
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            return (digits(low) && (high.is_empty() || digits(high))).then(|| format!("{{{body}}}"));
        }
        if !(c.is_ascii_digit() || c == ',') || body.len() > 20 {
            return None;
        }
        body.push(c);
    }
    None
}

/// RE2 knows the flags `i`, `m`, `s`, `U` and named groups `(?P<name>…)`;
/// `rest` is what follows `(`, starting at `?`.
fn check_group_flags(mut rest: std::iter::Peekable<std::str::Chars<'_>>) -> Result<(), String> {
    rest.next(); // '?'
    match rest.peek() {
        Some('P') => Ok(()),
        Some(':') => Ok(()),
        _ => {
            for c in rest {
                match c {
                    'i' | 'm' | 's' | 'U' | '-' => {}
                    ':' | ')' => return Ok(()),
                    _ => return Err(format!("invalid or unsupported Perl syntax: (?{c}")),
                }
            }
            Err("missing closing ): (?".to_owned())
        }
    }
}

/// One literal char inside a class, escaped where `regex` would read it as
/// class syntax (`-` is kept: RE2 and `regex` both read it as a range).
fn push_class_literal(out: &mut String, c: char) {
    if matches!(c, '[' | ']' | '&' | '~' | '\\' | '^') {
        out.push('\\');
    }
    out.push(c);
}

#[cfg(test)]
mod tests {
    use super::to_rust_syntax;

    fn full_match(pattern: &str, text: &str) -> bool {
        let rust = to_rust_syntax(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        regex::RegexBuilder::new(&format!(r"\A(?:{rust})\z")).octal(true).build().unwrap_or_else(|e| panic!("{pattern} -> {rust}: {e}")).is_match(text)
    }

    #[test]
    fn angle_brackets_are_literal() {
        assert!(full_match(r"gen\.py:998\:\<module\>", "gen.py:998:<module>"));
        assert!(full_match(r"[\<\>]+", "<>"));
        assert!(!full_match(r"\<module\>", "module"));
    }

    #[test]
    fn perl_classes_are_ascii() {
        // U+0663 ARABIC-INDIC DIGIT THREE, U+00E9 é, U+00A0 no-break space.
        assert!(full_match(r"\d", "3") && !full_match(r"\d", "\u{663}"));
        assert!(full_match(r"\D", "\u{663}"));
        assert!(full_match(r"\w+", "a_Z9") && !full_match(r"\w", "\u{e9}"));
        assert!(full_match(r"\W", "\u{e9}"));
        assert!(full_match(r"\s", "\t") && !full_match(r"\s", "\u{a0}"));
        assert!(full_match(r"[\d\s]+", "1 2") && !full_match(r"[\d]", "\u{663}"));
        assert!(full_match(r"[\D]", "\u{663}") && !full_match(r"[\D]", "3"));
        assert!(full_match(r"a\b-b", "a-b") && full_match(r"a\Bb", "ab"));
        // é is a word char for `regex`, not for RE2.
        assert!(!full_match("\u{e9}\\b", "\u{e9}"));
        assert!(!full_match("\u{e9}\\Ba", "\u{e9}a"));
    }

    #[test]
    fn quoted_literals() {
        assert!(full_match(r"\Qa.b*\E", "a.b*"));
        assert!(!full_match(r"\Qa.b\E", "axb"));
        assert!(full_match(r"x\Q(\Ey", "x(y"));
        assert!(full_match(r"[\Q]-\E]+", "]-]"));
    }

    #[test]
    fn class_syntax_stays_literal() {
        assert!(full_match(r"[a[]+", "a[a"));
        assert!(full_match(r"[]a]+", "]a"));
        assert!(full_match(r"[^]a]", "b") && !full_match(r"[^]a]", "]"));
        assert!(full_match(r"[a&&b]+", "a&b"));
        assert!(full_match(r"[a~~b]+", "~a"));
        assert!(full_match(r"[[:digit:]x]+", "1x"));
        assert!(full_match(r"[a-c]+", "abc") && !full_match(r"[a-c]", "-"));
    }

    #[test]
    fn everything_else_is_unchanged() {
        for p in [r".*", r"a|b", r"(?i)conv2d", r"x{2,3}", r"\pL+", r"\x{41}", r"a\.b", r"^a$", r"\101"] {
            let rust = to_rust_syntax(p).unwrap();
            if p != r"\101" {
                assert_eq!(rust, p);
            }
        }
        assert!(full_match(r"\101", "A") && full_match(r"a\0", "a\0"));
        assert!(full_match(r"(?i)conv2d", "Conv2D"));
    }

    #[test]
    fn a_brace_that_repeats_nothing_is_literal() {
        assert!(full_match(r"layer{1", "layer{1"));
        assert!(full_match(r"layer1{", "layer1{"));
        assert!(full_match(r"a{,2}", "a{,2}"));
        assert!(full_match(r"a\b{end}", "a{end}"));
        assert!(full_match(r"a{2}", "aa") && full_match(r"a{1,}b{0,2}", "aab"));
        assert!(full_match(r"a{2}?", "aa"));
    }

    #[test]
    fn a_byte_is_one_character() {
        assert!(full_match(r"\Clayer1", "xlayer1"));
    }

    #[test]
    fn what_re2_rejects_is_rejected() {
        for p in [r"a**", r"a+*", r"a{1}{1}", r"a*{2}", r"a*??", r"(?x)a", r"(?<n>a)", r"(?-u:\w)", r"\u0041", r"(?R)"] {
            assert!(to_rust_syntax(p).is_err(), "{p} accepted");
        }
        for p in [r"a*?", r"a+?b??", r"a{2}?", r"(?i)a", r"(?i:a)", r"(?-s)a", r"(?U)a*", r"(?P<n>a)", r"(?:a)"] {
            assert!(to_rust_syntax(p).is_ok(), "{p} rejected");
        }
    }

    #[test]
    fn a_double_dash_in_a_class_is_a_range_end() {
        assert!(full_match(r"[!--]+", "!-,"));
    }
}
