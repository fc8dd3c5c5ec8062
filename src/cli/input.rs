//! Reading command inputs: files or `-` for stdin, always as UTF-8 text.

use std::io::Read;

/// Read `path` (or stdin for `-`) as UTF-8, with an error message fit for the user.
pub fn read_text(path: &str, what: &str) -> Result<String, String> {
    let bytes = if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| format!("cannot read {what} from stdin: {e}"))?;
        buf
    } else {
        std::fs::read(path).map_err(|e| format!("cannot read {what} '{path}': {e}"))?
    };
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let source = if path == "-" { "stdin" } else { path };
        format!("{what} '{source}' is not valid UTF-8 (invalid byte at offset {at})")
    })
}

/// The value of `--args JSON`: a JSON object.
pub fn args_object(text: &str) -> Result<tfc::value::Map, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("--args is not valid JSON: {e}"))?;
    let value = tfc::value::Value::from(&v);
    let kind = value.type_name();
    value
        .into_object()
        .ok_or_else(|| format!("--args must be a JSON object, found {kind}"))
}

/// The invocation of `K=V` pairs (one bare VALUE binds to the first declared arg) and
/// `--args JSON` (the pairs override it), as `tfc run` and `tfc plan` take them.
pub fn invocation(
    pairs: &[String],
    args_json: Option<&str>,
) -> Result<tfc::flow::Invocation, String> {
    let mut inv = tfc::flow::Invocation::default();
    if let Some(text) = args_json {
        inv.json = args_object(text)?;
    }
    for p in pairs {
        match tfc::flow::split_pair(p) {
            Some(pair) => inv.pairs.push(pair),
            None if inv.positional.is_none() => inv.positional = Some(p.clone()),
            None => {
                return Err(format!(
                    "more than one bare argument ('{p}'): pass NAME=VALUE"
                ));
            }
        }
    }
    Ok(inv)
}

/// Load an eval context file (`-` for stdin) into bindings. It is read by the same strict
/// parser as model output, so values nested to any depth load.
pub fn load_context(path: &str) -> Result<tfc::eval::Bindings, String> {
    let text = read_text(path, "context file")?;
    let json = tfc::value::parse_json(&text).map_err(|e| {
        let (line, column) = line_column(&text, e.offset);
        format!(
            "context file '{path}' is not valid JSON: {} at line {line} column {column}",
            e.message
        )
    })?;
    tfc::eval::context::bindings_from_context(&json)
        .map_err(|e| format!("context file '{path}': {e}"))
}

/// The 1-based line and column (in chars) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}
