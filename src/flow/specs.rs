//! Lowering of the flow's and phases' nested specs: argument declarations, the budget, the
//! cache, and output contracts.

use indexmap::IndexMap;

use super::enums::{ArgType, CacheScope, ContractType};
use super::fields::ObjectKind;
use super::ir::{ArgSpec, Budget, CacheSpec, Contract, Field, Retry};
use super::kinds::table::field_name;
use super::lowerer::{Fields, Lowerer};
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::json::{Kind, Member, Node};
use crate::source::Span;
use crate::value::format_number;

impl Lowerer {
    /// `retry` (E0401 for every problem).
    pub(super) fn retry(&mut self, f: &Fields<'_>) -> Option<Field<Retry>> {
        let m = f.get("retry")?;
        let members = self.object_members(
            m,
            "an object {\"max\": n, \"backoffMs\"?: n, \"factor\"?: n}",
        )?;
        let rf = self.fields(members, ObjectKind::Retry, |_| false);
        let mut ok = true;
        let mut range = |l: &mut Lowerer, key: &str, lo: f64, hi: f64| -> Option<Field<f64>> {
            let n = l.number(&rf, key);
            if n.is_none() && rf.contains_key(key) {
                ok = false;
            }
            let n = n?;
            if n.value < lo || n.value > hi {
                ok = false;
                l.push(
                    Diagnostic::new(
                        Code::InvalidRetry,
                        format!(
                            "retry.{key} must be from {} to {}, found {}",
                            format_number(lo),
                            format_number(hi),
                            format_number(n.value)
                        ),
                    )
                    .at(n.span)
                    .with_label(format!(
                        "outside {}..{}",
                        format_number(lo),
                        format_number(hi)
                    ))
                    .help(format!(
                        "use a value from {} to {}",
                        format_number(lo),
                        format_number(hi)
                    )),
                );
                return None;
            }
            Some(n)
        };
        let max = range(self, "max", 0.0, 20.0);
        let backoff = range(self, "backoffMs", 0.0, 60000.0);
        let factor = range(self, "factor", 1.0, 10.0);
        let misspelt_max = members.iter().any(|r| {
            field_name(ObjectKind::Retry, &r.key.value).is_none()
                && did_you_mean(&r.key.value, ["max"]).is_some()
        });
        if !rf.contains_key("max") {
            if !misspelt_max {
                self.push(
                    Diagnostic::new(Code::InvalidRetry, "retry requires 'max' (0..20)")
                        .at(m.value.span)
                        .with_label("no 'max'")
                        .help("say how many extra attempts to make, e.g. \"retry\": {\"max\": 2, \"backoffMs\": 1000}"),
                );
            }
            return None;
        }
        if !ok {
            return None;
        }
        Some(Field::new(
            Retry {
                max: max.map_or(0.0, |n| n.value),
                backoff_ms: backoff.map(|n| n.value),
                factor: factor.as_ref().map(|n| n.value),
                factor_span: factor.map(|n| n.key),
            },
            m.key.span,
            m.value.span,
        ))
    }

    pub(super) fn args(&mut self, m: &Member) -> IndexMap<String, ArgSpec> {
        let mut out = IndexMap::new();
        let Some(members) = self.object_members(m, "an object of argument specs") else {
            return out;
        };
        for arg in members {
            if let Some(spec) = self.arg_spec(arg) {
                out.entry(spec.name.clone()).or_insert(spec);
            }
        }
        out
    }

