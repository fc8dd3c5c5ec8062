//! `tfc completions SHELL` and `tfc man` (SPEC §19): the scripts parse in their shells and
//! complete tfc's commands and options; the man pages cover every command; the copies the
//! release archives carry (`packaging/completions/`, `packaging/man/`) are what the binary
//! generates (`TFC_BLESS=1 cargo test --test completions_cli` rewrites them).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{golden, root, scratch, skip, tfc};

/// The shells, each with its script's file name in `packaging/completions/`.
const SHELLS: &[(&str, &str)] = &[
    ("bash", "tfc.bash"),
    ("zsh", "_tfc"),
    ("fish", "tfc.fish"),
    ("powershell", "_tfc.ps1"),
    ("elvish", "tfc.elv"),
];

/// The commands `tfc --help` lists (`help` left out).
fn commands() -> Vec<String> {
    let help = tfc(&["--help"]);
    assert_eq!(help.code, 0, "{help:?}");
    let cmds: Vec<String> = help
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect();
    assert!(cmds.len() >= 15, "{}", help.stdout);
    cmds
}

fn script(shell: &str) -> String {
    let out = tfc(&["completions", shell]);
    assert_eq!(out.code, 0, "{shell}: {out:?}");
    assert!(out.stderr.is_empty(), "{shell}: {out:?}");
    out.stdout
}

