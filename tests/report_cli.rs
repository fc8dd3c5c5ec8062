//! `tfc report` and `tfc run --report` end to end (SPEC §11.5): one self-contained file with
//! every section, everything from the flow and the model escaped, long texts cut, and the run
//! found by id, prefix or `last`.

mod common;
mod report_fixture;

use common::tfc_in;
use report_fixture::{run, run_dir};

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[test]
fn run_report_writes_a_self_contained_escaped_page() {
    let (out, project) = run("report-e2e-page", &["--report"]);
    assert_eq!(out.code, 0, "{out:?}");
    let dir = run_dir(&project);
    let page = read(&dir.join("report.html"));
    assert!(out.stderr.contains("report: .tfc/runs/"), "{}", out.stderr);

    // Self-contained: one inline script, no external reference of any kind.
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the report's own script"
    );
    for external in [
        "src=\"", "src='", "@import", "<link", "<iframe", "<img", "<object",
    ] {
        assert!(!page.contains(external), "found {external}");
    }
    for url in page.match_indices("url(").map(|(i, _)| &page[i + 4..]) {
        assert!(
            url.starts_with('#'),
            "external url: {}",
            &url[..url.len().min(60)]
        );
    }
    for href in page.match_indices("href=\"").map(|(i, _)| &page[i + 6..]) {
        assert!(
            href.starts_with('#'),
            "external link: {}",
            &href[..href.len().min(60)]
        );
    }
    assert!(page.contains("Content-Security-Policy\" content=\"default-src 'none'"));

    // Sections of §11.5, in order.
    let at = |needle: &str| {
        page.find(needle)
            .unwrap_or_else(|| panic!("missing {needle}"))
    };
    let order = [
        "<header>",
        "<section id=\"dag\">",
        "<section id=\"timeline\">",
        "<section id=\"phases\">",
        "<section id=\"details\">",
        "<section id=\"warnings\">",
    ];
    for w in order.windows(2) {
        assert!(at(w[0]) < at(w[1]), "{} before {}", w[0], w[1]);
    }

    // Escaped: the flow's name and ids, the prompt, the model's markup.
    assert!(page.contains(
        "<h1>report&lt;demo&gt; <span class=\"pill st-completed\">completed</span></h1>"
    ));
    assert!(page.contains("data-phase=\"evil&lt;i&gt;\""));
    assert!(page.contains("Say &lt;b&gt;hi&lt;/b&gt; &amp; &quot;bye&quot; &lt;/script&gt;"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;/pre&gt;&lt;img src=&quot;http://example.invalid/x.png&quot;&gt;"));

    // The DAG: statuses, badges, the skipped `when` phase and the dashed join:any edges.
    assert!(page.contains("<g class=\"n st-done\" id=\"p_flaky\""));
    assert!(page.contains(">×2</text>"), "flaky retried once");
    assert!(page.contains(">×3</text>"), "three map items");
    assert!(page.contains(">pass</text>"), "gate verdict");
    assert!(page.contains("<g class=\"n st-skipped\" id=\"p_never\""));
    assert!(page.contains("when: {steps.long.output} == &quot;nope&quot;"));
    assert_eq!(page.matches("class=\"e any\"").count(), 2);

    // Timeline: a bar per phase and per call (items, attempts).
    for row in [
        "fan#0 · attempt 1",
        "fan#2 · attempt 1",
        "flaky · attempt 1",
        "flaky · attempt 2",
    ] {
        assert!(
            page.contains(&format!("<span class=\"lb\">{row}</span>")),
            "{row}"
        );
    }
    assert!(
        page.contains("class=\"bar call st-failed\""),
        "the rate-limited attempt"
    );

    // Table and details: every phase once; the long output read from its file and cut.
    assert_eq!(page.matches("<details class=\"ph\"").count(), 8);
    assert_eq!(page.matches("<tr data-row=").count(), 8);
    assert!(page.contains("Condition not met: {steps.long.output} == &quot;nope&quot;"));
    assert!(
        page.contains("[… 50000 more characters not shown"),
        "70,000 chars cut at 20,000"
    );
    assert!(
        page.contains("From <code>outputs/phases/"),
        "the externalised output"
    );
    assert!(page.contains("HTTP 429"), "the failed attempt's error");
}

#[test]
fn report_command_finds_runs_and_writes_where_asked() {
    let (out, project) = run("report-e2e-cmd", &["--report"]);
    assert_eq!(out.code, 0, "{out:?}");
    let dir = run_dir(&project);
    let id = dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("run id")
        .to_owned();
    let first = read(&dir.join("report.html"));
    std::fs::remove_file(dir.join("report.html")).expect("remove");

    // `last`, rewritten in place: the same page.
    let last = tfc_in(Some(&project), &["report", "last"], b"");
    assert_eq!(last.code, 0, "{last:?}");
    assert!(
        last.stderr
            .contains(&format!("report of run {id} written to")),
        "{}",
        last.stderr
    );
    assert_eq!(read(&dir.join("report.html")), first);

    // A prefix and -o FILE; -o - prints it.
    let prefix = &id[..id.len() - 3];
    let other = tfc_in(Some(&project), &["report", prefix, "-o", "out/r.html"], b"");
    assert_eq!(other.code, 2, "the folder does not exist: {other:?}");
    assert!(
        other.stderr.contains("cannot write the report to"),
        "{}",
        other.stderr
    );
    std::fs::create_dir_all(project.join("out")).expect("mkdir");
    let other = tfc_in(Some(&project), &["report", prefix, "-o", "out/r.html"], b"");
    assert_eq!(other.code, 0, "{other:?}");
    assert_eq!(read(&project.join("out/r.html")), first);
    let stdout = tfc_in(Some(&project), &["report", &id, "-o", "-"], b"");
    assert_eq!(stdout.code, 0, "{stdout:?}");
    assert_eq!(stdout.stdout, first);

    // Not found: exit 2 with the store's message.
    let missing = tfc_in(Some(&project), &["report", "zzz-nope"], b"");
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(missing.stderr.contains("zzz-nope"), "{}", missing.stderr);
}

#[test]
fn a_torn_journal_and_a_killed_run_still_report() {
    let (out, project) = run("report-e2e-torn", &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let dir = run_dir(&project);
    assert!(
        !dir.join("report.html").exists(),
        "no report without --report"
    );
    // What a kill -9 leaves: a torn last journal line and a `running` record whose lock
    // names a dead process.
    let mut journal = read(&dir.join("journal.jsonl"));
    journal.push_str("{\"type\":\"phase-end\",\"ts\":\"2026-");
    std::fs::write(dir.join("journal.jsonl"), journal).expect("write journal");
    let record = read(&dir.join("run.json"))
        .replacen("\"status\": \"completed\"", "\"status\": \"running\"", 1)
        .replacen("\"status\": \"done\"", "\"status\": \"running\"", 1);
    std::fs::write(dir.join("run.json"), record).expect("write record");
    let mut dead = std::process::Command::new("true").spawn().expect("spawn");
    let pid = dead.id();
    dead.wait().expect("wait");
    std::fs::write(dir.join("lock"), pid.to_string()).expect("write lock");

    let rep = tfc_in(Some(&project), &["report", "last", "-o", "-"], b"");
    assert_eq!(rep.code, 0, "{rep:?}");
    let page = rep.stdout;
    assert!(
        page.contains("<span class=\"pill st-interrupted\">interrupted</span>"),
        "{}",
        &page[..3000.min(page.len())]
    );
    assert!(page.contains("1 journal line(s) could not be read"));
    // The phase that was running counts as not started.
    assert!(page.contains("<g class=\"n st-pending\" id=\"p_evil_i_\""));
}
