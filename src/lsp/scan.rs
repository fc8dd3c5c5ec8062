//! Where in the JSON document the cursor is, read from the text alone: the path of keys and
//! indices to the innermost container, and whether the cursor is in a key, in a string value
//! or between tokens. Documents being typed are rarely valid, so this never fails: it reads
//! strings, brackets, `:` and `,` (skipping comments) and ignores everything else, without
//! recursion (a 200,000-deep document is a long vector, not a deep stack).

use std::ops::Range;

/// One step from a container to a child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// What the cursor is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum At {
    /// A key of the innermost object: inside its quotes (`content` = between the quotes),
    /// or where a key may start (`content` = empty at the cursor, `quoted: false`).
    Key {
        /// The text between the quotes (or the empty range at the cursor).
        content: Range<usize>,
        /// Inside quotes.
        quoted: bool,
    },
    /// A value: of member `key` in an object, or an element of an array (`key: None`);
    /// `content` is the string's inside when the cursor is in a string.
    Value {
        /// The member's key, in an object.
        key: Option<String>,
        /// Between the string's quotes, when the cursor is inside one.
        content: Option<Range<usize>>,
    },
}

/// The cursor's place in the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// From the root to the innermost container holding the cursor (empty at the top level).
    pub path: Vec<Seg>,
    /// Is the innermost container an object (else an array, or nothing at the top level)?
    pub in_object: bool,
    /// The root is an object (else an array or nothing).
    pub root_object: bool,
    /// What the cursor is on.
    pub at: At,
    /// The keys of the innermost object (before and after the cursor, the one under it
    /// left out).
    pub keys: Vec<String>,
    /// The innermost object's `type` member, when it is a string.
    pub type_value: Option<String>,
    /// The string elements of the innermost array (before and after the cursor, the one under
    /// it left out): the ids a `dependsOn` already lists.
    pub items: Vec<String>,
}

struct Frame {
    object: bool,
    /// The step that led here.
    seg: Option<Seg>,
    /// Object: the current member's key once read; `None` while a key is expected.
    key: Option<String>,
    /// Object: a key is expected (after `{` or `,`).
    want_key: bool,
    /// Array: the current element's index.
    index: usize,
    /// Object: the keys read so far.
    keys: Vec<String>,
    /// Object: the `type` member's string value.
    type_value: Option<String>,
    /// Array: the string elements read so far.
    items: Vec<String>,
}

impl Frame {
    fn child_seg(&self) -> Seg {
        if self.object {
            Seg::Key(self.key.clone().unwrap_or_default())
        } else {
            Seg::Index(self.index)
        }
    }
}

/// The end of the string whose opening quote is at `open` (the closing quote's offset, or
/// the end of the line or text for an unterminated one) and its decoded-enough text (escapes
/// are kept as written, which is exact for the keys and ids a cursor context needs).
fn string_end(b: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' | b'\n' | b'\r' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

/// The offset after the `//` (to the line's end) or `/* */` comment that starts at `i`.
fn comment_end(b: &[u8], i: usize) -> usize {
    if b.get(i + 1) == Some(&b'/') {
        memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n)
    } else {
        memchr::memmem::find(&b[i + 2..], b"*/").map_or(b.len(), |n| i + 2 + n + 2)
    }
}

/// Where `offset` is in `text`.
pub fn context(text: &str, offset: usize) -> Context {
    let b = text.as_bytes();
    let offset = offset.min(b.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut root_object = None;
    let mut i = 0;
    while i < offset {
        match b[i] {
            b'"' => {
                let end = string_end(b, i);
                if offset <= end {
                    return finish(text, stack, root_object, Some(i + 1..end), offset);
                }
                let s = &text[i + 1..end];
                if let Some(top) = stack.last_mut() {
                    if !top.object {
                        top.items.push(s.to_owned());
                    } else if top.want_key {
                        top.key = Some(s.to_owned());
                        top.keys.push(s.to_owned());
                        top.want_key = false;
                    } else if top.key.as_deref() == Some("type") {
                        top.type_value = Some(s.to_owned());
                    }
                }
                i = end + 1;
                continue;
            }
            b'/' if matches!(b.get(i + 1), Some(b'/' | b'*')) => {
                i = comment_end(b, i);
                continue;
            }
            c @ (b'{' | b'[') => {
                root_object.get_or_insert(c == b'{');
                let seg = stack.last().map(Frame::child_seg);
                stack.push(Frame {
                    object: c == b'{',
                    seg,
                    key: None,
                    want_key: c == b'{',
                    index: 0,
                    keys: Vec::new(),
                    type_value: None,
                    items: Vec::new(),
                });
            }
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    if top.object {
                        top.want_key = true;
                        top.key = None;
                    } else {
                        top.index += 1;
                    }
                }
            }
            b':' => {
                if let Some(top) = stack.last_mut() {
                    top.want_key = false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    finish(text, stack, root_object, None, offset)
}

/// The string elements of the array that is open at `from`, read to its end.
fn rest_of_array(b: &[u8], text: &str, from: usize, items: &mut Vec<String>) {
    let mut depth = 0usize;
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let end = string_end(b, i);
                if depth == 0 {
                    items.push(text[i + 1..end].to_owned());
                }
                i = end + 1;
                continue;
            }
            b'/' if matches!(b.get(i + 1), Some(b'/' | b'*')) => {
                i = comment_end(b, i);
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return;
                }
                depth -= 1;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The keys (and `type` value) of the object that is open at `from`, read to its end.
fn rest_of_object(
    b: &[u8],
    text: &str,
    from: usize,
    keys: &mut Vec<String>,
    ty: &mut Option<String>,
) {
    let (mut depth, mut want_key, mut key_is_type) = (0usize, false, false);
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let end = string_end(b, i);
                if depth == 0 {
                    let s = &text[i + 1..end];
                    if want_key {
                        keys.push(s.to_owned());
                        key_is_type = s == "type";
                        want_key = false;
                    } else if key_is_type && ty.is_none() {
                        *ty = Some(s.to_owned());
                    }
                }
                i = end + 1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return;
                }
                depth -= 1;
            }
            b',' if depth == 0 => want_key = true,
            _ => {}
        }
        i += 1;
    }
}

