//! Splitting one pasted shell command line into words, as bash would, for `--from-curl`.
//!
//! Why not the `shell-words` crate: browsers' "Copy as cURL" writes any value holding `'`, `!`
//! or a control character in bash's ANSI-C quoting (`$'{"a":"b\u0021"}'`, `$'…\r\n…'`), which
//! `shell-words` reads as a literal `$` followed by a single-quoted string (the escapes left in).
//! So this is a small POSIX word splitter with `$'…'` added, and with every shell feature that
//! would change the words at run time (variables, command substitution, pipes, redirections)
//! refused rather than silently taken literally: the request written must be the one the
//! command would have sent.

/// Splits `line` into words: whitespace separates, `'…'` is literal, `"…"` honours `\"`, `\\`,
/// `` \` `` and `\$`, `$'…'` honours bash's escapes, a backslash escapes one character, and a
/// backslash before a line break joins the lines. CRLF line ends count as LF. A `#` starting a
/// word begins a comment up to the end of the line.
pub fn split(line: &str) -> Result<Vec<String>, ShellError> {
    let text = line.replace("\r\n", "\n");
    let mut chars = text.chars().peekable();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '#' if !in_word => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\'' => {
                in_word = true;
                single_quoted(&mut chars, &mut word)?;
            }
            '"' => {
                in_word = true;
                double_quoted(&mut chars, &mut word)?;
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => return Err(ShellError::LoneBackslash),
            },
            '$' if chars.peek() == Some(&'\'') => {
                chars.next();
                in_word = true;
                word.push_str(&ansi_c_quoted(&mut chars)?);
            }
            '$' if chars.peek() == Some(&'"') => {
                // $"…" (a locale translation) is a double-quoted string.
                chars.next();
                in_word = true;
                double_quoted(&mut chars, &mut word)?;
            }
            '$' => {
                expansion(chars.peek().copied())?;
                in_word = true;
                word.push('$');
            }
            '`' => return Err(ShellError::Substitution),
            '|' | ';' | '&' | '<' | '>' | '(' | ')' => return Err(ShellError::Operator(c)),
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Why a pasted command line could not be split into words: a quote left open, a bad escape,
/// or a shell feature whose effect is only known at run time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    /// The line ends with a backslash escaping nothing.
    #[error("the command ends with a lone backslash")]
    LoneBackslash,
    /// `'…'` without its closing quote.
    #[error("a single quote (') is not closed")]
    SingleQuoteOpen,
    /// `"…"` without its closing quote.
    #[error("a double quote (\") is not closed")]
    DoubleQuoteOpen,
    /// `$'…'` without its closing quote.
    #[error("a $'…' string is not closed")]
    AnsiCOpen,
    /// `\x` or `\u` in `$'…'` not followed by a hex digit (the escape letter).
    #[error("`\\{0}` without hex digits in $'…'")]
    NoHexDigits(char),
    /// `\u` in `$'…'` with a value that is not a Unicode scalar value.
    #[error("`\\u` names no character in $'…'")]
    NoCharacter,
    /// `\c` as the last thing in `$'…'`.
    #[error("`\\c` at the end of $'…'")]
    ControlAtEnd,
    /// `$(…)` or `` `…` ``.
    #[error("the command uses command substitution ($(…) or `…`): paste its output instead")]
    Substitution,
    /// `$NAME` or `${…}`.
    #[error(
        "the command uses a shell variable ($NAME): its value is not known here; paste the \
         command with the value written out"
    )]
    Variable,
    /// A pipe, redirection, list or subshell operator outside quotes.
    #[error(
        "`{0}` outside quotes: paste one curl command only, without pipes, redirections or a \
         second command"
    )]
    Operator(char),
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// `'…'`: everything literal up to the next `'`.
fn single_quoted(chars: &mut Chars, word: &mut String) -> Result<(), ShellError> {
    for c in chars.by_ref() {
        if c == '\'' {
            return Ok(());
        }
        word.push(c);
    }
    Err(ShellError::SingleQuoteOpen)
}

/// `"…"`: a backslash escapes `$`, `` ` ``, `"`, `\` and a line break, and stays otherwise.
fn double_quoted(chars: &mut Chars, word: &mut String) -> Result<(), ShellError> {
    while let Some(c) = chars.next() {
        match c {
            '"' => return Ok(()),
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(e @ ('$' | '`' | '"' | '\\')) => word.push(e),
                Some(e) => {
                    word.push('\\');
                    word.push(e);
                }
                None => break,
            },
            '$' => {
                let next = chars.peek().copied();
                if next.is_some_and(|n| n == '{' || n == '(' || n == '_' || n.is_alphanumeric()) {
                    expansion(next)?;
                }
                word.push('$');
            }
            '`' => return Err(ShellError::Substitution),
            _ => word.push(c),
        }
    }
    Err(ShellError::DoubleQuoteOpen)
}

/// What a `$` followed by `next` would expand to at run time: refused.
fn expansion(next: Option<char>) -> Result<(), ShellError> {
    match next {
        Some('(') => Err(ShellError::Substitution),
        Some(n) if n == '{' || n == '_' || n.is_alphanumeric() => Err(ShellError::Variable),
        // A `$` before a space or at the end is a literal `$` in bash.
        _ => Ok(()),
    }
}

