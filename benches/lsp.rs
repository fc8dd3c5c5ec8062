//! `tfc lsp`: how long a change to a large flow takes to be re-diagnosed. Run with
//! `cargo bench --bench lsp`.
//!
//! - `rediagnose`: the server's work after a change, without the debounce — check the whole
//!   text as `tfc check` does and convert every diagnostic (byte spans to UTF-16 positions);
//! - `change_to_publish`: the whole round trip through the protocol, in process
//!   (`Connection::memory()`): a `didChange` replacing the text, until its
//!   `publishDiagnostics` arrives — this includes the 25 ms debounce.
//!
//! The flow is a chain of N phases (`p<i>` depends on `p<i-1>` and reads
//! `{steps.p<i-1>.output}`); the change makes one phase read a phase it does not depend on, so
//! one E0201 is reported. Targets (SPEC §15): 1 000 phases within 100 ms, 10 000 within 1 s.
//!
//! Measured on the 2-core development machine (medians): `rediagnose` 0.63 ms (1 000) and
//! 6.6 ms (10 000); `change_to_publish` 25.8 ms and 33.1 ms (25 ms of each is the debounce).
//! Memory (`/usr/bin/time -v`, peak RSS, the 10 000-phase file of 0.8 MB): `tfc lsp` holding it
//! open through one change 27.0 MB, `tfc check` of the same file 18.1 MB (1.5×).

use divan::Bencher;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::json;
use tfc::lsp::{Settings, diagnose, serve};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

const SIZES: &[usize] = &[1_000, 10_000];

/// `n` phases in a line; with `broken`, the middle one reads the last one.
fn chain(n: usize, broken: bool) -> String {
    let mut t = String::from("{\"phases\": [\n  {\"id\": \"p0\", \"task\": \"Survey naïve 😀.\"}");
    for i in 1..n {
        let read = if broken && i == n / 2 { n - 1 } else { i - 1 };
        t.push_str(&format!(
            ",\n  {{\"id\": \"p{i}\", \"dependsOn\": [\"p{}\"], \"task\": \"Refine {{steps.p{read}.output}}.\"}}",
            i - 1
        ));
    }
    t.push_str("\n]}\n");
    t
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn rediagnose(bencher: Bencher, n: usize) {
    let text = chain(n, true);
    bencher.bench(|| {
        let d = diagnose(&text, None, &Settings::default());
        assert_eq!(d.len(), 1);
        d
    });
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn change_to_publish(bencher: Bencher, n: usize) {
    let (server, client) = Connection::memory();
    let handle = std::thread::spawn(move || serve(&server, Settings::default()));
    let send = |m: Message| client.sender.send(m).unwrap();
    send(
        Request::new(
            RequestId::from(1),
            "initialize".into(),
            json!({"capabilities": {}}),
        )
        .into(),
    );
    let _ = client.receiver.recv().unwrap();
    send(Notification::new("initialized".into(), json!({})).into());
    let uri = "untitled:bench.flow.json";
    let texts = [chain(n, false), chain(n, true)];
    send(
        Notification::new(
            "textDocument/didOpen".into(),
            json!({"textDocument": {"uri": uri, "languageId": "json", "version": 0, "text": texts[0]}}),
        )
        .into(),
    );
    let wait = |version: i64| loop {
        if let Message::Notification(n) = client.receiver.recv().unwrap()
            && n.params["version"] == version
        {
            return n.params["diagnostics"].as_array().map_or(0, Vec::len);
        }
    };
    wait(0);
    let mut version = 0i64;
    bencher.bench_local(|| {
        version += 1;
        let text = &texts[(version % 2) as usize];
        send(
            Notification::new(
                "textDocument/didChange".into(),
                json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
            )
            .into(),
        );
        let found = wait(version);
        assert_eq!(found, (version % 2) as usize);
    });
    send(Request::new(RequestId::from(2), "shutdown".into(), json!(null)).into());
    send(Notification::new("exit".into(), json!(null)).into());
    drop(client);
    let _ = handle.join();
}
