//! The generic command backend (SPEC §9.6, `kind = "command"`, `--agent-cmd`).
//!
//! argv = the configured command, run without a shell; stdin = the prompt exactly; a non-empty
//! system prompt goes to a private (0600) temp file named by `TFC_SYSTEM_PROMPT_FILE`, deleted
//! after the call. The environment is tfc's whole environment, less its `TFC_*` variables, plus
//! the call's `TFC_*` variables. Exit 0 ⇒ the answer is stdout minus trailing whitespace;
//! otherwise the call failed, with the JS-trimmed stderr as the error. No usage is reported.

use std::ffi::OsString;
use std::io::{self, Write};
use std::time::Duration;

use tempfile::NamedTempFile;

use super::env::{self, EnvPolicy, EnvVars};
use crate::agent::call::{Agent, BoxFuture, Outcome, Request, StopReason, idle_timeout_error};
use crate::process::Cancel;
use crate::process::{self, End, Keep, ProcessResult, ProcessSpec, StdoutMode};
use crate::value::{js_trim, js_trim_end};

/// A configured command run once per call.
#[derive(Clone)]
pub struct CommandBackend {
    argv: Vec<String>,
    /// The environment passed on (default: tfc's own, read at each call).
    pub base_env: Option<EnvVars>,
    /// SIGTERM → SIGKILL grace when stopping the command.
    pub kill_grace: Duration,
}

impl CommandBackend {
    /// `argv[0]` is the program (a path, or a name looked up on `PATH`).
    pub fn new(argv: Vec<String>) -> Result<CommandBackend, String> {
        match argv.first() {
            None => Err("empty command".into()),
            Some(p) if p.is_empty() => Err("empty program name in command".into()),
            Some(_) => Ok(CommandBackend {
                argv,
                base_env: None,
                kill_grace: process::KILL_GRACE,
            }),
        }
    }

    /// From a command line split like a shell would ([`split_command`]); for `--agent-cmd`.
    pub fn from_command_line(text: &str) -> Result<CommandBackend, String> {
        CommandBackend::new(split_command(text)?)
    }

    /// The program and its arguments.
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    async fn run(&self, request: Request, cancel: Cancel) -> Outcome {
        let mut env = env::filter(
            &self.base_env.clone().unwrap_or_else(env::parent_env),
            &EnvPolicy::Full,
            &[],
        );
        env::set(&mut env, env::call_vars(&request));
        let system_file = if request.system_prompt.is_empty() {
            None
        } else {
            match private_temp_file("tfc-system-prompt-", &request.system_prompt) {
                Ok(f) => Some(f),
                Err(e) => {
                    return Outcome::failed(
                        StopReason::Failed,
                        format!("cannot write the system prompt file: {e}"),
                    );
                }
            }
        };
        if let Some(f) = &system_file {
            env::set(
                &mut env,
                [("TFC_SYSTEM_PROMPT_FILE", OsString::from(f.path()))],
            );
        }
        let mut spec = ProcessSpec::new(&self.argv[0]).args(&self.argv[1..]);
        spec.env = env;
        spec.cwd = work_dir(&request);
        spec.stdin = Some(request.prompt.clone().into_bytes());
        spec.idle_timeout = request.idle_timeout;
        spec.wall_timeout = request.wall_timeout;
        spec.kill_grace = self.kill_grace;
        spec.stdout = StdoutMode::Keep(Keep::ALL);
        spec.stderr = Keep::Tail(process::STDERR_TAIL);
        if let Some(failed) = check_cwd(&spec) {
            return failed;
        }
        let result = process::run_process(spec, cancel).await;
        // The file lives until the process is gone; dropping it deletes it.
        drop(system_file);
        let result = match result {
            Ok(r) => r,
            Err(e) => return spawn_failure(&self.argv[0], &e),
        };
        let output = js_trim_end(&result.stdout_text()).to_owned();
        let stderr = result.stderr_text();
        let mut outcome = match stopped(&result, &request) {
            Some(o) => o,
            None if result.status.success() => Outcome::ok(""),
            None => {
                let trimmed = js_trim(&stderr);
                let error = if trimmed.is_empty() {
                    format!("command exited with code {}", result.code())
                } else {
                    trimmed.to_owned()
                };
                Outcome::failed(StopReason::Failed, error)
            }
        };
        // An answer over the cap is not kept (it would only multiply in the record).
        if result.end != End::OutputTooLarge {
            outcome.output = output;
        }
        outcome.exit_code = Some(result.code());
        outcome.stderr = stderr;
        outcome
    }
}

impl std::fmt::Debug for CommandBackend {
    // Environment values may be secrets: only their names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandBackend")
            .field("argv", &self.argv)
            .field("base_env", &self.base_env.as_ref().map(|e| env::names(e)))
            .field("kill_grace", &self.kill_grace)
            .finish()
    }
}

impl Agent for CommandBackend {
    fn name(&self) -> &str {
        "command"
    }

    fn call<'a>(&'a self, request: Request, cancel: Cancel) -> BoxFuture<'a, Outcome> {
        Box::pin(self.run(request, cancel))
    }

    fn available(&self) -> Result<(), String> {
        crate::process::program_available(&self.argv[0])
    }
}

