//! The value readers of lowering: closed field sets (unknown keys with a did-you-mean), and
//! typed reads of strings, numbers, booleans, words and string lists, each reporting a wrong
//! type or value with help on how to write it.

use super::enums::Words;
use super::fields::ObjectKind;
use super::ir::{Field, Text};
use super::kinds::table::{field_name, fields_of};
use super::lowerer::{Fields, Lowerer, element_help};
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::json::{Kind, Member, Node, Str};
use crate::value::format_number;

impl Lowerer {
    /// Check an object's keys against its closed field set; return the known members by name.
    /// `misplaced` marks known keys that are not allowed in this context.
    pub(super) fn fields<'a>(
        &mut self,
        members: &'a [Member],
        kind: ObjectKind,
        misplaced: impl Fn(&str) -> bool,
    ) -> Fields<'a> {
        self.fields_at(members, kind, misplaced, kind.describe())
    }

    /// [`Lowerer::fields`], naming the object `at` in messages (`expect.properties.a`).
    pub(super) fn fields_at<'a>(
        &mut self,
        members: &'a [Member],
        kind: ObjectKind,
        misplaced: impl Fn(&str) -> bool,
        at: &str,
    ) -> Fields<'a> {
        let mut out = Fields::with_capacity(members.len());
        for m in members {
            let key = m.key.value.as_str();
            match field_name(kind, key) {
                Some(name) if !misplaced(key) => {
                    out.insert_first(name, m);
                }
                Some(_) => self.push(
                    Diagnostic::new(Code::UnknownField, format!("unknown field '{key}' in {at}"))
                        .at(m.key.span)
                        .with_label("only for chain/tasks/task documents")
                        .help(format!("'{key}' belongs to the shorthand forms (chain/tasks/task), which a flow with 'phases' cannot use; move it into the phases")),
                ),
                None => self.unknown_field(m, kind, at),
            }
        }
        out
    }

    pub(super) fn unknown_field(&mut self, m: &Member, kind: ObjectKind, at: &str) {
        let key = m.key.value.as_str();
        let names = fields_of(kind).iter().map(|f| f.name);
        let help = match did_you_mean(key, names) {
            Some(s) => format!("did you mean '{s}'?"),
            None => format!(
                "{} accepts: {}",
                kind.describe(),
                fields_of(kind)
                    .iter()
                    .map(|f| f.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let (code, message) = if kind == ObjectKind::Expect {
            (
                Code::InvalidContract,
                format!(
                    "{at}.{key}: unknown contract keyword (supported: type, properties, required, items, enum, additionalProperties, minItems, maxItems; annotations description, title, examples, $comment)"
                ),
            )
        } else {
            (Code::UnknownField, format!("unknown field '{key}' in {at}"))
        };
        self.push(
            Diagnostic::new(code, message)
                .at(m.key.span)
                .with_label("unknown field")
                .help(help),
        );
    }

    /// The members of an object node, or an E0004 naming `what`.
    pub(super) fn object_members<'a>(&mut self, m: &'a Member, what: &str) -> Option<&'a [Member]> {
        match &m.value.kind {
            Kind::Object(members) => Some(members),
            _ => {
                self.wrong_type(m, what);
                None
            }
        }
    }

    pub(super) fn wrong_type(&mut self, m: &Member, expected: &str) {
        let key = &m.key.value;
        self.push(
            Diagnostic::new(
                Code::WrongType,
                format!("'{key}' must be {expected}, found {}", m.value.type_name()),
            )
            .at(m.value.span)
            .with_label(format!("expected {expected}"))
            .help(type_help(key, expected, &m.value)),
        );
    }

    pub(super) fn invalid_value(&mut self, m: &Member, allowed: &str) {
        let shown = match &m.value.kind {
            Kind::String(s) => format!("'{}'", s.value),
            Kind::Number(n) => format_number(*n),
            _ => m.value.type_name().to_owned(),
        };
        self.push(
            Diagnostic::new(
                Code::InvalidValue,
                format!(
                    "invalid value {shown} for '{}': expected {allowed}",
                    m.key.value
                ),
            )
            .at(m.value.span)
            .with_label(format!("expected {allowed}"))
            .help(format!("change '{}' to {allowed}", m.key.value)),
        );
    }

    pub(super) fn string(&mut self, f: &Fields<'_>, name: &str) -> Option<Field<String>> {
        self.string_taking(f, name, None)
    }

    /// [`Lowerer::string`] using `taken`, the value moved out of the field's member (see
    /// [`super::lowerer::Taken`]), instead of a copy.
    pub(super) fn string_taking(
        &mut self,
        f: &Fields<'_>,
        name: &str,
        taken: Option<String>,
    ) -> Option<Field<String>> {
        let (m, s) = self.str_node(f, name)?;
        Some(Field::new(
            taken.unwrap_or_else(|| s.value.clone()),
            m.key.span,
            m.value.span,
        ))
    }

    pub(super) fn str_node<'a>(
        &mut self,
        f: &Fields<'a>,
        name: &str,
    ) -> Option<(&'a Member, &'a Str)> {
        let m = *f.get(name)?;
        match &m.value.kind {
            Kind::String(s) => Some((m, s)),
            _ => {
                self.wrong_type(m, "a string");
                None
            }
        }
    }

    pub(super) fn text(&mut self, f: &Fields<'_>, name: &str) -> Option<Text> {
        self.text_taking(f, name, None)
    }

    /// [`Lowerer::text`] using `taken`, the string moved out of the field's member, instead of
    /// a copy.
    pub(super) fn text_taking(
        &mut self,
        f: &Fields<'_>,
        name: &str,
        taken: Option<Str>,
    ) -> Option<Text> {
        self.str_node(f, name)
            .map(|(_, s)| Text::new(taken.unwrap_or_else(|| s.clone())))
    }

    pub(super) fn boolean(&mut self, f: &Fields<'_>, name: &str) -> Option<bool> {
        let m = f.get(name)?;
        match m.value.kind {
            Kind::Bool(b) => Some(b),
            _ => {
                self.wrong_type(m, "true or false");
                None
            }
        }
    }

    pub(super) fn number(&mut self, f: &Fields<'_>, name: &str) -> Option<Field<f64>> {
        let m = f.get(name)?;
        match m.value.kind {
            Kind::Number(n) => Some(Field::new(n, m.key.span, m.value.span)),
            _ => {
                self.wrong_type(m, "a number");
                None
            }
        }
    }

    /// A number that must lie in `lo..=hi` (E0005 otherwise).
    pub(super) fn ranged(&mut self, f: &Fields<'_>, name: &str, lo: f64, hi: f64) -> Option<f64> {
        let n = self.number(f, name)?;
        if n.value >= lo && n.value <= hi {
            Some(n.value)
        } else {
            let m = f[name];
            self.invalid_value(
                m,
                &format!(
                    "a number from {} to {}",
                    format_number(lo),
                    format_number(hi)
                ),
            );
            None
        }
    }

    /// One of the words of `W` (E0004 for a non-string, E0005 with a did-you-mean otherwise).
    pub(super) fn word<W: Words>(&mut self, f: &Fields<'_>, name: &str) -> Option<W> {
        let m = f.get(name)?;
        let Kind::String(s) = &m.value.kind else {
            self.wrong_type(m, "a string");
            return None;
        };
        if let Some(v) = W::parse(&s.value) {
            return Some(v);
        }
        self.invalid_value(m, &format!("one of {}", W::NAMES.join(", ")));
        if let Some(s) = did_you_mean(&s.value, W::NAMES.iter().copied())
            && let Some(d) = self.diags.last_mut()
        {
            d.help = Some(format!("did you mean '{s}'?"));
        }
        None
    }

    /// An array of strings; other elements are E0004 each.
    pub(super) fn strings(&mut self, f: &Fields<'_>, name: &str) -> Option<Vec<Field<String>>> {
        let key = f.get(name)?.key.span;
        let (items, all_strings) = self.string_items(f, name)?;
        all_strings.then(|| {
            items
                .into_iter()
                .map(|s| Field::new(s.value.clone(), key, s.span))
                .collect()
        })
    }

    /// [`Lowerer::strings`] of an array whose elements were moved out of the field's member
    /// (`taken`): their strings move into the fields instead of being copied.
    pub(super) fn strings_taking(
        &mut self,
        f: &Fields<'_>,
        name: &str,
        taken: Option<Vec<Node>>,
    ) -> Option<Vec<Field<String>>> {
        let Some(mut items) = taken else {
            return self.strings(f, name);
        };
        let m = *f.get(name)?;
        if !matches!(m.value.kind, Kind::Array(_)) {
            self.wrong_type(m, "an array of strings");
            return None;
        }
        let all_strings = self.report_non_strings(m, &items);
        let key = m.key.span;
        // Every element is a string here: one field each.
        all_strings.then(|| {
            let mut out = Vec::with_capacity(items.len());
            for item in &mut items {
                if let Kind::String(s) = &mut item.kind {
                    out.push(Field::new(std::mem::take(&mut s.value), key, s.span));
                }
            }
            out
        })
    }

    /// The string elements of an array field; other elements are E0004 each.
    pub(super) fn str_nodes<'a>(&mut self, f: &Fields<'a>, name: &str) -> Option<Vec<&'a Str>> {
        self.string_items(f, name).map(|(items, _)| items)
    }

    /// The string elements of an array field and whether every element was one (each other
    /// element is an E0004); `None` when the field is absent or not an array.
    pub(super) fn string_items<'a>(
        &mut self,
        f: &Fields<'a>,
        name: &str,
    ) -> Option<(Vec<&'a Str>, bool)> {
        let m = f.get(name)?;
        let Kind::Array(items) = &m.value.kind else {
            self.wrong_type(m, "an array of strings");
            return None;
        };
        let all_strings = self.report_non_strings(m, items);
        let mut out = Vec::with_capacity(items.len());
        out.extend(items.iter().filter_map(|item| match &item.kind {
            Kind::String(s) => Some(s),
            _ => None,
        }));
        Some((out, all_strings))
    }

    /// An E0004 for each element of `items` (the elements of array field `m`) that is not a
    /// string; whether they all are.
    fn report_non_strings(&mut self, m: &Member, items: &[Node]) -> bool {
        let mut all_strings = true;
        for item in items {
            if !matches!(item.kind, Kind::String(_)) {
                all_strings = false;
                self.push(
                    Diagnostic::new(
                        Code::WrongType,
                        format!(
                            "'{}' must contain only strings, found {}",
                            m.key.value,
                            item.type_name()
                        ),
                    )
                    .at(item.span)
                    .with_label("expected a string")
                    .help(element_help(item)),
                );
            }
        }
        all_strings
    }

    pub(super) fn idle_timeout(&mut self, f: &Fields<'_>) -> Option<Field<f64>> {
        let n = self.number(f, "idleTimeout")?;
        let v = n.value;
        if v < 0.0 || !v.is_finite() || (v > 0.0 && v < 1000.0) {
            self.push(
                Diagnostic::new(
                    Code::InvalidIdleTimeout,
                    format!(
                        "'idleTimeout' must be 0 (off) or at least 1000 ms, found {}",
                        format_number(v)
                    ),
                )
                .at(n.span)
                .with_label("expected 0 or >= 1000 ms")
                .help("use 0 to disable the idle watchdog, or a value >= 1000 (milliseconds)"),
            );
            return None;
        }
        Some(n)
    }
}

