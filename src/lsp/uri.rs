//! `file://` URIs and paths, both ways (percent-encoding per RFC 3986; other schemes, such as
//! an editor's `untitled:` buffers, have no path).

use std::path::{Path, PathBuf};

use lsp_types::Uri;

/// The path of a `file:` URI.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file:///p` (empty authority) or `file://localhost/p`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let b = rest.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8(out).ok()?))
}

/// The `file:` URI of an absolute path.
pub fn from_path(path: &Path) -> Option<Uri> {
    let s = path.to_str()?;
    let mut out = String::from("file://");
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let p = Path::new("/tmp/a b/é#1.flow.json");
        let uri = from_path(p).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/%C3%A9%231.flow.json");
        assert_eq!(to_path(&uri).unwrap(), p);
        let u: Uri = "untitled:Untitled-1".parse().unwrap();
        assert_eq!(to_path(&u), None);
        let u: Uri = "file://localhost/x/y.json".parse().unwrap();
        assert_eq!(to_path(&u).unwrap(), Path::new("/x/y.json"));
    }
}
