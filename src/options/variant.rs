//! `--variant LABEL=COMMAND`: another build of the program (linked against
//! jemalloc, built with `MALLOC=libc`, a `#[global_allocator]`) as one more
//! configuration. It runs its own command line under glibc with nothing
//! preloaded but allocscope's heap probe, so whatever allocator the build
//! brings is what runs; which one did is found per run (`served_by`).

use super::parse::resolve_command;
use allocscope_core::model::Config;
use allocscope_core::usage_error::{UsageError, VariantProblem};
use std::ffi::OsString;

pub use allocscope_core::model::ProgramLine;

/// The allocator word of a variant's configuration: a label, not an
/// allocator, so nothing is held against what served it.
pub const VARIANT_ALLOCATOR: &str = "variant";

/// One `--variant` checked: its configuration and its command line.
pub fn parse(spec: &str) -> Result<(Config, ProgramLine), UsageError> {
    let usage = |problem| UsageError::Variant {
        spec: spec.to_string(),
        problem,
    };
    let (label, command) = spec
        .split_once('=')
        .ok_or_else(|| usage(VariantProblem::NoEquals))?;
    let label = label.trim();
    if label.is_empty() || label.contains(char::is_whitespace) {
        return Err(usage(VariantProblem::LabelWithSpaces));
    }
    let words = split_words(command).map_err(usage)?;
    let first = words
        .first()
        .ok_or_else(|| usage(VariantProblem::NoCommand))?;
    let program = resolve_command(&OsString::from(first))?;
    let config = Config {
        name: label.to_string(),
        allocator: VARIANT_ALLOCATOR.to_string(),
        library: None,
        version: None,
        env: Vec::new(),
        command: Some(words.clone()),
    };
    let args = words[1..].iter().map(OsString::from).collect();
    Ok((config, ProgramLine { program, args }))
}

/// Splits a command line into words as a shell would for plain words,
/// single and double quotes and backslashes (no expansions).
fn split_words(text: &str) -> Result<Vec<String>, VariantProblem> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => word.get_or_insert_with(String::new).push(c),
            (_, '\\') => {
                let next = chars.next().ok_or(VariantProblem::TrailingBackslash)?;
                word.get_or_insert_with(String::new).push(next);
            }
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if let Some(q) = quote {
        return Err(VariantProblem::Unclosed(q));
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell_with_quotes_and_backslashes() {
        let words = split_words(r#" ./app -n 'a b' "c \"d\"" e\ f '' "#);
        assert_eq!(
            words,
            Ok(vec![
                "./app".to_string(),
                "-n".into(),
                "a b".into(),
                "c \"d\"".into(),
                "e f".into(),
                String::new(),
            ])
        );
        assert_eq!(
            split_words("x 'y").map_err(|e| e.to_string()),
            Err("has an unclosed '".to_string())
        );
    }

    #[test]
    fn a_variant_runs_its_own_command_under_its_label_with_nothing_preloaded() {
        let (config, line) = parse("plain=sh -c 'exit 0'").expect("a valid variant");
        assert_eq!(config.name, "plain");
        assert_eq!(config.allocator, VARIANT_ALLOCATOR);
        assert!(config.env.is_empty());
        assert_eq!(
            config.command,
            Some(vec!["sh".to_string(), "-c".into(), "exit 0".into()])
        );
        assert!(line.program.ends_with("sh"), "{line:?}");
        assert_eq!(line.args, vec![OsString::from("-c"), "exit 0".into()]);
    }

    #[test]
    fn a_variant_without_label_or_command_is_a_usage_error_naming_the_form() {
        for bad in ["nolabel", "=./app", "a b=./app", "x=", "x='unclosed"] {
            let message = parse(bad).map(|_| ()).unwrap_err().to_string();
            assert!(message.contains("LABEL=COMMAND"), "{bad}: {message}");
            assert!(!message.contains('\n'), "{message}");
        }
        let missing = parse("x=/no/such/program").map(|_| ()).unwrap_err();
        assert!(missing.to_string().contains("not found"), "{missing}");
    }
}