/// `a string`, `an array`.
pub(super) fn a_type_name(node: &Node) -> &'static str {
    match node.kind {
        Kind::Null => "null",
        Kind::Bool(_) => "a boolean",
        Kind::Number(_) => "a number",
        Kind::String(_) => "a string",
        Kind::Array(_) => "an array",
        Kind::Object(_) => "an object",
    }
}

/// How to write `key` with the `expected` type, using what was written when it helps
/// (`"dependsOn": "scan"` ⇒ `"dependsOn": ["scan"]`).
pub(super) fn type_help(key: &str, expected: &str, found: &Node) -> String {
    let found_text = match &found.kind {
        Kind::String(s) => Some(s.value.as_str()),
        _ => None,
    };
    match expected {
        "a string" => format!("write the value in double quotes: \"{key}\": \"…\""),
        "true or false" => match found_text.map(str::trim) {
            Some(t @ ("true" | "false")) => format!("drop the quotes: \"{key}\": {t}"),
            _ => format!("write \"{key}\": true or \"{key}\": false (without quotes)"),
        },
        "a number" => match found_text.map(|t| (t, t.trim().parse::<f64>())) {
            Some((t, Ok(_))) => format!("drop the quotes: \"{key}\": {}", t.trim()),
            _ => format!("write a plain number, e.g. \"{key}\": 3"),
        },
        "an array of phases" if matches!(found.kind, Kind::Object(_)) => {
            "wrap the phase in a list: \"phases\": [{…}]".to_owned()
        }
        e if e.starts_with("an array of strings") || e.starts_with("a string or an array") => {
            match found_text {
                Some(t) => format!("wrap it in a list: \"{key}\": [\"{t}\"]"),
                None => format!("write a list of strings: \"{key}\": [\"…\", \"…\"]"),
            }
        }
        _ => format!("change '{key}' to {expected}"),
    }
}

