//! The persistence side of a run: `run.json` written piece by piece from the record
//! ([`stored_value`], with each phase's text kept in [`PhaseTexts`]), the journal's input
//! lines, and the definition's hash.

use std::path::Path;
use std::time::Duration;

use crate::run::machine::Input;
use crate::run::record::RunRecord;
use crate::run::store::{OutputSink, RunStore};
use crate::value::Value;

/// The `run.json` text of each phase as last written, with the record it was written from:
/// a rewrite serialises only the phases whose record changed since.
#[derive(Default)]
pub(crate) struct PhaseTexts {
    /// By the phase's place in the record: its id, record and text.
    pub(super) at: Vec<Option<(String, crate::run::record::PhaseRecord, String)>>,
    /// Where the last phase text was made (in `at`), for runs of equal records (every pending
    /// phase of a chain).
    pub(super) last: Option<usize>,
    /// The text of `def`, which does not change during a run: made once.
    pub(super) def: Option<String>,
    /// The last write (the run is over): texts made now are not kept.
    pub(super) closing: bool,
}

/// `flowDefHash`: 16 hex digits of sha256 of the definition's canonical JSON.
pub(crate) fn flow_def_hash(def: &Value) -> crate::value::Map {
    let mut m = crate::value::Map::default();
    let hash =
        crate::run::cache::key::hex16(crate::run::cache::key::canonical_json(def).as_bytes());
    m.insert("flowDefHash".into(), Value::from(hash));
    m
}

/// The journal line of an input.
#[cfg(test)]
pub(crate) fn input_line(input: &Input) -> String {
    let mut out = String::new();
    write_input_line(input, &mut out);
    out
}

/// [`input_line`] appended to `out` (no newline): the input is serialised straight into the
/// text, with no intermediate JSON tree.
pub(crate) fn write_input_line(input: &Input, out: &mut String) {
    out.push_str("{\"type\":\"input\",\"ts\":\"");
    out.push_str(&crate::run::record::timestamp(
        std::time::UNIX_EPOCH + Duration::from_millis(input.at),
    ));
    out.push_str("\",\"input\":");
    if write_cache_checked(input, out) {
        out.push('}');
        return;
    }
    // Serialising an `Input` cannot fail (string keys only); were it to, the line says null.
    let start = out.len();
    let mut bytes = std::mem::take(out).into_bytes();
    if serde_json::to_writer(&mut bytes, input).is_err() {
        bytes.truncate(start);
        bytes.extend_from_slice(b"null");
    }
    *out = String::from_utf8(bytes).unwrap_or_else(|e| {
        let mut b = e.into_bytes();
        b.truncate(start);
        b.extend_from_slice(b"null");
        String::from_utf8_lossy(&b).into_owned()
    });
    out.push('}');
}

/// A `cache-checked` input whose hit is a record read from the parent run (one per reused
/// phase of a resumed run), written by hand as serde writes it; `false`, with `out`
/// untouched, for any other input.
fn write_cache_checked(input: &Input, out: &mut String) -> bool {
    use crate::run::machine::Event;
    use crate::value::write_string;
    let Event::CacheChecked {
        op,
        key,
        hit,
        warning,
    } = &input.what
    else {
        return false;
    };
    let start = out.len();
    out.push_str("{\"at\":");
    out.push_str(&input.at.to_string());
    out.push_str(",\"what\":{\"kind\":\"cache-checked\",\"op\":");
    out.push_str(&op.to_string());
    out.push_str(",\"key\":");
    write_string(key, out);
    out.push_str(",\"hit\":");
    match hit {
        Some(h) => {
            if !h.write_compact(out) {
                out.truncate(start);
                return false;
            }
        }
        None => out.push_str("null"),
    }
    out.push_str(",\"warning\":");
    match warning {
        Some(w) => write_string(w, out),
        None => out.push_str("null"),
    }
    out.push_str("}}");
    true
}

