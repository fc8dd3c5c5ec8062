//! `tfc schema`: the JSON Schema (draft 2020-12) of flow files, generated from the same field
//! tables the reader uses (SPEC §1).

use std::io::Write;

use clap::Args;

use super::Exit;

#[derive(Args, Debug)]
pub struct SchemaArgs {}

/// `tfc schema`.
pub fn run(_: SchemaArgs) -> Exit {
    let text = tfc::flow::schema::schema().to_pretty_json();
    // A closed pipe (`tfc schema | head`) is not an error.
    let _ = writeln!(std::io::stdout().lock(), "{text}");
    Exit::Ok
}