/// Is `name` a valid agent name: `^[a-z][a-z0-9-]*$`?
pub(super) fn valid_agent_name(name: &str) -> bool {
    // Byte by byte: every allowed character is ASCII, so no byte of another character passes.
    let bytes = name.as_bytes();
    bytes.first().is_some_and(u8::is_ascii_lowercase)
        && bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// E0112 for an invalid agent name in `field`.
pub(super) fn invalid_agent(a: &Field<String>, field: &str, phase: &str) -> Diagnostic {
    let d = Diagnostic::new(
        Code::InvalidAgentName,
        format!(
            "{}{field} '{}' is not a valid agent name",
            if phase.is_empty() {
                String::new()
            } else {
                format!("{phase}: ")
            },
            a.value
        ),
    )
    .at(a.span)
    .with_label("not a valid agent name");
    d.help(format!(
        "agent names are lowercase letters, digits and hyphens, starting with a letter (e.g. \"{}\")",
        agent_name_suggestion(&a.value)
    ))
}

/// A valid agent name close to `name`: lowercase, other characters as single hyphens, and
/// `agent-` in front when it would not start with a letter.
fn agent_name_suggestion(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out.to_owned()
    } else if out.is_empty() {
        "reviewer".to_owned()
    } else {
        format!("agent-{out}")
    }
}

