//! `tfc_test`: flows' tests run as `tfc test` runs them (SPEC §17), every agent call answered
//! by the test — no backend, no tokens, nothing written. Either the test files under `paths`
//! (default: the root), or `tests` given inline with the flow they test (`path`, `name` or
//! `flow`, as the other flow tools take it). The result holds the objects of
//! `tfc test --format json`, the counts, and the problems of invalid test files and flows.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::call::{Args, ToolError, ToolOutput};
use super::flows::{flow_input, to_wire};
use crate::diag::render::{render_file, to_json};
use crate::test::{CheckedFile, TestOptions, report};

/// `tfc_test`.
pub fn tool_test(mut args: Args, root: &Path) -> Result<ToolOutput, ToolError> {
    let paths = args.opt_strings("paths")?;
    let tests = args.take("tests");
    let filter = args.opt_str("filter")?;
    let missing = args.opt_str("missing")?;
    let missing_stub = match missing.as_deref() {
        None | Some("fail") => false,
        Some("stub") => true,
        Some(other) => {
            return Err(ToolError::arg(
                "missing",
                format!("'{other}' is not fail or stub"),
            ));
        }
    };
    let checked: Vec<CheckedFile> = match tests {
        Some(tests) => {
            if !paths.is_empty() {
                return Err(ToolError::new(
                    "pass 'paths' (test files) or 'tests' (inline tests with their flow), not both",
                ));
            }
            let Value::Array(_) = &tests else {
                return Err(ToolError::arg(
                    "tests",
                    format!(
                        "expected an array of tests ([{{\"name\": …, \"answers\": …, \"expect\": …}}]), found {}",
                        super::call::type_name(&tests)
                    ),
                ));
            };
            let input = flow_input(&mut args, root).map_err(|e| {
                ToolError::new(format!("inline 'tests' need their flow: {}", e.message))
            })?;
            args.finish(&[
                "paths", "tests", "path", "name", "flow", "filter", "missing",
            ])?;
            let text = serde_json::to_string_pretty(&tests).unwrap_or_default();
            vec![crate::test::check_inline(
                "tests",
                &text,
                input.source,
                &input.default_name,
                root,
            )]
        }
        None => {
            if let Some(k) = ["path", "name", "flow"]
                .into_iter()
                .find(|k| args.take(k).is_some())
            {
                return Err(ToolError::arg(
                    k,
                    "names the flow of inline 'tests', and no 'tests' were given; pass test files with 'paths' instead",
                ));
            }
            args.finish(&[
                "paths", "tests", "path", "name", "flow", "filter", "missing",
            ])?;
            let dirs = if paths.is_empty() {
                vec![root.to_path_buf()]
            } else {
                paths
                    .iter()
                    .map(|p| under_root(p, root).map_err(|e| ToolError::arg("paths", e)))
                    .collect::<Result<Vec<_>, _>>()?
            };
            let files =
                crate::test::discover::discover(&dirs).map_err(|e| ToolError::arg("paths", e))?;
            if files.is_empty() {
                return Err(ToolError::arg(
                    "paths",
                    "no test files (*.test.json) there; write one, or pass 'tests' inline with the flow",
                ));
            }
            files
                .iter()
                .map(|f| {
                    let shown = f.strip_prefix(root).map(Path::to_path_buf);
                    let mut c = crate::test::check_file(f, root);
                    if let Ok(shown) = shown {
                        c.source.name = shown.display().to_string();
                    }
                    c
                })
                .collect()
        }
    };
    let opts = TestOptions {
        filter,
        cwd: root.to_path_buf(),
        jobs: std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        missing_stub,
        coverage: false,
        keep_runs: None,
    };
    let started = std::time::Instant::now();
    let reports = crate::test::run_files(checked, &opts);
    let counts = report::Counts::of(&reports);
    let exit = report::exit_code(&reports);
    let mut diagnostics = Vec::new();
    let mut rendered = String::new();
    for r in &reports {
        let c = &r.checked;
        diagnostics.extend(
            c.diagnostics
                .iter()
                .map(|d| to_wire(&to_json(d, &c.source))),
        );
        rendered.push_str(&render_file(&c.diagnostics, &c.source, false));
        if let Some(f) = c.flow.as_ref().filter(|f| f.flow.is_none()) {
            let errors: Vec<_> = f
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .cloned()
                .collect();
            diagnostics.extend(errors.iter().map(|d| to_wire(&to_json(d, &f.source))));
            rendered.push_str(&render_file(&errors, &f.source, false));
        }
    }
    let tests: Vec<Value> = report::json_objects(&reports).iter().map(to_wire).collect();
    let structured = json!({
        "ok": exit == 0,
        "passed": counts.passed,
        "failed": counts.failed,
        "errors": counts.errors,
        "tests": tests,
        "diagnostics": diagnostics,
    });
    let text = format!(
        "{rendered}{}",
        report::text(&reports, started.elapsed()).trim_start()
    );
    Ok(ToolOutput::new(structured, text))
}