    pub(super) fn arg_spec(&mut self, arg: &Member) -> Option<ArgSpec> {
        let name = arg.key.value.clone();
        let members = self.object_members(
            arg,
            "an argument spec object ({\"type\": …, \"default\": …})",
        )?;
        let f = self.fields(members, ObjectKind::ArgSpec, |_| false);
        let ty = self.word::<ArgType>(&f, "type");
        let mut spec = ArgSpec {
            name: name.clone(),
            name_span: arg.key.span,
            ty,
            default: f
                .get("default")
                .map(|m| Field::new(m.value.to_value(), m.key.span, m.value.span)),
            description: self.string(&f, "description").map(|d| d.value),
            required: self.boolean(&f, "required").unwrap_or(false),
            required_span: f.get("required").map(|m| m.key.span),
            minimum: self.number(&f, "minimum").map(|n| n.value),
            maximum: self.number(&f, "maximum").map(|n| n.value),
            values: Vec::new(),
            span: arg.value.span,
        };
        let errors_before = self.diags.len();
        let spec_error = |l: &mut Lowerer, span: Span, msg: String, label: &str, help: String| {
            l.push(
                Diagnostic::new(Code::InvalidArgSpec, format!("Argument '{name}' {msg}"))
                    .at(span)
                    .with_label(label.to_owned())
                    .help(help),
            );
        };
        for key in ["minimum", "maximum"] {
            if let Some(m) = f.get(key)
                && ty != Some(ArgType::Number)
            {
                spec_error(
                    self,
                    m.key.span,
                    format!("has '{key}', which applies only to type number"),
                    "only for numbers",
                    format!("remove '{key}', or add \"type\": \"number\""),
                );
            }
        }
        if let (Some(lo), Some(hi)) = (spec.minimum, spec.maximum)
            && lo > hi
        {
            spec_error(
                self,
                f["minimum"].value.span.to(f["maximum"].value.span),
                format!(
                    "has minimum {} > maximum {}",
                    format_number(lo),
                    format_number(hi)
                ),
                "no number fits this range",
                "swap the two bounds, or fix the one that is wrong".to_owned(),
            );
        }
        match (f.get("values"), ty) {
            (Some(m), Some(ArgType::Enum)) => match &m.value.kind {
                Kind::Array(items) if !items.is_empty() => {
                    for item in items {
                        let v = item.to_value();
                        if !matches!(
                            v,
                            crate::value::Value::String(_) | crate::value::Value::Number(_)
                        ) {
                            spec_error(
                                self,
                                item.span,
                                format!(
                                    "enum values must be strings or numbers, found {}",
                                    v.type_name()
                                ),
                                "not a string or number",
                                "list only strings and numbers in 'values'".to_owned(),
                            );
                        } else if spec.values.contains(&v) {
                            spec_error(
                                self,
                                item.span,
                                format!("lists the enum value {} twice", v.to_json()),
                                "listed before",
                                "remove the repeated value".to_owned(),
                            );
                        } else {
                            spec.values.push(v);
                        }
                    }
                }
                _ => spec_error(
                    self,
                    m.value.span,
                    "needs 'values': a non-empty array of strings or numbers".into(),
                    "expected a non-empty array",
                    "list the allowed values, e.g. \"values\": [\"low\", \"high\"]".to_owned(),
                ),
            },
            (None, Some(ArgType::Enum)) => spec_error(
                self,
                arg.value.span,
                "of type enum needs 'values': a non-empty array".into(),
                "no 'values'",
                "list the allowed values, e.g. \"values\": [\"low\", \"high\"]".to_owned(),
            ),
            (Some(m), _) => spec_error(
                self,
                m.key.span,
                "has 'values', which applies only to type enum".into(),
                "only for enums",
                "remove 'values', or add \"type\": \"enum\"".to_owned(),
            ),
            (None, _) => {}
        }
        // A default is judged only against a spec that is itself sound.
        if self.diags.len() == errors_before
            && let Some(d) = &spec.default
            && let Err(why) = super::args::check_value(&spec, &d.value)
        {
            let help = match ty {
                Some(ArgType::Enum) => "use one of the listed values as the default".to_owned(),
                _ => "change the default so it fits the declaration, or remove it".to_owned(),
            };
            spec_error(
                self,
                d.span,
                format!("default must {why}"),
                "does not fit the declaration",
                help,
            );
        }
        Some(spec)
    }

    pub(super) fn budget(&mut self, m: &Member) -> Option<Field<Budget>> {
        let members = self.object_members(
            m,
            "an object {\"maxUSD\"?: n, \"maxTokens\"?: n, \"maxCalls\"?: n}",
        )?;
        let f = self.fields(members, ObjectKind::Budget, |_| false);
        let mut b = Budget {
            empty: members.is_empty(),
            ..Budget::default()
        };
        for (key, slot) in [("maxUSD", &mut b.max_usd), ("maxTokens", &mut b.max_tokens)] {
            if let Some(n) = self.number(&f, key) {
                if n.value < 0.0 || !n.value.is_finite() {
                    self.invalid_value(f[key], "a number >= 0");
                } else {
                    *slot = Some(n.value);
                }
            }
        }
        if let Some(n) = self.number(&f, "maxCalls") {
            if n.value < 1.0 || n.value.fract() != 0.0 || n.value > 1e15 {
                self.invalid_value(f["maxCalls"], "an integer >= 1");
            } else {
                b.max_calls = Some(n.value as u64);
            }
        }
        Some(Field::new(b, m.key.span, m.value.span))
    }

