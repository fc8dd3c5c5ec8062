//! `--help` of every command: each option and argument says what it does, every command is
//! laid out the same way (`-h` and `--help` print the same text, one line per option), and no
//! text points at a document users do not have.

use clap::CommandFactory;

use super::Cli;

/// Every command, subcommands included, with its path (`tfc eval when`).
fn commands() -> Vec<(String, clap::Command)> {
    fn walk(path: String, cmd: &clap::Command, out: &mut Vec<(String, clap::Command)>) {
        out.push((path.clone(), cmd.clone()));
        for sub in cmd.get_subcommands() {
            walk(format!("{path} {}", sub.get_name()), sub, out);
        }
    }
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk("tfc".to_owned(), &cmd, &mut out);
    out
}

/// Words that must not reach a user: the specification is this project's, not theirs.
fn internal_reference(text: &str) -> bool {
    text.contains("SPEC") || text.contains('§')
}

#[test]
fn every_option_and_argument_has_a_description() {
    let mut missing = Vec::new();
    for (path, cmd) in commands() {
        if cmd
            .get_about()
            .is_none_or(|a| a.to_string().trim().is_empty())
        {
            missing.push(format!("{path}: no about"));
        }
        for arg in cmd.get_arguments() {
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            if help.trim().is_empty() {
                missing.push(format!("{path}: {}", arg.get_id()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "without a description:\n{}",
        missing.join("\n")
    );
    assert!(commands().len() > 20);
}

/// What `tfc <path> <flag>` prints.
fn printed_help(path: &str, flag: &str) -> String {
    let mut argv: Vec<&str> = path.split(' ').collect();
    argv.push(flag);
    match Cli::command().try_get_matches_from(argv) {
        Ok(_) => panic!("{path} {flag}: no help printed"),
        Err(e) => {
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp,
                "{path} {flag}"
            );
            e.render().to_string()
        }
    }
}

#[test]
fn every_command_has_one_layout() {
    for (path, _) in commands() {
        if path.split(' ').any(|w| w == "help") {
            continue;
        }
        let short = printed_help(&path, "-h");
        let long = printed_help(&path, "--help");
        assert_eq!(short, long, "{path}: `-h` and `--help` differ");
        // One line per option: its name, then its description on the same line.
        for line in long.lines() {
            let t = line.trim_start();
            if t.starts_with('-') {
                assert!(t.contains("  "), "{path}: no description beside it: {line}");
            }
        }
    }
}

#[test]
fn no_help_text_names_the_specification() {
    for (path, mut cmd) in commands() {
        let mut texts = vec![
            cmd.render_long_help().to_string(),
            cmd.get_about().map(ToString::to_string).unwrap_or_default(),
            cmd.get_long_about()
                .map(ToString::to_string)
                .unwrap_or_default(),
        ];
        for arg in cmd.get_arguments() {
            texts.extend(arg.get_help().map(ToString::to_string));
            texts.extend(arg.get_long_help().map(ToString::to_string));
            for v in arg.get_possible_values() {
                texts.extend(v.get_help().map(ToString::to_string));
            }
        }
        for t in texts {
            assert!(!internal_reference(&t), "{path}: {t}");
        }
    }
}