/// `p` (relative to `root`) as an existing file or directory inside it.
fn under_root(p: &str, root: &Path) -> Result<PathBuf, String> {
    let real = root
        .join(p)
        .canonicalize()
        .map_err(|e| format!("cannot read '{p}' (under {}): {e}", root.display()))?;
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    if !real.starts_with(&real_root) {
        return Err(format!(
            "'{p}' is outside the root {}; pass a path inside it",
            root.display()
        ));
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(root: &Path, v: Value) -> Result<ToolOutput, String> {
        tool_test(Args::new(Some(&v)).unwrap(), root).map_err(|e| e.message)
    }

    fn refused(root: &Path, v: Value) -> String {
        match call(root, v) {
            Ok(out) => panic!("not refused: {}", out.text),
            Err(e) => e,
        }
    }

    const FLOW: &str = r#"{"name": "ship", "phases": [
        {"id": "draft", "task": "Write"},
        {"id": "check", "type": "gate", "dependsOn": ["draft"], "task": "Good? {steps.draft.output}"}]}"#;

    #[test]
    fn test_files_under_the_root_run_and_report_as_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("ship.json"), FLOW).unwrap();
        std::fs::write(
            root.join("ship.test.json"),
            r#"{"flow": "ship.json", "tests": [
                {"name": "passes", "answers": {"*": "VERDICT: PASS"}, "expect": {"status": "completed"}},
                {"name": "blocks", "answers": {"*": "VERDICT: BLOCK"}, "expect": {"status": "completed"}}]}"#,
        )
        .unwrap();
        let out = call(root, json!({})).unwrap();
        let s = &out.structured;
        assert_eq!(
            (&s["ok"], &s["passed"], &s["failed"], &s["errors"]),
            (&json!(false), &json!(1), &json!(1), &json!(0))
        );
        assert_eq!(
            s["tests"][0],
            json!({"file": "ship.test.json", "name": "passes", "result": "ok", "status": "completed"})
        );
        assert_eq!(s["tests"][1]["failures"][0]["expectation"], "status");
        assert!(out.text.contains("test blocks ... FAILED"), "{}", out.text);
        assert!(out.text.contains("1 passed; 1 failed"), "{}", out.text);
        let only = call(root, json!({"paths": ["ship.test.json"], "filter": "pass"})).unwrap();
        assert_eq!(only.structured["ok"], json!(true));
        assert_eq!(only.structured["tests"].as_array().unwrap().len(), 1);
        let e = refused(root, json!({"paths": ["../"]}));
        assert!(
            e.starts_with("argument 'paths'") && e.contains("outside the root"),
            "{e}"
        );
    }

    #[test]
    fn inline_tests_take_their_flow_like_the_other_tools() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let flow: Value = serde_json::from_str(FLOW).unwrap();
        let out = call(
            root,
            json!({"flow": flow, "tests": [{"name": "inline", "answers": {"draft": "x", "check": "VERDICT: PASS"},
                                             "expect": {"status": "completed", "prompts": {"check": {"contains": "Good? x"}}}}]}),
        )
        .unwrap();
        assert_eq!(out.structured["ok"], json!(true), "{}", out.text);
        assert_eq!(out.structured["tests"][0]["name"], "inline");
        // An invalid test: its diagnostics come back, and every test is an error.
        let bad = call(
            root,
            json!({"flow": flow, "tests": [{"name": "typo", "answers": {"drfat": "x"}}]}),
        )
        .unwrap();
        assert_eq!(bad.structured["ok"], json!(false));
        assert_eq!(bad.structured["errors"], json!(1));
        assert_eq!(bad.structured["diagnostics"][0]["code"], "T0005");
        assert!(bad.text.contains("did you mean 'draft'?"), "{}", bad.text);
        let e = refused(root, json!({"tests": []}));
        assert!(e.contains("inline 'tests' need their flow"), "{e}");
        let e = refused(root, json!({"flow": flow, "tests": {"name": "x"}}));
        assert!(e.starts_with("argument 'tests'"), "{e}");
        let e = refused(root, json!({"flow": flow}));
        assert!(e.starts_with("argument 'flow'"), "{e}");
        let e = refused(root, json!({"missing": "skip"}));
        assert!(e.starts_with("argument 'missing'"), "{e}");
    }
}
