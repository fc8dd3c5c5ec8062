//! `tfc mcp`: a Model Context Protocol server on stdio for coding-agent hosts (SPEC §13).
//!
//! The tools are thin layers over the library — [`check`](crate::check) for `tfc_check` and
//! `tfc_save`, [`plan`](crate::plan) for `tfc_plan`, [`report`](crate::report) for
//! `tfc_graph`, [`eval`](crate::eval) for `tfc_eval`, [`test`](crate::test) for `tfc_test` —
//! and over the run store for the run tools: a run is a detached `tfc run`
//! process, and its status is read from its files, never kept in the server.
//!
//! # Why a JSON-RPC layer of our own, not the `rmcp` SDK
//!
//! The stdio transport is one JSON-RPC 2.0 message per line, and this server needs a dozen
//! methods and two notifications. `rmcp` is built on tokio (its stdio transport and
//! service loop are tokio tasks), while tfc's engine runs on smol: using it would mean a
//! second async runtime in the binary, tokio's dependency tree in every build on a small
//! machine, and a thread to keep the two apart — for less control over what matters here
//! (answering every malformed line and carrying on, cancelling a blocked wait, never writing
//! a non-protocol byte to stdout). The server below is plain threads: the reading loop
//! answers quick methods itself and gives each `tools/call` a thread, so long waits run
//! concurrently with everything else; the framing in `rpc` and the argument checks in
//! `call` are unit-tested, and `tests/mcp_*.rs` drive the real binary, including with the
//! official Python SDK as the client.

mod call;
mod eval;
mod flows;
mod fork;
pub mod hosts;
mod plan;
mod rpc;
mod runs;
mod schema;
mod server;
mod store;
mod testing;
mod tools;

pub use server::{Config, PROTOCOL_VERSIONS, serve};