fn finish(
    text: &str,
    stack: Vec<Frame>,
    root_object: Option<bool>,
    string: Option<Range<usize>>,
    offset: usize,
) -> Context {
    let after_string = string.as_ref().map(|r| (r.end + 1).min(text.len()));
    let top = stack.last();
    let in_object = top.is_some_and(|f| f.object);
    let at = match top {
        Some(f) if f.object && f.want_key => At::Key {
            quoted: string.is_some(),
            content: string.unwrap_or(offset..offset),
        },
        Some(f) if f.object => At::Value {
            key: f.key.clone(),
            content: string,
        },
        _ => At::Value {
            key: None,
            content: string,
        },
    };
    let (mut keys, mut type_value) = match stack.last() {
        Some(f) if f.object => (f.keys.clone(), f.type_value.clone()),
        _ => (Vec::new(), None),
    };
    let mut items = match stack.last() {
        Some(f) if !f.object => f.items.clone(),
        _ => Vec::new(),
    };
    let from = after_string.unwrap_or(offset);
    if in_object {
        rest_of_object(text.as_bytes(), text, from, &mut keys, &mut type_value);
    } else if !stack.is_empty() {
        rest_of_array(text.as_bytes(), text, from, &mut items);
    }
    if let At::Key { content, .. } = &at {
        // The key being typed is not "already written".
        let current = &text[content.clone()];
        if let Some(k) = keys.iter().position(|k| k == current) {
            keys.remove(k);
        }
    }
    let path = stack.into_iter().filter_map(|f| f.seg).collect();
    Context {
        path,
        in_object,
        root_object: root_object.unwrap_or(false),
        at,
        keys,
        type_value,
        items,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The context at the `|` of `marked` (the bar removed).
    fn at(marked: &str) -> (Context, String) {
        let offset = marked.find('|').unwrap();
        let text = marked.replacen('|', "", 1);
        (context(&text, offset), text)
    }

    fn key(s: &str) -> Seg {
        Seg::Key(s.into())
    }

    #[test]
    fn keys_values_and_paths() {
        let (c, t) = at(r#"{"phases": [{"id": "a"}, {"id": "b", "ta|"}]}"#);
        assert_eq!(c.path, [key("phases"), Seg::Index(1)]);
        let At::Key { content, quoted } = c.at else {
            panic!("{c:?}")
        };
        assert!(quoted);
        assert_eq!(&t[content], "ta");
        let (c, _) = at(r#"{"phases": [{"id": "a", | }]}"#);
        assert!(matches!(c.at, At::Key { quoted: false, .. }));
        let (c, t) = at(r#"{"phases": [{"id": "b", "dependsOn": ["a", "x|y"]}]}"#);
        assert_eq!(c.path, [key("phases"), Seg::Index(0), key("dependsOn")]);
        let At::Value {
            key: None,
            content: Some(r),
        } = c.at
        else {
            panic!()
        };
        assert_eq!(&t[r], "xy");
        let (c, _) = at(r#"{"phases": [{"type": |"#);
        assert_eq!(
            c.at,
            At::Value {
                key: Some("type".into()),
                content: None
            }
        );
        assert!(c.in_object && c.root_object);
    }

    #[test]
    fn escapes_comments_and_broken_text() {
        let (c, t) = at("// {\n[{\"task\": \"a \\\"{st|\" /* } */");
        assert_eq!(c.path, [Seg::Index(0)]);
        let At::Value {
            key: Some(k),
            content: Some(r),
        } = c.at
        else {
            panic!()
        };
        assert_eq!((k.as_str(), &t[r]), ("task", "a \\\"{st"));
        // An unterminated string ends at the line's end.
        let (c, _) = at("{\"a\": \"x\n, |");
        assert!(matches!(c.at, At::Key { .. }));
    }

    #[test]
    fn array_items_around_the_cursor() {
        let (c, _) =
            at(r#"{"dependsOn": ["a", /* "z" */ "b|x", "c", {"d": "e"}, ["f"]], "g": "h"}"#);
        assert_eq!(c.items, ["a", "c"]);
        let (c, _) = at(r#"["a", |"#);
        assert_eq!(c.items, ["a"]);
        // An object's strings are keys, not items.
        let (c, _) = at(r#"{"a": "b", |}"#);
        assert!(c.items.is_empty());
    }

    #[test]
    fn deep_nesting_is_a_loop() {
        let text = "[".repeat(200_000);
        let c = context(&text, text.len());
        assert_eq!(c.path.len(), 199_999);
    }
}