/// `$'…'` after the opening quote: bash's escapes. Bytes written with `\xHH` are UTF-8 when
/// together they form UTF-8 (`\xc3\xa9`); otherwise each stands for the character U+00HH, since
/// Firefox writes `é` as `\xe9` and means the character, not a Latin-1 byte.
fn ansi_c_quoted(chars: &mut Chars) -> Result<String, ShellError> {
    let mut bytes = Vec::new();
    let mut chars_meant = String::new();
    let push = |bytes: &mut Vec<u8>, meant: &mut String, c: char| {
        let mut buf = [0; 4];
        bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        meant.push(c);
    };
    loop {
        let c = chars.next().ok_or(ShellError::AnsiCOpen)?;
        match c {
            '\'' => break,
            '\\' => {
                let e = chars.next().ok_or(ShellError::AnsiCOpen)?;
                match e {
                    'x' => {
                        let v = hex_digits(chars, 2).ok_or(ShellError::NoHexDigits('x'))?;
                        bytes.push(v as u8);
                        chars_meant.push(char::from(v as u8));
                    }
                    'u' | 'U' => {
                        let v = hex_digits(chars, if e == 'u' { 4 } else { 8 })
                            .ok_or(ShellError::NoHexDigits('u'))?;
                        let c = char::from_u32(v).ok_or(ShellError::NoCharacter)?;
                        push(&mut bytes, &mut chars_meant, c);
                    }
                    '0'..='7' => {
                        let mut v = e.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            match chars.peek().and_then(|d| d.to_digit(8)) {
                                Some(d) => {
                                    v = v * 8 + d;
                                    chars.next();
                                }
                                None => break,
                            }
                        }
                        bytes.push((v & 0xff) as u8);
                        chars_meant.push(char::from((v & 0xff) as u8));
                    }
                    'c' => {
                        let x = chars.next().ok_or(ShellError::ControlAtEnd)?;
                        push(
                            &mut bytes,
                            &mut chars_meant,
                            char::from((x as u32 & 0x1f) as u8),
                        );
                    }
                    _ => {
                        for c in simple_escape(e) {
                            push(&mut bytes, &mut chars_meant, c);
                        }
                    }
                }
            }
            c => push(&mut bytes, &mut chars_meant, c),
        }
    }
    Ok(String::from_utf8(bytes).unwrap_or(chars_meant))
}

/// The one-character escapes of `$'…'`; an unknown one stays as written, backslash included.
fn simple_escape(e: char) -> Vec<char> {
    let c = match e {
        'a' => '\x07',
        'b' => '\x08',
        'e' | 'E' => '\x1b',
        'f' => '\x0c',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\x0b',
        '\\' | '\'' | '"' | '?' => e,
        _ => return vec!['\\', e],
    };
    vec![c]
}

/// Up to `max` hex digits; `None` when there is none.
fn hex_digits(chars: &mut Chars, max: usize) -> Option<u32> {
    let mut value = None;
    for _ in 0..max {
        match chars.peek().and_then(|d| d.to_digit(16)) {
            Some(d) => {
                value = Some(value.unwrap_or(0) * 16 + d);
                chars.next();
            }
            None => break,
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::split;

    fn ok(line: &str) -> Vec<String> {
        split(line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    #[test]
    fn posix_words_quotes_and_continuations() {
        assert_eq!(
            ok("curl  'a b'  \"c d\" e\\ f"),
            ["curl", "a b", "c d", "e f"]
        );
        assert_eq!(
            ok("curl 'x' \\\n  -H 'y: z' \\\r\n  --compressed"),
            ["curl", "x", "-H", "y: z", "--compressed"]
        );
        assert_eq!(ok(r#"a"b"'c'd"#), ["abcd"]);
        assert_eq!(ok(r#""\"\\\$\`\n""#), [r#""\$`\n"#]);
        assert_eq!(ok("''"), [""]);
        assert_eq!(ok("curl # a comment\n x"), ["curl", "x"]);
        assert_eq!(ok("a#b"), ["a#b"]);
        assert_eq!(ok("price $ 5"), ["price", "$", "5"]);
        assert_eq!(ok(r#""cost: $""#), ["cost: $"]);
    }

    #[test]
    fn ansi_c_strings_as_browsers_write_them() {
        // Chrome: `!` as \u0021, `'` as \', line breaks as \r\n.
        assert_eq!(
            ok(r#"$'{"msg":"hi\u0021 it\'s"}'"#),
            [r#"{"msg":"hi! it's"}"#]
        );
        assert_eq!(ok(r"$'a\r\nb\tc\\d'"), ["a\r\nb\tc\\d"]);
        // Firefox: non-ASCII as \xHH of the character.
        assert_eq!(ok(r"$'Fr\xe9d\xe9ric'"), ["Frédéric"]);
        // Bytes that form UTF-8 stay UTF-8.
        assert_eq!(ok(r"$'caf\xc3\xa9'"), ["café"]);
        assert_eq!(ok(r"$'\101\x42\u0043\U0001F600\q'"), ["ABC😀\\q"]);
        assert_eq!(ok(r#"x$'\''y"#), ["x'y"]);
    }

    #[test]
    fn run_time_shell_features_are_refused() {
        for line in [
            "curl $URL",
            "curl \"${HOST}/x\"",
            "curl $(cat url)",
            "curl `cat url`",
            "curl x | jq .",
            "curl x > out",
            "curl x; rm y",
            "curl x && y",
            "curl 'open",
            "curl \"open",
            "curl $'open",
            "curl x \\",
        ] {
            assert!(split(line).is_err(), "{line:?} was accepted");
        }
    }
}
