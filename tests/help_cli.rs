//! `tfc --help` and every command's `--help`, as a user sees them: one layout (`-h` and
//! `--help` print the same), an option never without its description, and no pointer to a
//! document users do not have. (`src/cli/help_tests.rs` walks clap's own tree as well.)

mod common;

use common::tfc;

/// The commands `tfc --help` lists (`help` left out).
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A command's line; a description wrapped onto the next line is indented further.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_command_help_has_one_layout_and_describes_every_option() {
    let top = tfc(&["--help"]);
    assert_eq!(top.code, 0, "{top:?}");
    let mut paths: Vec<Vec<String>> = commands(&top.stdout).into_iter().map(|c| vec![c]).collect();
    assert!(paths.len() >= 15, "{}", top.stdout);
    let mut i = 0;
    while i < paths.len() {
        let path = paths[i].clone();
        i += 1;
        let mut argv: Vec<&str> = path.iter().map(String::as_str).collect();
        argv.push("--help");
        let long = tfc(&argv);
        assert_eq!(long.code, 0, "{argv:?}: {long:?}");
        *argv.last_mut().unwrap() = "-h";
        let short = tfc(&argv);
        assert_eq!(long.stdout, short.stdout, "{argv:?}: -h and --help differ");
        let text = &long.stdout;
        assert!(
            !text.contains("SPEC") && !text.contains('§'),
            "{argv:?}:\n{text}"
        );
        for line in text.lines().skip_while(|l| !l.starts_with("Options:")) {
            let t = line.trim_start();
            if t.starts_with('-') {
                assert!(
                    t.contains("  "),
                    "{argv:?}: an option without a description: {line}"
                );
            }
        }
        for sub in commands(text) {
            let mut p = path.clone();
            p.push(sub);
            paths.push(p);
        }
    }
    assert!(
        paths.iter().any(|p| p.join(" ") == "eval when"),
        "{paths:?}"
    );
}
