//! `script` (SPEC §3.11): a command, run without a shell (argv) or with `sh -c` (a string).

use super::common::{Cx, need};
use crate::diag::{Code, Diagnostic};
use crate::flow::enums::OutputMode;
use crate::flow::fields::FieldDef;
use crate::flow::fields::{FieldType, f};
use crate::flow::ir::{Field, Phase, Text};
use crate::flow::lowerer::{Lowerer, PhaseFields, element_help};
use crate::json::{Kind, Member, Str};

/// A script's `run`.
#[derive(Clone, Debug)]
pub enum Run {
    /// `sh -c` with this text (no placeholders allowed).
    Shell(Str),
    /// argv, each element a template.
    Argv(Vec<Text>),
}

/// A script phase.
#[derive(Clone, Debug)]
pub struct Script {
    /// `run`.
    pub run: Option<Field<Run>>,
    /// `input`: the stdin template.
    pub input: Option<Text>,
}

impl Script {
    /// The defaults.
    pub const DEFAULT: Script = Script {
        run: None,
        input: None,
    };
}

/// The fields of a script phase.
pub(super) const FIELDS: &[FieldDef] = &[
    f(
        "run",
        FieldType::StringOrStrings,
        "script: shell command or argv",
    ),
    f("input", FieldType::String, "script: stdin template"),
];

pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Script {
    let mut k = Script::DEFAULT;
    if let Some(m) = f.get("run") {
        let run = l.run(m);
        k.run = cx.invalid_if_none(f, "run", run);
    }
    k.input = l.text(f, "input");
    k
}

/// E0301 (`run`), E0302 (`output: json`), E0205, W0312, W0313.
pub(super) fn check(p: &Phase, k: &Script, out: &mut Vec<Diagnostic>) {
    let ok = match k.run.as_ref().map(|r| &r.value) {
        Some(Run::Shell(_)) => true,
        Some(Run::Argv(argv)) => argv.first().is_some_and(|a| !a.as_str().is_empty()),
        None => p.invalid.contains(&"run"),
    };
    need(
        p,
        "run",
        ok,
        "add \"run\": a shell command string, or an argv array whose first element is the program",
        out,
    );
    if p.output == OutputMode::Json {
        out.push(
            Diagnostic::new(
                Code::FieldNotAllowed,
                format!(
                    "{}: \"output\": \"json\" is not allowed on a script phase",
                    p.id
                ),
            )
            .at(p.written["output"])
            .with_label("not allowed on a script")
            .phase(&p.id)
            .help(
                "remove it and reference {steps.ID.json} downstream: it safeParses the script's stdout",
            ),
        );
    }
    shell(p, k, out);
}

/// E0205, W0312: shell scripts; W0313: an argv that hands a shell a command string.
fn shell(p: &Phase, k: &Script, out: &mut Vec<Diagnostic>) {
    let src = match k.run.as_ref().map(|r| &r.value) {
        Some(Run::Shell(src)) => src,
        Some(Run::Argv(argv)) => return shell_argv(p, argv, out),
        None => return,
    };
    let template = crate::compile::Template::parse(&src.value);
    for r in template.refs() {
        let at = r.span.range();
        let text = &src.value[at.clone()];
        // `${HOME}`: shell syntax, not meant as a placeholder at all.
        let help = if src.value[..at.start].ends_with('$') {
            format!(
                "write ${} without braces: {{…}} in a string 'run' reads as a placeholder",
                text.trim_start_matches('{').trim_end_matches('}')
            )
        } else {
            format!(
                "use the array form, where each element is interpolated (\"run\": [\"cmd\", \"{text}\"]), or pass the data on stdin with \"input\""
            )
        };
        out.push(
            Diagnostic::new(
                Code::ScriptPlaceholder,
                format!(
                    "{}: a string 'run' is passed to sh -c as written and cannot hold placeholders",
                    p.id
                ),
            )
            .at(src.file_span(at))
            .phase(&p.id)
            .with_label("not interpolated in a shell string")
            .help(help),
        );
    }
    if let Some(at) = unquoted_pipe(&src.value)
        && !src.value.contains("pipefail")
    {
        out.push(
                Diagnostic::new(Code::ScriptPipefail, format!("{}: the pipeline's exit code is only its last command's", p.id))
                    .at(src.file_span(at..at + 1))
                    .phase(&p.id)
                    .with_label("a failure before this pipe is ignored")
                    .help("a string 'run' goes to /bin/sh, which may have no pipefail (dash: `Illegal option -o pipefail`): use the array form [\"bash\", \"-o\", \"pipefail\", \"-c\", \"…\"] so a failing stage fails the script, or split the pipe into separate steps"),
            );
    }
}

/// The shells whose `-c` takes a command string (also by path, `/bin/sh`, or through `env`).
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

