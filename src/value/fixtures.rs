//! Deep values and a small-stack runner for tests of code that walks values.

use super::types::{Map, Value};

/// `[[…[leaf]…]]`, `depth` arrays deep.
pub fn nested_arrays(depth: usize, leaf: Value) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// `{"k": {"k": … leaf}}`, `depth` objects deep.
pub fn nested_objects(depth: usize, leaf: Value) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        let mut m = Map::default();
        m.insert("k".into(), v);
        v = Value::Object(m);
    }
    v
}

/// Arrays and objects alternating, `depth` containers deep: `{"k": [i, {"k": …}]}`.
pub fn mixed(depth: usize, leaf: Value) -> Value {
    let mut v = leaf;
    for i in 0..depth {
        v = if i % 2 == 0 {
            Value::Array(vec![Value::Number(i as f64), v])
        } else {
            let mut m = Map::default();
            m.insert("k".into(), v);
            Value::Object(m)
        };
    }
    v
}

/// Runs `f` on a thread with a 256 KiB stack: anything recursing once per level of a
/// value a million deep overflows it.
pub fn small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no overflow, no panic");
}

pub const DEPTH: usize = 1_000_000;