/// Write `text` into the scratch folder and return its path.
fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write script");
    path
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().expect("spawn");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn have(bin: &str) -> bool {
    Command::new(bin)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn every_shell_gets_a_script_naming_every_command() {
    let cmds = commands();
    for (shell, _) in SHELLS {
        let text = script(shell);
        for c in &cmds {
            assert!(text.contains(c.as_str()), "{shell}: no {c}");
        }
        assert!(text.contains("--strict"), "{shell}: no check option");
    }
    let bad = tfc(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr.contains("invalid value 'tcsh'") && bad.stderr.contains("powershell"),
        "{bad:?}"
    );
    // PowerShell is not packaged for this machine: its script is checked by its shape.
    let ps = script("powershell");
    assert!(
        ps.contains("Register-ArgumentCompleter -Native -CommandName 'tfc'"),
        "{ps}"
    );
}

#[test]
fn bash_parses_the_script_and_completes_commands_and_options() {
    let dir = scratch("completions-bash");
    let path = file(&dir, "tfc.bash", &script("bash"));
    let (ok, _, err) = run(Command::new("bash").arg("-n").arg(&path));
    assert!(ok, "bash -n: {err}");
    // What bash's programmable completion does on <TAB>: call the function with the words.
    let complete = |line: &str| {
        let words: Vec<&str> = line.split(' ').collect();
        let prog = format!(
            "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; \
             _tfc tfc '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            path.display(),
            words
                .iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(" "),
            words.len() - 1,
            line.len(),
            words[words.len() - 1],
            words[words.len() - 2],
        );
        let (ok, out, err) = run(Command::new("bash").arg("-c").arg(prog));
        assert!(ok, "{line}: {err}");
        out.lines().map(str::to_owned).collect::<Vec<_>>()
    };
    assert_eq!(complete("tfc ch"), ["check"]);
    assert!(complete("tfc check --st").contains(&"--strict".to_owned()));
    assert_eq!(
        complete("tfc completions p"),
        ["powershell"],
        "the shells are completed too"
    );
}

#[test]
fn zsh_parses_the_script() {
    if !have("zsh") {
        return skip("no zsh on PATH (Debian package zsh)");
    }
    let dir = scratch("completions-zsh");
    let path = file(&dir, "_tfc", &script("zsh"));
    let (ok, _, err) = run(Command::new("zsh").arg("-n").arg(&path));
    assert!(ok, "zsh -n: {err}");
    assert!(script("zsh").starts_with("#compdef tfc"));
}

#[test]
fn fish_parses_the_script_and_completes_commands() {
    if !have("fish") {
        return skip("no fish on PATH (Debian package fish)");
    }
    let dir = scratch("completions-fish");
    let path = file(&dir, "tfc.fish", &script("fish"));
    let (ok, _, err) = run(Command::new("fish").arg("--no-execute").arg(&path));
    assert!(ok && err.is_empty(), "fish --no-execute: {err}");
    let prog = format!("source {}; complete -C 'tfc ch'", path.display());
    let (ok, out, err) = run(Command::new("fish").arg("--no-config").arg("-c").arg(prog));
    assert!(ok, "{err}");
    assert!(out.starts_with("check\t"), "{out}");
}

#[test]
fn elvish_parses_the_script() {
    if !have("elvish") {
        return skip("no elvish on PATH (Debian package elvish)");
    }
    let dir = scratch("completions-elvish");
    let path = file(&dir, "tfc.elv", &script("elvish"));
    // Outside an interactive shell `edit:` does not exist, so compiling stops there; a
    // script that does not parse fails earlier, with a parse error.
    let (_, _, err) = run(Command::new("elvish").arg("-compileonly").arg(&path));
    assert!(!err.to_lowercase().contains("parse error"), "{err}");
    assert!(
        err.is_empty() || err.contains("edit:completion:arg-completer"),
        "{err}"
    );
    let broken = file(&dir, "broken.elv", &script("elvish").replacen('}', "", 1));
    let (ok, _, err) = run(Command::new("elvish").arg("-compileonly").arg(&broken));
    assert!(
        !ok && err.to_lowercase().contains("parse error"),
        "the check catches a broken script: {err}"
    );
}

#[test]
fn man_pages_cover_every_command() {
    let cmds = commands();
    let page = tfc(&["man"]);
    assert_eq!(page.code, 0, "{page:?}");
    assert!(page.stdout.contains(".TH tfc 1"), "{}", page.stdout);
    assert!(
        page.stdout
            .contains("\n.SH NAME\ntfc \\- Check and run taskflow flows"),
        "{}",
        page.stdout
    );
    for c in &cmds {
        assert!(
            page.stdout
                .contains(&format!("tfc\\-{}(1)", c.replace('-', "\\-"))),
            "tfc(1) does not list {c}"
        );
    }
    let eval_when = tfc(&["man", "eval", "when"]);
    assert_eq!(eval_when.code, 0, "{eval_when:?}");
    assert!(
        eval_when.stdout.contains(".TH tfc-eval-when 1"),
        "{eval_when:?}"
    );
    // Version without the commit: the pages change only with the commands.
    assert!(
        page.stdout
            .contains(concat!("\"tfc ", env!("CARGO_PKG_VERSION"), "\"")),
        "{}",
        page.stdout
    );

    let dir = scratch("man-out").join("man1");
    let out = tfc(&["man", "--out", dir.to_str().expect("utf-8")]);
    assert_eq!(out.code, 0, "{out:?}");
    for c in &cmds {
        let f = dir.join(format!("tfc-{c}.1"));
        let text = std::fs::read_to_string(&f).unwrap_or_else(|_| panic!("{}", f.display()));
        assert!(text.contains(&format!(".TH tfc-{c} 1")), "{text}");
    }
    assert!(dir.join("tfc.1").exists() && dir.join("tfc-eval-when.1").exists());
    assert!(
        !dir.join("tfc-help.1").exists(),
        "no page for clap's help command"
    );

    let bad = tfc(&["man", "evl"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr.contains("has no command `evl`") && bad.stderr.contains("eval"),
        "{bad:?}"
    );
    let file_in_the_way = scratch("man-out-file").join("f");
    std::fs::write(&file_in_the_way, "").expect("write");
    let blocked = tfc(&["man", "--out", file_in_the_way.to_str().expect("utf-8")]);
    assert_eq!(blocked.code, 2, "{blocked:?}");
    assert!(
        blocked.stderr.contains("cannot write the man pages"),
        "{blocked:?}"
    );
}

/// The files of `dir`, by name.
fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, std::fs::read_to_string(e.path()).unwrap_or_default())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `dir` holds exactly `want` (rewritten under `TFC_BLESS=1`).
fn same_files(dir: &Path, want: &BTreeMap<String, String>) {
    if golden::bless() {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).expect("mkdir");
        for (name, text) in want {
            std::fs::write(dir.join(name), text).expect("write");
        }
        return;
    }
    let have = files(dir);
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&have),
        names(want),
        "{}: run TFC_BLESS=1 cargo test --test completions_cli",
        dir.display()
    );
    for (name, text) in want {
        if let Some(problem) = golden::compare(&dir.join(name), text) {
            panic!(
                "{problem}\n(after a change to the commands: TFC_BLESS=1 cargo test --test completions_cli)"
            );
        }
    }
}

#[test]
fn the_packaged_pages_and_scripts_are_current() {
    let scripts: BTreeMap<String, String> = SHELLS
        .iter()
        .map(|(shell, name)| ((*name).to_owned(), script(shell)))
        .collect();
    same_files(&root().join("packaging/completions"), &scripts);
    let dir = scratch("man-packaged");
    let out = tfc(&["man", "--out", dir.to_str().expect("utf-8")]);
    assert_eq!(out.code, 0, "{out:?}");
    same_files(&root().join("packaging/man"), &files(&dir));
}
