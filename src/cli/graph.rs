//! `tfc graph FLOW [--direction td|lr] [--format mermaid|svg|dot]`: the Mermaid flowchart of a
//! checked flow (SPEC §11.3), or the same graph as an SVG drawing or Graphviz text (§11.5).
//!
//! Exit codes: 0 the chart of a flow without errors · 1 the flow has check errors (the chart is
//! still printed, the phases marked) or does not lower at all (diagnostics only, on stderr) ·
//! 2 usage or an unreadable file.

use std::io::Write;

use clap::{Args, ValueEnum};

use super::Color;
use super::{Exit, usage_error};
use tfc::check::{CheckOptions, Checked, check_source};
use tfc::diag::render::render_file;
use tfc::flow::LowerOptions;
use tfc::project::SavedFlows;
use tfc::report::dag::draw;
use tfc::report::dot::dot;
use tfc::report::layout::Orientation;
use tfc::report::svg::{check_deco, svg};
use tfc::report::{Direction, mermaid};
use tfc::source::Source;

#[derive(Args, Debug)]
pub struct GraphArgs {
    /// The flow file (or saved-flow name).
    #[arg(value_name = "FLOW")]
    flow: String,
    /// Top-down (`td`) or left-to-right (`lr`).
    #[arg(long, value_enum, default_value_t = Dir::Td)]
    direction: Dir,
    /// `mermaid` (the default), `svg` (the drawing, check problems outlined) or `dot` (Graphviz).
    #[arg(long, value_enum, default_value_t = Format::Mermaid)]
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Mermaid,
    Svg,
    Dot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Dir {
    Td,
    Lr,
}

/// `tfc graph`.
pub fn run(a: GraphArgs) -> Exit {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let saved = SavedFlows::new(&cwd);
    let Some((path, stem)) = tfc::project::locate_flow(&a.flow, &cwd) else {
        return usage_error(format!(
            "cannot read flow '{}': no such file, and no saved flow of that name",
            a.flow
        ));
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => return usage_error(format!("cannot read flow '{}': {e}", path.display())),
    };
    let source = Source::new(
        path.display().to_string(),
        String::from_utf8_lossy(&bytes).into_owned(),
    );
    let opts = CheckOptions {
        loader: Some(&saved),
        cwd: Some(cwd.clone()),
        ..CheckOptions::default()
    };
    let checked = if std::str::from_utf8(&bytes).is_ok() {
        check_source(
            &source.text,
            &LowerOptions {
                default_name: Some(stem),
            },
            &opts,
        )
    } else {
        Checked {
            flow: None,
            diagnostics: tfc::json::parse_bytes(&bytes).diagnostics,
            document: None,
        }
    };
    let color = Color::Auto.enabled();
    say!("{}", render_file(&checked.diagnostics, &source, color));
    let Some(flow) = &checked.flow else {
        return Exit::Failure;
    };
    let (direction, orientation) = match a.direction {
        Dir::Td => (Direction::TopDown, Orientation::TopDown),
        Dir::Lr => (Direction::LeftRight, Orientation::LeftRight),
    };
    let chart = match a.format {
        Format::Mermaid => mermaid(flow, &checked.diagnostics, direction),
        Format::Svg => svg(&draw(flow, &checked.diagnostics, orientation), &check_deco),
        Format::Dot => dot(flow, &checked.diagnostics, orientation),
    };
    // A closed pipe (`tfc graph f | head`) is not an error.
    let _ = std::io::stdout().lock().write_all(chart.as_bytes());
    if checked.has_errors() {
        Exit::Failure
    } else {
        Exit::Ok
    }
}