    pub(super) fn cache(&mut self, m: &Member) -> Option<Field<CacheSpec>> {
        let bad = |l: &mut Lowerer, span: Span, msg: String| {
            l.push(
                Diagnostic::new(Code::InvalidCache, msg)
                    .at(span)
                    .with_label("invalid cache setting")
                    .help("e.g. \"cache\": {\"scope\": \"cross-run\", \"fingerprint\": [\"git:HEAD\", \"glob:src/**/*.rs\"], \"ttl\": \"6h\"}"),
            );
        };
        let Kind::Object(members) = &m.value.kind else {
            bad(
                self,
                m.value.span,
                format!("'cache' must be an object, found {}", m.value.type_name()),
            );
            return None;
        };
        let f = self.fields(members, ObjectKind::Cache, |_| false);
        let mut spec = CacheSpec::default();
        let mut ok = true;
        if let Some(sm) = f.get("scope") {
            let scope = match &sm.value.kind {
                Kind::String(s) => CacheScope::parse(&s.value),
                _ => None,
            };
            match scope {
                Some(s) => spec.scope = Some(Field::new(s, sm.key.span, sm.value.span)),
                None => {
                    ok = false;
                    bad(
                        self,
                        sm.value.span,
                        format!(
                            "cache.scope must be one of {}",
                            CacheScope::NAMES.join(", ")
                        ),
                    );
                }
            }
        }
        if let Some(fm) = f.get("fingerprint") {
            match &fm.value.kind {
                Kind::Array(items) => {
                    for item in items {
                        match &item.kind {
                            Kind::String(s)
                                if ["git:", "glob:", "glob!:", "file:", "env:"]
                                    .iter()
                                    .any(|p| s.value.starts_with(p)) =>
                            {
                                spec.fingerprint.push(Field::new(
                                    s.value.clone(),
                                    fm.key.span,
                                    item.span,
                                ));
                            }
                            _ => {
                                ok = false;
                                bad(self, item.span, "cache.fingerprint entries must be strings starting with git:, glob:, glob!:, file: or env:".into());
                            }
                        }
                    }
                }
                _ => {
                    ok = false;
                    bad(
                        self,
                        fm.value.span,
                        "cache.fingerprint must be an array of strings".into(),
                    );
                }
            }
        }
        if let Some(tm) = f.get("ttl") {
            match tm.value.as_str().and_then(|s| parse_ttl(&s.value)) {
                Some(ms) if ms > 0.0 => spec.ttl_ms = Some(ms),
                _ => {
                    ok = false;
                    bad(
                        self,
                        tm.value.span,
                        "cache.ttl must be a positive duration such as \"30m\", \"6h\" or \"7d\""
                            .into(),
                    );
                }
            }
        }
        ok.then(|| Field::new(spec, m.key.span, m.value.span))
    }