/// W0313: `["sh", "-c", "echo {args.x}"]` interpolates the value into the text a shell parses,
/// which reopens the injection that the array form exists to close (SPEC §3.11). Only the
/// command string itself is flagged: the elements after it are the shell's positional
/// parameters (`$0`, `$1`, …), which is exactly where a value belongs. The warning is (S) like
/// every W03xx: strict mode is for flows that want no interpolation surprises, and this is one.
fn shell_argv(p: &Phase, argv: &[Text], out: &mut Vec<Diagnostic>) {
    let words: Vec<&str> = argv.iter().map(Text::as_str).collect();
    let Some(command) = shell_command(&words) else {
        return;
    };
    let text = &argv[command];
    let shell = argv[..command]
        .iter()
        .map(|a| a.as_str().rsplit('/').next().unwrap_or_default())
        .find(|a| SHELLS.contains(a))
        .unwrap_or("sh");
    let (param, example) = if shell == "fish" {
        ("$argv[1]", "[\"fish\", \"-c\", \"echo $argv[1]\", \"{…}\"]")
    } else {
        (
            "\"$1\"",
            "[\"sh\", \"-c\", \"echo \\\"$1\\\"\", \"sh\", \"{…}\"]",
        )
    };
    for r in text.template.refs() {
        let placeholder = &text.as_str()[r.span.range()];
        out.push(
            Diagnostic::new(
                Code::ShellPlaceholder,
                format!(
                    "{}: {placeholder} is interpolated into the command string of {shell} -c, which the shell parses: a value with quotes, ';' or '$(…)' runs as code",
                    p.id
                ),
            )
            .at(text.file_span(r.span))
            .phase(&p.id)
            .with_label(format!("parsed by {shell} as shell code"))
            .help(format!(
                "pass the value as a separate argv element after the command string and use {param} in it, e.g. {example}; or send it on stdin with \"input\""
            )),
        );
    }
}

/// The index of the command string in an argv that runs a shell with `-c`: the program (after
/// an optional `env` with its options and `NAME=value` settings) is a shell, one of its
/// options is `-c` or a cluster holding it (`-lc`, `-ec`), and the command string is the first
/// operand after it (`-o`/`+o`/`-O`/`+O` take a value; `--` ends the options).
fn shell_command(argv: &[&str]) -> Option<usize> {
    let base = |i: usize| argv[i].rsplit('/').next().unwrap_or_default();
    let mut i = 0;
    if argv.is_empty() {
        return None;
    }
    if base(0) == "env" {
        i = 1;
        while i < argv.len() {
            let a = argv[i];
            if a == "-u" || a == "-C" || a == "--unset" || a == "--chdir" {
                i += 2;
            } else if a.starts_with('-') || (a.contains('=') && !a.starts_with('=')) {
                i += 1;
            } else {
                break;
            }
        }
    }
    if i >= argv.len() || !SHELLS.contains(&base(i)) {
        return None;
    }
    let mut seen_c = false;
    i += 1;
    while i < argv.len() {
        let a = argv[i];
        if a == "--" {
            i += 1;
            break;
        }
        let cluster = a.len() > 1
            && (a.starts_with('-') || a.starts_with('+'))
            && !a.starts_with("--")
            && a[1..].bytes().all(|b| b.is_ascii_alphabetic());
        if a.starts_with("--") {
            // A long option (`--norc`, `--login`); bash takes `--rcfile FILE`.
            i += if a == "--rcfile" || a == "--init-file" {
                2
            } else {
                1
            };
            continue;
        }
        if !cluster {
            break;
        }
        seen_c |= a.starts_with('-') && a[1..].contains('c');
        i += if a[1..].ends_with(['o', 'O']) { 2 } else { 1 };
    }
    (seen_c && i < argv.len()).then_some(i)
}