#[allow(clippy::too_many_arguments)]
pub(super) fn stored_value_with_errors(
    record: &mut RunRecord,
    store_errors: &[String],
    versions: &[u64],
    store: Option<&mut RunStore>,
    def: Option<&Value>,
    cwd: &Path,
    meta: &crate::value::Map,
    texts: &mut PhaseTexts,
) -> (String, Vec<std::io::Error>) {
    record.store_errors = store_errors.to_vec();
    let sink = store.map(|s| s as &mut dyn OutputSink);
    stored_value(record, versions, sink, def, cwd, meta, texts)
}

/// `run.json`: the record plus `def`, `cwd`, `tfcVersion`; outputs over
/// [`INLINE_OUTPUT_MAX`](crate::run::store::INLINE_OUTPUT_MAX) are kept in files of their own, each
/// written once per result version.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stored_value(
    record: &RunRecord,
    versions: &[u64],
    mut store: Option<&mut dyn OutputSink>,
    def: Option<&Value>,
    cwd: &Path,
    meta: &crate::value::Map,
    texts: &mut PhaseTexts,
) -> (String, Vec<std::io::Error>) {
    let limit = crate::run::store::INLINE_OUTPUT_MAX;
    let mut errors = Vec::new();
    let mut m = record.fields();
    if record.final_output.len() > limit
        && let Some(store) = store.as_deref_mut()
    {
        match store.final_output(&record.final_output) {
            Ok(file) => {
                m.insert("finalOutput".into(), Value::Null);
                m.insert("finalOutputFile".into(), Value::from(file));
            }
            Err(e) => errors.push(e),
        }
    }
    if def.is_some() {
        // Its text is written from the cache below.
        m.insert("def".into(), Value::Null);
        m.insert("cwd".into(), Value::from(cwd.display().to_string()));
        m.insert("tfcVersion".into(), Value::from(env!("CARGO_PKG_VERSION")));
        for (k, v) in meta {
            m.insert(k.clone(), v.clone());
        }
    }
    // Written member by member, each phase built, written and dropped in turn: the same
    // text as the whole record's `to_pretty_json`, without a tree of the whole record.
    use crate::value::{newline, write_readable_at, write_string};
    let mut out = String::with_capacity(256 * (record.phases.len() + 4));
    out.push('{');
    for (i, (key, v)) in m.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(&mut out, 1);
        write_string(key, &mut out);
        out.push_str(": ");
        if key == "def"
            && let Some(def) = def
        {
            let text = texts.def.get_or_insert_with(|| {
                let mut t = String::new();
                write_readable_at(def, &mut t, 1);
                t
            });
            out.push_str(text);
            continue;
        }
        if key != "phases" {
            write_readable_at(v, &mut out, 1);
            continue;
        }
        if record.phases.is_empty() {
            out.push_str("{}");
            continue;
        }
        out.push('{');
        for (k, (id, p)) in record.phases.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            newline(&mut out, 2);
            write_string(id, &mut out);
            out.push_str(": ");
            let version = versions.get(k).copied().unwrap_or(0);
            let value = match store.as_deref_mut() {
                Some(store) if p.output.len() > limit => {
                    match store.externalize(id, version, &p.output, p.json.as_ref()) {
                        Ok(files) => p.to_value_stored(Some(&files)),
                        Err(e) => {
                            errors.push(e);
                            p.to_value()
                        }
                    }
                }
                _ => {
                    // Inline output: the text depends on the record alone.
                    if let Some(Some((i, r, t))) = texts.at.get(k)
                        && i == id
                        && r == p
                    {
                        out.push_str(t);
                        continue;
                    }
                    if texts.closing {
                        p.write_readable_at(&mut out, 2);
                        continue;
                    }
                    let same = texts
                        .last
                        .and_then(|l| texts.at.get(l))
                        .and_then(Option::as_ref)
                        .filter(|(_, r, _)| r == p)
                        .map(|(_, _, t)| t.clone());
                    let text = same.unwrap_or_else(|| {
                        let mut t = String::new();
                        p.write_readable_at(&mut t, 2);
                        t
                    });
                    out.push_str(&text);
                    if texts.at.len() <= k {
                        texts
                            .at
                            .resize_with(record.phases.len().max(k + 1), || None);
                    }
                    texts.at[k] = Some((id.clone(), p.clone(), text));
                    texts.last = Some(k);
                    continue;
                }
            };
            write_readable_at(&value, &mut out, 2);
        }
        newline(&mut out, 1);
        out.push('}');
    }
    newline(&mut out, 0);
    out.push('}');
    (out, errors)
}