/// The outcome of a call the supervisor stopped (timeouts, cancellation); `None` when the
/// process ended by itself or was settled.
pub(crate) fn stopped(result: &ProcessResult, request: &Request) -> Option<Outcome> {
    let ms = |d: Option<Duration>| d.map_or(0, |d| d.as_millis());
    match result.end {
        End::Exited | End::Settled | End::Aborted | End::LineTooLong => None,
        End::IdleTimeout => Some(Outcome::failed(
            StopReason::IdleTimeout,
            idle_timeout_error(ms(request.idle_timeout)),
        )),
        End::WallTimeout => Some(Outcome::failed(
            StopReason::WallTimeout,
            format!(
                "Phase timed out after {}ms (subagent aborted)",
                ms(request.wall_timeout)
            ),
        )),
        End::Cancelled => Some(Outcome::failed(StopReason::Cancelled, "Aborted")),
        End::OutputTooLarge => Some(Outcome::failed(
            StopReason::Failed,
            process::output_cap_error(process::max_output()),
        )),
    }
}

/// The outcome of a process that could not be started.
pub(crate) fn spawn_failure(program: &str, e: &io::Error) -> Outcome {
    if e.kind() == io::ErrorKind::NotFound {
        Outcome::failed(
            StopReason::BackendMissing,
            format!("command not found: `{program}` (not on PATH, or the path does not exist)"),
        )
    } else {
        Outcome::failed(
            StopReason::BackendMissing,
            format!("cannot start `{program}`: {e}"),
        )
    }
}

/// The request's working directory (`None` when empty: tfc's own).
pub(crate) fn work_dir(request: &Request) -> Option<std::path::PathBuf> {
    (!request.cwd.as_os_str().is_empty()).then(|| request.cwd.clone())
}

/// A missing working directory would look like a missing program to `spawn`; say what it is.
pub(crate) fn check_cwd(spec: &ProcessSpec) -> Option<Outcome> {
    let dir = spec.cwd.as_ref()?;
    (!dir.is_dir()).then(|| {
        Outcome::failed(
            StopReason::Failed,
            format!("working directory does not exist: {}", dir.display()),
        )
    })
}

/// A private (0600) temp file holding `text`, deleted when dropped.
pub(crate) fn private_temp_file(prefix: &str, text: &str) -> io::Result<NamedTempFile> {
    let mut f = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".md")
        .tempfile()?;
    f.write_all(text.as_bytes())?;
    f.flush()?;
    Ok(f)
}

/// Split a command line into words like a POSIX shell would, without expanding anything:
/// blanks separate words; `'…'` keeps everything literally; in `"…"` a backslash escapes only
/// `$`, `` ` ``, `"`, `\` and a newline; outside quotes a backslash escapes any character;
/// backslash-newline joins lines; `#` at the start of a word begins a comment. `$`, `` ` ``, `~`
/// and globs stay literal. Unquoted `| & ; < > ( )` are errors: the command runs without a
/// shell, so they would not mean what they mean there.
///
/// ```
/// use tfc::agent::split_command;
/// assert_eq!(split_command(r#"my-agent --name "a b" 'c d' e\ f"#).unwrap(),
///            ["my-agent", "--name", "a b", "c d", "e f"]);
/// ```
pub fn split_command(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
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
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated single quote in command".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('$' | '`' | '"' | '\\')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated double quote in command".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated double quote in command".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => return Err("command ends with a backslash".into()),
            },
            '|' | '&' | ';' | '<' | '>' | '(' | ')' => {
                return Err(format!(
                    "unquoted `{c}` in command: it runs without a shell; quote the character, \
                     or run a shell explicitly (sh -c '…')"
                ));
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err("empty command".into());
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        split_command(s).unwrap()
    }

    #[test]
    fn words_quotes_and_escapes() {
        assert_eq!(split("  a   b\tc\n"), ["a", "b", "c"]);
        assert_eq!(split(r#"a'b c'"d e"f"#), ["ab cd ef"]);
        assert_eq!(split(r#"'' "" x"#), ["", "", "x"]);
        assert_eq!(split(r"a\ b \'c\' \\"), ["a b", "'c'", "\\"]);
        assert_eq!(split(r#""\$x \` \" \\ \n""#), ["$x ` \" \\ \\n"]);
        assert_eq!(split(r"'it''s' '\n'"), ["its", "\\n"]);
        assert_eq!(split("a\\\nb"), ["ab"]);
        assert_eq!(split("\"a\\\nb\""), ["ab"]);
        assert_eq!(split("$HOME ~ *.rs `x`"), ["$HOME", "~", "*.rs", "`x`"]);
        assert_eq!(split("a # comment\nb"), ["a", "b"]);
        assert_eq!(split("a#b"), ["a#b"]);
        assert_eq!(split("\"é ü\" 'ß'"), ["é ü", "ß"]);
        assert_eq!(split("'a|b' \"c;d\" e\\&f"), ["a|b", "c;d", "e&f"]);
    }

    #[test]
    fn errors() {
        for (input, want) in [
            ("'abc", "unterminated single quote"),
            ("\"abc", "unterminated double quote"),
            ("\"abc\\", "unterminated double quote"),
            ("abc\\", "ends with a backslash"),
            ("a | b", "unquoted `|`"),
            ("a > f", "unquoted `>`"),
            ("a;b", "unquoted `;`"),
            ("", "empty command"),
            ("  # only a comment", "empty command"),
        ] {
            let err = split_command(input).unwrap_err();
            assert!(err.contains(want), "{input:?}: {err}");
        }
    }
}