/// The byte offset of the first `|` outside quotes that is not part of `||`.
fn unquoted_pipe(cmd: &str) -> Option<usize> {
    let b = cmd.as_bytes();
    let (mut single, mut double) = (false, false);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if !single => i += 1,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'|' if !single && !double => {
                if b.get(i + 1) == Some(&b'|') {
                    i += 1;
                } else if i == 0 || b[i - 1] != b'|' {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

impl Lowerer {
    /// `run`: a shell string or an argv of templates.
    pub(super) fn run(&mut self, m: &Member) -> Option<Field<Run>> {
        let run = match &m.value.kind {
            Kind::String(s) => Run::Shell(s.clone()),
            Kind::Array(items) => {
                let mut argv = Vec::new();
                for item in items {
                    match &item.kind {
                        Kind::String(s) => argv.push(Text::new(s.clone())),
                        _ => {
                            self.push(
                                Diagnostic::new(
                                    Code::WrongType,
                                    format!(
                                        "'run' elements must be strings, found {}",
                                        item.type_name()
                                    ),
                                )
                                .at(item.span)
                                .with_label("expected a string")
                                .help(element_help(item)),
                            );
                            return None;
                        }
                    }
                }
                Run::Argv(argv)
            }
            _ => {
                self.wrong_type(m, "a shell command string or an argv array");
                return None;
            }
        };
        Some(Field::new(run, m.key.span, m.value.span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::testing::{check, codes, find, spans};

    #[test]
    fn pipes_outside_quotes() {
        assert_eq!(unquoted_pipe("a | b"), Some(2));
        assert_eq!(unquoted_pipe("a || b"), None);
        assert_eq!(unquoted_pipe("echo '|' \"|\""), None);
        assert_eq!(unquoted_pipe("a \\| b"), None);
    }

    #[test]
    fn shell_command_strings_are_found() {
        let at = |items: &[&str]| shell_command(items);
        assert_eq!(at(&["sh", "-c", "echo x"]), Some(2));
        assert_eq!(at(&["/bin/bash", "-lc", "echo x"]), Some(2));
        assert_eq!(at(&["bash", "-e", "-o", "pipefail", "-c", "x"]), Some(5));
        assert_eq!(at(&["bash", "-c", "-e", "x", "name"]), Some(3));
        assert_eq!(at(&["zsh", "-ec", "--", "x"]), Some(3));
        assert_eq!(at(&["env", "sh", "-c", "x"]), Some(3));
        assert_eq!(
            at(&["/usr/bin/env", "-i", "A=1", "dash", "-c", "x"]),
            Some(5)
        );
        assert_eq!(at(&["fish", "-c", "x"]), Some(2));
        assert_eq!(at(&["bash", "--norc", "-c", "x"]), Some(3));
        // No shell, no -c, or nothing after it.
        assert_eq!(at(&["python3", "-c", "x"]), None);
        assert_eq!(at(&["sh", "script.sh", "-c"]), None);
        assert_eq!(at(&["bash", "-c"]), None);
        assert_eq!(at(&["env"]), None);
        assert_eq!(at(&[]), None);
    }

    #[test]
    fn placeholders_in_a_shell_command_string_warn() {
        let text = r#"[{"id": "s", "type": "script",
            "run": ["sh", "-c", "echo {args.x} && ls {args.dir}", "sh", "{args.y}"]}]"#;
        assert_eq!(
            spans(text),
            [
                ("W0313", "{args.x}".to_owned()),
                ("W0313", "{args.dir}".to_owned())
            ]
        );
        let d = find(&check(text), "W0313");
        assert!(!d.is_error());
        assert!(
            d.help
                .unwrap()
                .contains(r#""sh", "-c", "echo \"$1\"", "sh""#)
        );
        // The safe forms: the value as its own element, or no shell at all.
        for ok in [
            r#"[{"id": "s", "type": "script", "run": ["sh", "-c", "echo \"$1\"", "sh", "{args.x}"]}]"#,
            r#"[{"id": "s", "type": "script", "run": ["echo", "{args.x}"]}]"#,
            r#"[{"id": "s", "type": "script", "run": ["python3", "-c", "print('{args.x}')"]}]"#,
        ] {
            assert!(codes(ok).is_empty(), "{ok}: {:?}", codes(ok));
        }
        // Strict mode makes it an error.
        let strict = format!(r#"{{"strictInterpolation": true, "phases": {text}}}"#);
        assert!(find(&check(&strict), "W0313").is_error());
    }

    #[test]
    fn empty_run_is_reported_at_the_run() {
        let text = r#"[{"id": "lint", "type": "script", "run": []}]"#;
        assert_eq!(spans(text), [("E0301", r#""run""#.to_owned())]);
        let d = find(&check(text), "E0301");
        assert_eq!(d.label.as_deref(), Some("'run' is empty"));
    }

    /// W0312's fix works under dash, Debian's /bin/sh (which rejects `set -o pipefail`): the
    /// array form with bash, or a split pipe.
    #[test]
    fn pipefail_help_does_not_need_a_pipefail_shell() {
        let text = r#"[{"id": "s", "type": "script", "run": "cargo clippy 2>&1 | tee log"}]"#;
        let help = find(&check(text), "W0312").help.unwrap();
        assert!(!help.contains("set -o pipefail"), "{help}");
        assert!(
            help.contains(r#"["bash", "-o", "pipefail", "-c", "…"]"#),
            "{help}"
        );
        assert!(help.contains("split the pipe"), "{help}");
    }

    #[test]
    fn shell_variables_get_their_own_help() {
        let text = r#"[{"id": "s", "type": "script", "run": "ls ${HOME} {args.dir}"}]"#;
        let diags = check(text);
        let helps: Vec<_> = diags.iter().map(|d| d.help.clone().unwrap()).collect();
        assert!(
            helps[0].starts_with("write $HOME without braces"),
            "{helps:?}"
        );
        assert!(
            helps[1].contains(r#""run": ["cmd", "{args.dir}"]"#),
            "{helps:?}"
        );
    }
}
