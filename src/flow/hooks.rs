//! The flow's `hooks` (SPEC §8.10): a command per way a run can end, run once when it ends.
//! Each command is an argv (never a shell string) whose elements after the first are
//! templates that may read `{args.X}` and the hook-only heads `{run.id}`, `{run.status}` and
//! `{run.dir}`. Lowering reports the shape (E0004, E0003, E0005); the placeholder rules are
//! `check::hooks`'.

use super::fields::ObjectKind;
use super::ir::{Field, Hook, HookEvent, Hooks, MIN_HOOK_TIMEOUT_MS, Text};
use super::lowerer::{Lowerer, element_help};
use crate::diag::{Code, Diagnostic};
use crate::json::{Kind, Member};
use crate::value::format_number;

impl Lowerer {
    /// `hooks`: an object of argv arrays and a `timeout` (E0004 for a wrong type, E0003 for an
    /// unknown key, E0005 for an empty command or a bad timeout). A hook that is not sound is
    /// left out, the others kept.
    pub(super) fn hooks(&mut self, m: &Member) -> Option<Field<Hooks>> {
        let members = self.object_members(
            m,
            "an object {\"onComplete\"?: [argv], \"onFail\"?: [argv], \"onPause\"?: [argv], \"onBlock\"?: [argv], \"timeout\"?: ms}",
        )?;
        let f = self.fields(members, ObjectKind::Hooks, |_| false);
        let mut hooks = Hooks::default();
        for (name, member) in f.iter() {
            if let Some(event) = HookEvent::parse(name)
                && let Some(argv) = self.hook_argv(member)
            {
                hooks.hooks.push(Hook {
                    event,
                    argv,
                    key: member.key.span,
                    span: member.value.span,
                });
            }
        }
        if let Some(t) = self.number(&f, "timeout") {
            if t.value.is_finite() && t.value >= MIN_HOOK_TIMEOUT_MS {
                hooks.timeout = Some(t);
            } else {
                self.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!(
                            "hooks.timeout must be at least 1000 ms, found {}",
                            format_number(t.value)
                        ),
                    )
                    .at(t.span)
                    .with_label("expected a number of ms >= 1000")
                    .help("give each hook at least a second, e.g. \"timeout\": 10000, or remove 'timeout' for the default 30000"),
                );
            }
        }
        Some(Field::new(hooks, m.key.span, m.value.span))
    }

    /// One hook's argv: a non-empty array of strings whose first element (the program) is not
    /// empty.
    fn hook_argv(&mut self, m: &Member) -> Option<Vec<Text>> {
        let key = m.key.value.as_str();
        let items = match &m.value.kind {
            Kind::Array(items) => items,
            Kind::String(s) => {
                let words: Vec<String> = s
                    .value
                    .split_whitespace()
                    .map(|w| format!("\"{}\"", w.replace('"', "\\\"")))
                    .collect();
                self.push(
                    Diagnostic::new(
                        Code::WrongType,
                        format!("hooks.{key} must be an argv array of strings, found a string"),
                    )
                    .at(m.value.span)
                    .with_label("a hook is never run by a shell")
                    .help(format!(
                        "write the program and each argument as its own element: \"{key}\": [{}]",
                        words.join(", ")
                    )),
                );
                return None;
            }
            _ => {
                self.push(
                    Diagnostic::new(
                        Code::WrongType,
                        format!(
                            "hooks.{key} must be an argv array of strings, found {}",
                            m.value.type_name()
                        ),
                    )
                    .at(m.value.span)
                    .with_label("expected an array of strings")
                    .help(format!(
                        "write the program and its arguments, e.g. \"{key}\": [\"notify-send\", \"tfc\", \"{{run.id}} {{run.status}}\"]"
                    )),
                );
                return None;
            }
        };
        let mut argv = Vec::with_capacity(items.len());
        let mut ok = true;
        for item in items {
            match &item.kind {
                Kind::String(s) => argv.push(Text::new(s.clone())),
                _ => {
                    ok = false;
                    self.push(
                        Diagnostic::new(
                            Code::WrongType,
                            format!(
                                "hooks.{key} elements must be strings, found {}",
                                item.type_name()
                            ),
                        )
                        .at(item.span)
                        .with_label("expected a string")
                        .help(element_help(item)),
                    );
                }
            }
        }
        if !ok {
            return None;
        }
        if argv.first().is_none_or(|a| a.as_str().is_empty()) {
            let (span, label) = match items.first() {
                Some(first) => (first.span, "the program is empty"),
                None => (m.value.span, "no program"),
            };
            self.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("hooks.{key} must name a program: a non-empty array whose first element is not empty"),
                )
                .at(span)
                .with_label(label)
                .help(format!(
                    "e.g. \"{key}\": [\"notify-send\", \"tfc\", \"{{run.id}} {{run.status}}\"], or remove '{key}'"
                )),
            );
            return None;
        }
        Some(argv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(hooks: &str) -> (Option<Hooks>, Vec<String>) {
        let text = format!(r#"{{"hooks": {hooks}, "phases": [{{"id": "a", "task": "x"}}]}}"#);
        let l = crate::flow::lower_source(&text, &Default::default());
        let codes = l
            .diagnostics
            .iter()
            .map(|d| d.code.as_str().to_owned())
            .collect();
        (l.flow.and_then(|f| f.hooks.map(|h| h.value)), codes)
    }

    #[test]
    fn hooks_lower_with_their_events_and_timeout() {
        let (hooks, codes) = lowered(
            r#"{"onFail": ["notify-send", "{run.id}"], "onComplete": ["true"], "timeout": 5000}"#,
        );
        assert!(codes.is_empty(), "{codes:?}");
        let hooks = hooks.expect("hooks");
        assert_eq!(hooks.timeout_ms(), 5000);
        let fail = hooks.get(HookEvent::Fail).expect("onFail");
        let argv: Vec<&str> = fail.argv.iter().map(Text::as_str).collect();
        assert_eq!(argv, ["notify-send", "{run.id}"]);
        assert!(hooks.get(HookEvent::Pause).is_none());
        assert_eq!(lowered(r#"{}"#).0.expect("hooks").timeout_ms(), 30_000);
    }

    #[test]
    fn bad_hooks_are_reported_with_their_codes() {
        let cases: [(&str, &[&str]); 9] = [
            (r#"["x"]"#, &["E0004"]),
            (r#"{"onComplete": "notify-send done"}"#, &["E0004"]),
            (r#"{"onComplete": ["a", 1]}"#, &["E0004"]),
            (r#"{"onComplete": []}"#, &["E0005"]),
            (r#"{"onComplete": [""]}"#, &["E0005"]),
            (r#"{"onCompleted": ["a"]}"#, &["E0003"]),
            (r#"{"timeout": 999}"#, &["E0005"]),
            (r#"{"timeout": "30s"}"#, &["E0004"]),
            (r#"{"onFail": ["a"], "timeout": -1}"#, &["E0005"]),
        ];
        for (hooks, want) in cases {
            assert_eq!(lowered(hooks).1, want, "{hooks}");
        }
    }

    #[test]
    fn a_misspelt_key_gets_a_did_you_mean() {
        let text = r#"{"hooks": {"onfail": ["a"]}, "phases": [{"id": "a", "task": "x"}]}"#;
        let l = crate::flow::lower_source(text, &Default::default());
        let d = &l.diagnostics[0];
        assert_eq!(d.message, "unknown field 'onfail' in hooks");
        assert_eq!(d.help.as_deref(), Some("did you mean 'onFail'?"));
    }
}