    /// An `expect` contract or a json-schema scorer's schema (E0407 for every problem).
    pub(crate) fn contract(&mut self, m: &Member, path: &str) -> Option<Contract> {
        let Kind::Object(members) = &m.value.kind else {
            self.push(
                Diagnostic::new(
                    Code::InvalidContract,
                    format!("{path} must be an object, found {}", m.value.type_name()),
                )
                .at(m.value.span)
                .with_label("expected a contract object")
                .help(
                    "write a contract such as {\"type\": \"object\", \"required\": [\"severity\"]}",
                ),
            );
            return None;
        };
        let f = self.fields_at(members, ObjectKind::Expect, |_| false, path);
        let mut c = Contract {
            span: m.value.span,
            ..Contract::default()
        };
        let bad = |l: &mut Lowerer, span: Span, msg: String, help: String| {
            l.push(
                Diagnostic::new(Code::InvalidContract, msg)
                    .at(span)
                    .with_label("invalid contract")
                    .help(help),
            );
        };
        if let Some(tm) = f.get("type") {
            const TYPES: &[&str] = ContractType::NAMES;
            // One type name, or a non-empty list of distinct ones.
            let names: Vec<&Node> = match &tm.value.kind {
                Kind::Array(items) => items.iter().collect(),
                _ => vec![&tm.value],
            };
            let mut types: Vec<String> = Vec::with_capacity(names.len());
            let mut ok = !names.is_empty();
            for n in &names {
                match n.as_str() {
                    Some(s) if TYPES.contains(&s.value.as_str()) && !types.contains(&s.value) => {
                        types.push(s.value.clone());
                    }
                    Some(s) if types.contains(&s.value) => {
                        ok = false;
                        bad(
                            self,
                            n.span,
                            format!("{path}.type lists '{}' twice", s.value),
                            "name each type once".to_owned(),
                        );
                    }
                    other => {
                        ok = false;
                        let near =
                            other.and_then(|s| did_you_mean(&s.value, TYPES.iter().copied()));
                        bad(
                            self,
                            n.span,
                            format!(
                                "{path}.type must be one of {} (or a list of them)",
                                TYPES.join(", ")
                            ),
                            match near {
                                Some(n) => format!("did you mean \"{n}\"?"),
                                None => "for a fixed set of values use \"enum\": [\"a\", \"b\"] instead of a type".to_owned(),
                            },
                        )
                    }
                }
            }
            if names.is_empty() {
                bad(
                    self,
                    tm.value.span,
                    format!("{path}.type is an empty list"),
                    "name at least one type, e.g. \"type\": [\"string\", \"null\"]".to_owned(),
                );
            }
            if ok {
                c.ty = Some(Field::new(types, tm.key.span, tm.value.span));
            }
        }
        if let Some(pm) = f.get("properties") {
            match &pm.value.kind {
                Kind::Object(props) => {
                    for prop in props {
                        let sub = format!("{path}.properties.{}", prop.key.value);
                        if let Some(pc) = self.contract(prop, &sub) {
                            c.properties.insert(
                                prop.key.value.clone(),
                                Field::new(pc, prop.key.span, prop.value.span),
                            );
                        }
                    }
                }
                _ => bad(
                    self,
                    pm.value.span,
                    format!("{path}.properties must be an object of contracts"),
                    "write \"properties\": {\"severity\": {\"type\": \"string\"}}".to_owned(),
                ),
            }
        }
        if let Some(rm) = f.get("required") {
            match &rm.value.kind {
                Kind::Array(items) if items.iter().all(|i| i.as_str().is_some()) => {
                    c.required = items
                        .iter()
                        .filter_map(|i| {
                            i.as_str()
                                .map(|s| Field::new(s.value.clone(), rm.key.span, i.span))
                        })
                        .collect();
                }
                _ => bad(
                    self,
                    rm.value.span,
                    format!("{path}.required must be an array of strings"),
                    "list the key names: \"required\": [\"severity\", \"reason\"]".to_owned(),
                ),
            }
        }
        if let Some(im) = f.get("items")
            && let Some(ic) = self.contract(im, &format!("{path}.items"))
        {
            c.items = Some(Box::new(Field::new(ic, im.key.span, im.value.span)));
        }
        if let Some(em) = f.get("enum") {
            match &em.value.kind {
                Kind::Array(items) if !items.is_empty() => {
                    c.enum_values = Some(items.iter().map(Node::to_value).collect())
                }
                _ => bad(
                    self,
                    em.value.span,
                    format!("{path}.enum must be a non-empty array of literals"),
                    "list the allowed values: \"enum\": [\"low\", \"high\"]".to_owned(),
                ),
            }
        }
        if let Some(am) = f.get("additionalProperties") {
            match am.value.kind {
                Kind::Bool(b) => {
                    c.additional_properties = Some(Field::new(b, am.key.span, am.value.span))
                }
                _ => bad(
                    self,
                    am.value.span,
                    format!(
                        "{path}.additionalProperties must be true or false, found {}",
                        am.value.type_name()
                    ),
                    "write \"additionalProperties\": false to allow no key besides \"properties\" (schemas for extra keys are not supported: declare them under \"properties\")".to_owned(),
                ),
            }
        }
        for (name, slot) in [
            ("minItems", &mut c.min_items),
            ("maxItems", &mut c.max_items),
        ] {
            let Some(nm) = f.get(name) else { continue };
            match nm.value.kind {
                Kind::Number(n) if n >= 0.0 && n.fract() == 0.0 && n <= MAX_SAFE_COUNT => {
                    *slot = Some(Field::new(n as u64, nm.key.span, nm.value.span));
                }
                _ => {
                    let shown = match &nm.value.kind {
                        Kind::Number(n) => format_number(*n),
                        _ => nm.value.type_name().to_owned(),
                    };
                    bad(
                        self,
                        nm.value.span,
                        format!("{path}.{name} must be an integer >= 0, found {shown}"),
                        format!("write a count of elements, e.g. \"{name}\": 1"),
                    )
                }
            }
        }
        if let (Some(min), Some(max)) = (&c.min_items, &c.max_items)
            && min.value > max.value
        {
            self.push(
                Diagnostic::new(
                    Code::InvalidContract,
                    format!(
                        "{path}.minItems ({}) is above maxItems ({}): no array satisfies the contract",
                        min.value, max.value
                    ),
                )
                .at(min.span)
                .with_label("the lower bound")
                .label(max.span, "the upper bound")
                .help("lower minItems or raise maxItems"),
            );
            c.min_items = None;
            c.max_items = None;
        }
        // Annotations: accepted and ignored at run time; `description` is shown on hover.
        for name in ["description", "title", "$comment"] {
            let Some(dm) = f.get(name) else { continue };
            match dm.value.as_str() {
                Some(text) if name == "description" => {
                    c.description = Some(Field::new(text.value.clone(), dm.key.span, dm.value.span))
                }
                Some(_) => {}
                None => bad(
                    self,
                    dm.value.span,
                    format!(
                        "{path}.{name} must be a string, found {}",
                        dm.value.type_name()
                    ),
                    format!("write the annotation as text: \"{name}\": \"…\""),
                ),
            }
        }
        Some(c)
    }
}

