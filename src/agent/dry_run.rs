//! `--dry-run` (SPEC §9.9): no model calls. Each prompt is written, in call order, as
//!
//! ```text
//! ── [<node>] agent=<agent> model=<model|default> ──
//! <prompt>
//! ```
//!
//! and answered with a stub: gate calls `[dry-run] <node>\nVERDICT: PASS`, judges
//! `WINNER: 1`, calls carrying a [`Request::json_stub`] its compact JSON, others
//! `[dry-run] <node>`.

use std::io::Write;
use std::sync::Mutex;

use crate::agent::call::{Agent, BoxFuture, Outcome, Purpose, Request, StopReason};

use crate::process::Cancel;

/// The dry-run backend; the listing goes to the writer it was made with (stdout normally,
/// stderr with `--format json`). Each entry is written and flushed whole under a lock, so
/// concurrent calls never interleave.
pub struct DryRun {
    out: Mutex<Box<dyn Write + Send>>,
}

impl DryRun {
    /// Print to `out`.
    pub fn new(out: Box<dyn Write + Send>) -> DryRun {
        DryRun {
            out: Mutex::new(out),
        }
    }

    /// Print to stdout.
    pub fn stdout() -> DryRun {
        DryRun::new(Box::new(std::io::stdout()))
    }

    /// Print to stderr.
    pub fn stderr() -> DryRun {
        DryRun::new(Box::new(std::io::stderr()))
    }

    /// The listing entry for one call.
    pub fn entry(request: &Request) -> String {
        format!(
            "── [{}] agent={} model={} ──\n{}\n",
            request.node,
            request.agent,
            request.model.as_deref().unwrap_or("default"),
            request.prompt
        )
    }

    /// The stub answer for one call.
    pub fn stub(request: &Request) -> String {
        match (request.purpose, &request.json_stub) {
            (Purpose::Gate, _) => format!("[dry-run] {}\nVERDICT: PASS", request.node),
            (Purpose::Judge, _) => "WINNER: 1".to_owned(),
            (Purpose::Task, Some(v)) => v.to_json(),
            (Purpose::Task, None) => format!("[dry-run] {}", request.node),
        }
    }
}

impl Agent for DryRun {
    fn name(&self) -> &str {
        "dry-run"
    }

    fn call<'a>(&'a self, request: Request, cancel: Cancel) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Outcome::failed(StopReason::Cancelled, "Aborted");
            }
            let entry = DryRun::entry(&request);
            let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
            let written = out.write_all(entry.as_bytes()).and_then(|()| out.flush());
            drop(out);
            let mut o = Outcome::ok(DryRun::stub(&request));
            o.model = request.model.clone();
            if let Err(e) = written {
                o.warnings
                    .push(format!("dry-run: cannot write the prompt listing: {e}"));
            }
            o
        })
    }

    /// Nothing runs, so nothing writes.
    fn sandboxed(&self) -> bool {
        true
    }

    /// No model is called.
    fn uses_system_prompt(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::record::tests::request;
    use crate::value::parse_json;
    use std::sync::Arc;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn transcript_and_stubs() {
        let buf = Shared::default();
        let d = DryRun::new(Box::new(buf.clone()));
        let run = |r: Request| smol::block_on(d.call(r, Cancel::never()));

        let o = run(request("plan", "default", "Plan the work."));
        assert_eq!(o.output, "[dry-run] plan");
        assert!(o.is_ok());

        let mut r = request("check", "critic", "Is it good?");
        r.purpose = Purpose::Gate;
        r.model = Some("claude-haiku-4-5".into());
        assert_eq!(run(r).output, "[dry-run] check\nVERDICT: PASS");

        let mut r = request("pick#judge", "judge", "Which?");
        r.purpose = Purpose::Judge;
        assert_eq!(run(r).output, "WINNER: 1");

        let mut r = request("extract#0", "scout", "Give JSON\nplease");
        r.json_stub = Some(parse_json(r#"{ "items": ["dry-run"], "n": 0 }"#).unwrap());
        assert_eq!(run(r).output, r#"{"items":["dry-run"],"n":0}"#);

        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "── [plan] agent=default model=default ──\nPlan the work.\n\
             ── [check] agent=critic model=claude-haiku-4-5 ──\nIs it good?\n\
             ── [pick#judge] agent=judge model=default ──\nWhich?\n\
             ── [extract#0] agent=scout model=default ──\nGive JSON\nplease\n"
        );
    }
}
