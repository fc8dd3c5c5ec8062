//! The report's timeline: one bar per phase and, under it, one per agent call (items, attempts,
//! rounds), all on one time axis from the run's start to its end. Plain HTML: each bar is a
//! `<span>` positioned in percent, so the page needs no script and stays small.

use std::fmt::Write;

use super::events::Events;
use super::svg::esc;

/// Calls shown under one phase; the rest are counted.
pub const CALLS_SHOWN: usize = 200;

/// One phase row of the timeline.
pub struct Row<'a> {
    /// Phase key.
    pub key: &'a str,
    /// Its element id suffix (the DAG node id), for links.
    pub dom: &'a str,
    /// `done`, `failed`, …
    pub status: &'a str,
    /// Start and end (epoch ms); `None` if it never started.
    pub start: Option<u64>,
    /// End; the run's end when missing.
    pub end: Option<u64>,
}

/// The timeline section's body. `t0`/`t1` bound the axis.
pub fn timeline(out: &mut String, rows: &[Row], events: &Events, t0: u64, t1: u64) {
    let span = t1.saturating_sub(t0).max(1) as f64;
    let pct = |t: u64| (t.saturating_sub(t0) as f64 / span * 100.0).clamp(0.0, 100.0);
    out.push_str(
        "<div class=\"tl\">\n<div class=\"tlr ax\"><span class=\"lb\"></span><span class=\"tr\">",
    );
    for k in 0..=4 {
        let t = span * k as f64 / 4.0;
        // The last label ends at the axis's end instead of starting there.
        let at = if k == 4 {
            "right:0".to_owned()
        } else {
            format!("left:{}%", k * 25)
        };
        let _ = write!(
            out,
            "<span class=\"tick\" style=\"{at}\">{}</span>",
            duration(t)
        );
    }
    out.push_str("</span></div>\n");
    let mut drawn = 0;
    for r in rows {
        let Some(start) = r.start else {
            continue;
        };
        drawn += 1;
        let end = r.end.unwrap_or(t1).max(start);
        let (l, w) = (pct(start), (pct(end) - pct(start)).max(0.0));
        let _ = writeln!(
            out,
            "<div class=\"tlr\" data-row=\"{k}\" data-status=\"{st}\"><span class=\"lb\"><a href=\"#ph-{dom}\">{k}</a></span>\
             <span class=\"tr\"><span class=\"bar st-{st}\" style=\"left:{l:.2}%;width:{w:.2}%\" \
             title=\"{k}: {st}, {d}\"></span></span></div>",
            k = esc(r.key),
            dom = esc(r.dom),
            st = esc(r.status),
            d = duration(end.saturating_sub(start) as f64),
        );
        let Some(calls) = events.calls.get(r.key) else {
            continue;
        };
        for c in calls.iter().take(CALLS_SHOWN) {
            let Some((s, e)) = c.span() else {
                continue;
            };
            let (l, w) = (pct(s), (pct(e) - pct(s)).max(0.0));
            let st = if c.ok { "done" } else { "failed" };
            let _ = writeln!(
                out,
                "<div class=\"tlr sub\" data-row=\"{k}\" data-status=\"{ps}\"><span class=\"lb\">{n} · attempt {a}</span>\
                 <span class=\"tr\"><span class=\"bar call st-{st}\" style=\"left:{l:.2}%;width:{w:.2}%\" \
                 title=\"{n} attempt {a}: {st}, {d}\"></span></span></div>",
                k = esc(r.key),
                ps = esc(r.status),
                n = esc(&c.node),
                a = c.attempt,
                d = duration(e.saturating_sub(s) as f64),
            );
        }
        if calls.len() > CALLS_SHOWN {
            let _ = writeln!(
                out,
                "<div class=\"tlr sub\" data-row=\"{}\" data-status=\"{}\"><span class=\"lb\">… {} more calls</span></div>",
                esc(r.key),
                esc(r.status),
                calls.len() - CALLS_SHOWN
            );
        }
    }
    if drawn == 0 {
        out.push_str("<p class=\"none\">No phase has started.</p>\n");
    }
    out.push_str("</div>\n");
}

/// `850 ms`, `12.3 s`, `3 min 05 s`, `2 h 04 min`.
pub fn duration(ms: f64) -> String {
    let ms = ms.max(0.0);
    if ms < 1000.0 {
        return format!("{} ms", ms.round() as u64);
    }
    let s = ms / 1000.0;
    if s < 60.0 {
        return format!("{s:.1} s");
    }
    let total = s.round() as u64;
    if total < 3600 {
        return format!("{} min {:02} s", total / 60, total % 60);
    }
    format!("{} h {:02} min", total / 3600, (total % 3600) / 60)
}