/// The largest `minItems`/`maxItems` taken as written (2^53 - 1, the largest integer a JSON
/// number holds exactly).
const MAX_SAFE_COUNT: f64 = 9_007_199_254_740_991.0;

/// `^\d+(\.\d+)?\s*(ms|s|m|h|d)?$`i → milliseconds (no unit: ms).
pub fn parse_ttl(text: &str) -> Option<f64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let valid_num = !num.is_empty()
        && !num.starts_with('.')
        && !num.ends_with('.')
        && num.matches('.').count() <= 1;
    if !valid_num {
        return None;
    }
    let n: f64 = num.parse().ok()?;
    let factor = match unit.trim_start().to_ascii_lowercase().as_str() {
        "" | "ms" => 1.0,
        "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return None,
    };
    Some(n * factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::testing::{check, codes, find};

    #[test]
    fn ttl_forms() {
        assert_eq!(parse_ttl("30m"), Some(1_800_000.0));
        assert_eq!(parse_ttl("6 h"), Some(21_600_000.0));
        assert_eq!(parse_ttl("7D"), Some(604_800_000.0));
        assert_eq!(parse_ttl("1500"), Some(1500.0));
        assert_eq!(parse_ttl("1.5s"), Some(1500.0));
        for bad in ["", "m", "1.s", ".5s", "1y", "-1s", "1..2s"] {
            assert_eq!(parse_ttl(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_a_literal_empty_budget_is_w0309() {
        assert_eq!(
            codes(r#"{"budget": {}, "phases": [{"id": "a", "task": "x"}]}"#),
            ["W0309"]
        );
        for budget in [r#"{"maxUsd": 1}"#, r#"{"maxUSD": -1}"#] {
            let text = format!(r#"{{"budget": {budget}, "phases": [{{"id": "a", "task": "x"}}]}}"#);
            let got = codes(&text);
            assert!(!got.contains(&"W0309"), "{budget}: {got:?}");
        }
    }

    #[test]
    fn max_calls_is_an_integer_of_at_least_one() {
        let flow = |calls: &str| {
            format!(
                r#"{{"budget": {{"maxCalls": {calls}}}, "phases": [{{"id": "a", "task": "x"}}]}}"#
            )
        };
        assert_eq!(codes(&flow("5")), Vec::<&str>::new());
        for bad in ["0", "-1", "2.5"] {
            let text = flow(bad);
            let d = find(&check(&text), "E0005");
            assert!(d.message.contains("'maxCalls'"), "{bad}: {}", d.message);
            assert!(
                d.message.contains("an integer >= 1"),
                "{bad}: {}",
                d.message
            );
            assert!(d.help.is_some(), "{bad}: a help line");
            let span = d.span;
            assert_eq!(
                span.map(|s| &text[s.start as usize..s.end as usize]),
                Some(bad),
                "{bad}: the span is the value"
            );
        }
    }

    #[test]
    fn max_calls_alone_does_not_serialise_the_run() {
        let lowered = |budget: &str| {
            let text = format!(
                r#"{{"concurrency": 4, "budget": {budget}, "phases": [{{"id": "a", "task": "x"}}]}}"#
            );
            crate::check::check_source(
                &text,
                &Default::default(),
                &crate::check::CheckOptions::default(),
            )
            .flow
            .expect("flow")
            .effective_concurrency()
        };
        assert_eq!(lowered(r#"{"maxCalls": 3}"#), 4);
        assert_eq!(lowered(r#"{"maxCalls": 3, "maxTokens": 100}"#), 1);
        assert_eq!(lowered(r#"{"maxUSD": 1}"#), 1);
    }

    #[test]
    fn contract_keywords_are_named_by_their_path() {
        let text = r#"[{"id": "a", "task": "x", "output": "json",
            "expect": {"properties": {"a": {"items": {"minimum": 1}}}}}]"#;
        let d = find(&check(text), "E0407");
        assert!(
            d.message
                .starts_with("expect.properties.a.items.minimum: unknown contract keyword"),
            "{}",
            d.message
        );
    }

    /// The JSON Schema keywords tfc accepts besides its own: `additionalProperties` (a
    /// boolean), item counts (integers >= 0) and annotations; bad values are E0407.
    #[test]
    fn pasted_schema_keywords_are_accepted_and_judged() {
        let flow = |expect: &str| {
            format!(r#"[{{"id": "a", "task": "x", "output": "json", "expect": {expect}}}]"#)
        };
        let good = flow(
            r#"{"type": "object", "title": "T", "description": "D", "$comment": "C", "examples": [{}],
                "additionalProperties": false,
                "properties": {"f": {"type": "array", "minItems": 0, "maxItems": 3, "description": "files"}}}"#,
        );
        assert_eq!(codes(&good), Vec::<&str>::new());
        let messages = |expect: &str| -> Vec<String> {
            check(&flow(expect))
                .into_iter()
                .filter(|d| d.code.as_str() == "E0407")
                .map(|d| d.message)
                .collect()
        };
        assert_eq!(
            messages(r#"{"additionalProperties": {}, "minItems": -1, "maxItems": 1.5}"#),
            [
                "expect.additionalProperties must be true or false, found object",
                "expect.minItems must be an integer >= 0, found -1",
                "expect.maxItems must be an integer >= 0, found 1.5",
            ]
        );
        assert_eq!(
            messages(r#"{"items": {"minItems": 3, "maxItems": 1}}"#),
            ["expect.items.minItems (3) is above maxItems (1): no array satisfies the contract"]
        );
        assert_eq!(
            messages(r#"{"description": 5, "title": ["t"], "$comment": null}"#),
            [
                "expect.description must be a string, found number",
                "expect.title must be a string, found array",
                "expect.$comment must be a string, found null",
            ]
        );
        let c = crate::check::testing::contract(r#"{"description": "the verdict"}"#);
        assert_eq!(
            c.description.map(|d| d.value).as_deref(),
            Some("the verdict")
        );
    }

    #[test]
    fn defaults_are_judged_only_against_sound_specs() {
        let text = r#"{"args": {"n": {"type": "number", "minimum": 5, "maximum": 1, "default": 3}},
            "phases": [{"id": "a", "task": "{args.n}"}]}"#;
        let d = find(&check(text), "E0501");
        assert_eq!(d.message, "Argument 'n' has minimum 5 > maximum 1");
        assert_eq!(codes(text), ["E0501"]);
    }
}
