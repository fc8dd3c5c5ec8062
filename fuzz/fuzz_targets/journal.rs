//! The journal reader and replay under arbitrary bytes: whatever a crash, a full disk or a
//! hand edit leaves in `journal.jsonl`, reading its input lines either fails with a message
//! or yields inputs, and feeding those inputs into a fresh machine (one of the machine
//! flows, picked by the first byte) never panics, whatever order, duplicates or unknown
//! operations they hold. The first byte also picks whether inputs are replayed whole or cut
//! at a random line (a torn journal).
//!
//! The lenient reader resume uses (`inputs_lenient`) is checked against the strict one: on a
//! journal the strict reader accepts it yields the same inputs (warning at most of a last
//! line without its newline), and on that journal cut at any byte (what a kill leaves) it yields a prefix of them — never an input
//! the run did not have. The other readers of a journal (`start_config`, `start_args`,
//! `item_ends`) never panic on any bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::run::journal;
use tfc::value::Map;
use tfc_fuzz::{machine_config, machine_flows};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let (lenient, warnings) = journal::inputs_lenient(&text);
    let _ = (journal::start_config(&text), journal::start_args(&text));
    let _ = journal::item_ends(&text);
    let Ok(mut inputs) = journal::inputs(&text) else {
        return;
    };
    assert_eq!(
        lenient, inputs,
        "the lenient reader differs on a whole journal"
    );
    // Only a last line without its newline (a non-input line: the strict reader skips it)
    // may be reported as torn.
    assert!(
        warnings.is_empty() || (warnings.len() == 1 && !text.ends_with('\n')),
        "warnings on a whole journal: {warnings:?}"
    );
    // A torn copy: cut at a byte picked from the data, on a char boundary.
    let mut cut = usize::from(pick).wrapping_mul(7919) % (text.len() + 1);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let (torn, _) = journal::inputs_lenient(&text[..cut]);
    assert!(
        torn.len() <= inputs.len() && torn[..] == inputs[..torn.len()],
        "a torn journal read inputs the whole one does not start with"
    );
    if pick & 0x40 != 0 && !inputs.is_empty() {
        inputs.truncate(usize::from(pick) % inputs.len());
    }
    let flows = machine_flows();
    let flow = flows[usize::from(pick) % flows.len()].clone();
    let config = machine_config(pick & 0x80 != 0, pick & 0x20 != 0);
    let first = journal::replay(flow.clone(), Map::default(), config.clone(), &inputs);
    // Replay is deterministic.
    let second = journal::replay(flow, Map::default(), config, &inputs);
    assert_eq!(first, second, "two replays of the same inputs differ");
});