#[cfg(test)]
mod stored_tests {
    use super::*;
    use crate::agent::{FnAgent, Outcome};
    use crate::run::machine::Event;
    use crate::run::{Interpreter, RunOptions};
    use crate::value::Map;

    fn nested(depth: usize) -> Value {
        let mut v = Value::from("leaf");
        for i in 0..depth {
            v = if i % 2 == 0 {
                Value::Array(vec![Value::Number(i as f64), v])
            } else {
                let mut m = Map::default();
                m.insert(format!("k{i}"), v);
                Value::Object(m)
            };
        }
        v
    }

    #[test]
    fn the_record_is_written_piece_by_piece_as_its_whole_pretty_json() {
        let flow = r#"{"name": "s", "phases": [{"id": "a", "task": "one"},
            {"id": "b", "dependsOn": ["a"], "task": "two \"{steps.a.output}\""}]}"#;
        let agent = FnAgent::new("echo", |req| Outcome::ok(format!("<{}>\n", req.prompt)));
        let mut record = Interpreter::with_agent(agent)
            .options(RunOptions::default())
            .eval_text("s", flow, Map::default())
            .expect("runs");
        record.warnings.push("a: w".into());
        if let Some(p) = record.phases.get_mut("b") {
            p.json = Some(nested(150));
        }
        let def = crate::json::parse(flow).root.expect("json").to_value();
        let mut meta = Map::default();
        meta.insert("flowDefHash".into(), Value::from("0123"));
        let mut texts = PhaseTexts::default();
        let (text, errors) = stored_value(
            &record,
            &[],
            None,
            Some(&def),
            Path::new("/w"),
            &meta,
            &mut texts,
        );
        assert!(errors.is_empty());
        let mut whole = record.to_value();
        if let Value::Object(m) = &mut whole {
            m.insert("def".into(), def.clone());
            m.insert("cwd".into(), Value::from("/w"));
            m.insert("tfcVersion".into(), Value::from(env!("CARGO_PKG_VERSION")));
            m.insert("flowDefHash".into(), Value::from("0123"));
        }
        assert_eq!(text, whole.to_pretty_json());
        // Again, from the texts kept, after one phase changed.
        if let Some(p) = record.phases.get_mut("a") {
            p.output = "changed".into();
        }
        let (again, _) = stored_value(
            &record,
            &[],
            None,
            Some(&def),
            Path::new("/w"),
            &meta,
            &mut texts,
        );
        let mut whole = record.to_value();
        if let Value::Object(m) = &mut whole {
            m.insert("def".into(), def.clone());
            m.insert("cwd".into(), Value::from("/w"));
            m.insert("tfcVersion".into(), Value::from(env!("CARGO_PKG_VERSION")));
            m.insert("flowDefHash".into(), Value::from("0123"));
        }
        assert!(again.contains("\"output\": \"changed\""));
        assert_eq!(again, whole.to_pretty_json());
        // No phases at all.
        record.phases.clear();
        let (text, _) = stored_value(
            &record,
            &[],
            None,
            None,
            Path::new("/w"),
            &meta,
            &mut PhaseTexts::default(),
        );
        assert_eq!(text, record.to_value().to_pretty_json());
    }

    #[test]
    fn input_lines_are_written_as_their_json_tree_would_be() {
        let reference = |input: &Input| {
            let mut m = serde_json::Map::new();
            m.insert("type".into(), serde_json::Value::from("input"));
            m.insert(
                "ts".into(),
                serde_json::Value::from(crate::run::record::timestamp(
                    std::time::UNIX_EPOCH + Duration::from_millis(input.at),
                )),
            );
            m.insert(
                "input".into(),
                serde_json::to_value(input).unwrap_or(serde_json::Value::Null),
            );
            serde_json::Value::Object(m).to_string()
        };
        let record = serde_json::json!({"status": "done", "output": "x\n\"y\"", "n": 1.5,
            "big": 12345678901234567u64, "neg": -3, "list": [1, {"a": null}]});
        let inputs = [
            Input {
                at: 1_800_000_000_123,
                what: Event::Start,
            },
            Input {
                at: 5,
                what: Event::CacheChecked {
                    op: 7,
                    key: "00ff".into(),
                    hit: Some(Box::new(crate::run::machine::CacheHit {
                        source: "run-only".into(),
                        record: record.into(),
                    })),
                    warning: Some("w\u{1}".into()),
                },
            },
        ];
        for i in &inputs {
            assert_eq!(input_line(i), reference(i));
        }
        // A parent's record (written by hand), in its plain and fuller forms.
        let mut r = crate::run::record::PhaseRecord::new(crate::flow::PhaseType::Agent);
        r.status = crate::run::record::PhaseStatus::Done;
        r.output = "out \"q\"\n\u{1}\u{7f}\\ é".into();
        let checked = |r: &crate::run::record::PhaseRecord, warning: Option<String>| Input {
            at: 1_800_000_000_123,
            what: Event::CacheChecked {
                op: 12,
                key: "k\"ey".into(),
                hit: Some(Box::new(crate::run::machine::CacheHit {
                    source: "run-only".into(),
                    record: crate::run::machine::HitRecord::Record(std::sync::Arc::new(r.clone())),
                })),
                warning,
            },
        };
        let line = input_line(&checked(&r, None));
        assert_eq!(line, reference(&checked(&r, None)));
        r.prompt_stats = Some((10, 3));
        let line = input_line(&checked(&r, None));
        assert!(line.contains(",\"promptStats\":{\"chars\":10,\"estTokens\":3}}"));
        assert_eq!(line, reference(&checked(&r, None)));
        let mut json = Map::default();
        json.insert("n".into(), Value::Number(2.5));
        json.insert("inf".into(), Value::Number(f64::NEG_INFINITY));
        json.insert("deep".into(), nested(60));
        r.json = Some(Value::Object(json));
        r.warnings = vec!["w1".into(), "w\t2".into()];
        r.reads = vec!["a".into()];
        r.attempts = 3;
        r.usage.input = 7;
        r.usage.output = u64::MAX;
        r.usage.cache_read = 1 << 53;
        r.usage.cost_usd = Some(0.125);
        r.usage.turns = 2;
        r.started_at = Some("2026-01-01T00:00:00.000Z".into());
        r.ended_at = Some("2026-01-01T00:00:01.000Z".into());
        r.error = Some("e".into());
        r.skip_reason = Some("s".into());
        r.agent = Some("ag".into());
        r.model = Some("m".into());
        r.input_hash = Some("00ff".into());
        r.cache_hit = Some("cross-run");
        r.timed_out = true;
        r.budget_truncated = true;
        r.side_effect = true;
        r.optional = true;
        r.def_error = Some("d".into());
        r.prompt_stats = Some((12_345, 3_086));
        for cost in [Some(0.125), Some(-3.0), Some(1e300), Some(f64::NAN), None] {
            r.usage.cost_usd = cost;
            let i = checked(&r, Some("w".into()));
            assert_eq!(input_line(&i), reference(&i));
        }
        // Rarer members go through serde, with the same text.
        r.tournament = Some((1, 3));
        let i = checked(&r, None);
        assert_eq!(input_line(&i), reference(&i));
        // No hit.
        let i = Input {
            at: 0,
            what: Event::CacheChecked {
                op: 1,
                key: String::new(),
                hit: None,
                warning: None,
            },
        };
        assert_eq!(input_line(&i), reference(&i));
    }
}
