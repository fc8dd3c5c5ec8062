//! The journal reader and replay under arbitrary bytes: whatever a crash, a full disk or a
//! hand edit leaves in `journal.jsonl`, reading its input lines either fails with a message
//! or yields inputs, and feeding those inputs into a fresh machine (one of the machine
//! flows, picked by the first byte) never panics, whatever order, duplicates or unknown
//! operations they hold. The first byte also picks whether inputs are replayed whole or cut
//! at a random line (a torn journal).

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
    let Ok(mut inputs) = journal::inputs(&text) else {
        return;
    };
    if pick & 0x40 != 0 && !inputs.is_empty() {
        inputs.truncate(usize::from(pick) % inputs.len());
    }
    let flows = machine_flows();
    let flow = flows[usize::from(pick) % flows.len()].clone();
    let config = machine_config(pick & 0x80 != 0);
    let first = journal::replay(flow.clone(), Map::default(), config.clone(), &inputs);
    // Replay is deterministic.
    let second = journal::replay(flow, Map::default(), config, &inputs);
    assert_eq!(first, second, "two replays of the same inputs differ");
});