#[cfg(test)]
mod tests {
    use super::{agent_name_suggestion, valid_agent_name};
    use crate::check::testing::{check, find};

    #[test]
    fn wrong_types_say_how_to_write_the_field() {
        let help = |phase: &str| {
            let text = format!(r#"[{{"id": "a", "task": "x", {phase}}}]"#);
            find(&check(&text), "E0004").help.unwrap()
        };
        assert_eq!(
            help(r#""dependsOn": "b""#),
            r#"wrap it in a list: "dependsOn": ["b"]"#
        );
        assert_eq!(
            help(r#""optional": "true""#),
            r#"drop the quotes: "optional": true"#
        );
        assert_eq!(
            help(r#""timeout": "60000""#),
            r#"drop the quotes: "timeout": 60000"#
        );
        assert_eq!(help(r#""tools": [1]"#), r#"quote it: "1""#);
        assert_eq!(
            help(r#""tools": "read""#),
            r#"write it as a list: "tools": ["read"]"#
        );
        assert_eq!(
            help(r#""tools": "read, grep""#),
            r#"write it as a list: "tools": ["read", "grep"]"#
        );
        assert_eq!(
            help(r#""tools": true"#),
            r#"write a list of strings: "tools": ["…", "…"]"#
        );
        assert_eq!(
            help(r#""model": 3"#),
            r#"write the value in double quotes: "model": "…""#
        );
    }

    #[test]
    fn agent_name_suggestions_are_valid() {
        for (bad, good) in [
            ("Code_Reviewer", "code-reviewer"),
            ("Judge 1", "judge-1"),
            ("2nd-fixer", "agent-2nd-fixer"),
            ("--X--", "x"),
            ("日本", "reviewer"),
        ] {
            assert_eq!(agent_name_suggestion(bad), good);
            assert!(valid_agent_name(good));
        }
    }

    #[test]
    fn agent_names() {
        assert!(valid_agent_name("risk-reviewer2"));
        assert!(!valid_agent_name("Risk"));
        assert!(!valid_agent_name("2x"));
        assert!(!valid_agent_name("a_b"));
        assert!(!valid_agent_name(""));
    }
}
