//! The release archive of this machine's target, as cargo-dist builds it (SPEC §19):
//! unpacked into a temporary prefix, its `tfc` prints the version and checks a bundled
//! example; it carries the man pages and completion scripts; its checksum file and the
//! `cargo binstall` metadata match it; the shell installer installs it offline from the
//! release files. The archive comes from `dist build` (`.ci/run` runs it and sets
//! `TFC_DIST_DIR`; default `target/distrib/`); without one the tests skip with a note.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{root, scratch, skip};
use sha2::{Digest, Sha256};

/// Where `dist build` left its files.
fn dist_dir() -> PathBuf {
    std::env::var_os("TFC_DIST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/distrib"))
}

/// The targets whose archives run here, best first.
fn host_targets() -> Vec<String> {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "linux" => vec![
            format!("{arch}-unknown-linux-gnu"),
            format!("{arch}-unknown-linux-musl"),
        ],
        "macos" => vec![format!("{arch}-apple-darwin")],
        _ => Vec::new(),
    }
}

/// The host's archive and its target, or a skip note.
fn host_archive() -> Option<(PathBuf, String)> {
    let dir = dist_dir();
    let found = host_targets().into_iter().find_map(|t| {
        let f = dir.join(format!("tfc-cli-{t}.tar.xz"));
        f.exists().then_some((f, t))
    });
    if found.is_none() {
        skip(&format!(
            "no tfc-cli-<host target>.tar.xz in {} (build it with `dist build --artifacts=local`; \
             set TFC_DIST_DIR to look elsewhere)",
            dir.display()
        ));
    }
    found
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("spawn");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `tfc --version` of `bin`: the package version, then the commit in parentheses.
fn assert_version(bin: &Path) {
    let (code, out, err) = run(Command::new(bin).arg("--version"));
    assert_eq!(code, 0, "{err}");
    let want = concat!("tfc ", env!("CARGO_PKG_VERSION"));
    assert!(
        out.trim_end() == want || out.starts_with(&format!("{want} (")),
        "{}: {out:?}",
        bin.display()
    );
}

/// `tfc check` on a bundled example, from a project folder holding a copy of `examples/`.
fn assert_checks(bin: &Path, name: &str) {
    let project = common::with_examples(name);
    let (code, out, err) = run(Command::new(bin)
        .args([
            "check",
            "examples/changelog/flow.json",
            "examples/gated-rework.json",
        ])
        .current_dir(&project)
        .env("NO_COLOR", "1"));
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = run(Command::new(bin)
        .args(["check", "examples/no-such-flow.json"])
        .current_dir(&project));
    assert_eq!(code, 2, "a missing file is a usage error: {err}");
}

#[test]
fn the_host_archive_unpacks_runs_and_carries_pages_and_scripts() {
    let Some((archive, target)) = host_archive() else {
        return;
    };
    // The checksum file cargo-dist writes beside it: `<sha256>  <name>` (or `*<name>`).
    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    let sums = std::fs::read_to_string(dist_dir().join(format!("{name}.sha256"))).expect("sha256");
    let bytes = std::fs::read(&archive).expect("archive");
    let hex: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut words = sums.split_whitespace();
    assert_eq!(words.next(), Some(hex.as_str()), "{sums}");
    assert_eq!(
        words.next().map(|n| n.trim_start_matches('*')),
        Some(name.as_str())
    );

    let prefix = scratch("dist-install-archive");
    let (code, _, err) = run(Command::new("tar")
        .arg("-xJf")
        .arg(&archive)
        .arg("-C")
        .arg(&prefix));
    assert_eq!(code, 0, "tar: {err}");
    let top = prefix.join(format!("tfc-cli-{target}"));
    let bin = top.join("tfc");
    assert!(bin.is_file(), "no tfc in {}", top.display());
    assert_version(&bin);
    assert_checks(&bin, "dist-install-archive-project");

    // What the archive carries beside the binary: the committed pages and scripts.
    for dir in ["man", "completions"] {
        let packed = std::fs::read_dir(root().join("packaging").join(dir)).expect("packaging");
        let mut n = 0;
        for entry in packed.flatten() {
            let inside = top.join(dir).join(entry.file_name());
            assert_eq!(
                std::fs::read(&inside).ok(),
                std::fs::read(entry.path()).ok(),
                "{} differs from packaging/",
                inside.display()
            );
            n += 1;
        }
        assert!(n > 0, "packaging/{dir} is empty");
    }
    for f in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
        assert!(top.join(f).is_file(), "{f} not in the archive");
    }
    let (code, _, err) = run(Command::new("bash")
        .arg("-n")
        .arg(top.join("completions/tfc.bash")));
    assert_eq!(code, 0, "{err}");

    // `cargo binstall tfc-cli` finds this archive and the binary in it.
    let manifest: toml::Table = std::fs::read_to_string(root().join("Cargo.toml"))
        .expect("Cargo.toml")
        .parse()
        .expect("Cargo.toml parses");
    let package = manifest["package"].as_table().expect("[package]");
    let binstall = package["metadata"]["binstall"]
        .as_table()
        .expect("binstall");
    let fill = |template: &str| {
        template
            .replace(
                "{ repo }",
                package["repository"].as_str().expect("repository"),
            )
            .replace("{ version }", env!("CARGO_PKG_VERSION"))
            .replace("{ name }", package["name"].as_str().expect("name"))
            .replace("{ target }", &target)
            .replace("{ archive-suffix }", ".tar.xz")
            .replace("{ bin }", "tfc")
            .replace("{ binary-ext }", "")
    };
    let url = fill(binstall["pkg-url"].as_str().expect("pkg-url"));
    assert!(
        url.ends_with(&format!(
            "/releases/download/v{}/{name}",
            env!("CARGO_PKG_VERSION")
        )),
        "{url}"
    );
    assert_eq!(binstall["pkg-fmt"].as_str(), Some("txz"));
    let bin_dir = fill(binstall["bin-dir"].as_str().expect("bin-dir"));
    assert!(
        prefix.join(&bin_dir).is_file(),
        "binstall's bin-dir {bin_dir} is not in the archive"
    );
}

#[test]
fn the_shell_installer_installs_from_the_release_files() {
    let Some((_, _)) = host_archive() else {
        return;
    };
    let installer = dist_dir().join("tfc-cli-installer.sh");
    if !installer.exists() {
        return skip(&format!(
            "no {} (`dist build --artifacts=all` builds it with the archive)",
            installer.display()
        ));
    }
    // The release page is this folder: the installer takes a download address from the
    // environment (as for a mirror), and curl reads file:// addresses.
    let home = scratch("dist-install-installer");
    let (code, out, err) = run(Command::new("sh")
        .arg(&installer)
        .env(
            "TFC_CLI_DOWNLOAD_URL",
            format!("file://{}", dist_dir().display()),
        )
        .env("HOME", &home)
        .env("CARGO_HOME", home.join("cargo"))
        .env("TFC_CLI_NO_MODIFY_PATH", "1")
        .env_remove("XDG_CONFIG_HOME"));
    assert_eq!(code, 0, "installer failed:\n{out}\n{err}");
    let bin = home.join("cargo/bin/tfc");
    assert!(
        bin.is_file(),
        "installer did not put tfc in $CARGO_HOME/bin:\n{out}\n{err}"
    );
    assert_version(&bin);
    assert_checks(&bin, "dist-install-installer-project");
}

/// Whether `bin --version` runs.
fn have(bin: &str) -> bool {
    Command::new(bin)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The npm platform package for a cargo-dist target (packaging/npm/build.mjs's PLATFORMS).
fn npm_platform(target: &str) -> String {
    let (arch, rest) = target.split_once('-').expect("a target triple");
    let cpu = match arch {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let os = if rest.contains("linux") {
        "linux"
    } else {
        "darwin"
    };
    let musl = if rest.ends_with("musl") { "-musl" } else { "" };
    format!("tfc-cli-{os}-{cpu}{musl}")
}

#[test]
fn the_npm_packages_install_offline_from_their_tarballs() {
    let Some((_, target)) = host_archive() else {
        return;
    };
    if !have("node") || !have("npm") {
        return skip("no node or npm on PATH");
    }
    let work = scratch("dist-npm");
    let pkgs = work.join("packages");
    let (code, out, err) = run(Command::new("node")
        .arg(root().join("packaging/npm/build.mjs"))
        .arg("--dist")
        .arg(dist_dir())
        .arg("--out")
        .arg(&pkgs));
    assert_eq!(code, 0, "build.mjs:\n{out}\n{err}");

    // The meta package: both commands, every platform as an optional dependency, and no
    // install script (nothing is downloaded after install).
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(pkgs.join("tfc-cli/package.json")).expect("meta package.json"),
    )
    .expect("json");
    assert_eq!(meta["name"], "tfc-cli");
    assert_eq!(meta["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(meta["bin"]["tfc"], "bin/tfc.js");
    assert_eq!(meta["bin"]["tfc-cli"], "bin/tfc.js");
    assert!(meta.get("scripts").is_none(), "{meta}");
    let optional = meta["optionalDependencies"]
        .as_object()
        .expect("optionalDependencies");
    assert_eq!(optional.len(), 7, "{optional:?}");
    for (name, version) in optional {
        assert!(name.starts_with("tfc-cli-"), "{name}");
        assert_eq!(version, env!("CARGO_PKG_VERSION"), "{name}");
    }
    let platform = npm_platform(&target);
    assert!(
        optional.contains_key(&platform),
        "{platform} not in {optional:?}"
    );
    let plat: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(pkgs.join(&platform).join("package.json")).expect("platform"),
    )
    .expect("json");
    let os = if cfg!(target_os = "macos") {
        "darwin"
    } else {
        "linux"
    };
    assert_eq!(plat["os"][0], os, "{plat}");
    assert!(plat.get("scripts").is_none(), "{plat}");

    // `npm pack` both, then install the tarballs into a fresh project with an empty cache,
    // offline: the other platforms' packages are optional and are left out.
    let tgz = work.join("tgz");
    std::fs::create_dir_all(&tgz).expect("mkdir");
    let cache = work.join("npm-cache");
    let npm = |dir: &Path, args: &[&str]| {
        run(Command::new("npm")
            .args(args)
            .current_dir(dir)
            .env("npm_config_cache", &cache)
            .env("npm_config_update_notifier", "false")
            .env("npm_config_fund", "false")
            .env("npm_config_audit", "false"))
    };
    for dir in ["tfc-cli", platform.as_str()] {
        let (code, out, err) = npm(
            &pkgs.join(dir),
            &["pack", "--pack-destination", tgz.to_str().expect("utf-8")],
        );
        assert_eq!(code, 0, "npm pack {dir}:\n{out}\n{err}");
    }
    let version = env!("CARGO_PKG_VERSION");
    let meta_tgz = tgz.join(format!("tfc-cli-{version}.tgz"));
    let plat_tgz = tgz.join(format!("{platform}-{version}.tgz"));
    assert!(
        meta_tgz.is_file() && plat_tgz.is_file(),
        "{:?}",
        std::fs::read_dir(&tgz)
    );

    let project = common::with_examples("dist-npm-project");
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "uses-tfc", "version": "1.0.0", "private": true}"#,
    )
    .expect("package.json");
    let (code, out, err) = npm(
        &project,
        &[
            "install",
            "--offline",
            meta_tgz.to_str().expect("utf-8"),
            plat_tgz.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(code, 0, "npm install:\n{out}\n{err}");
    for cmd in ["tfc", "tfc-cli"] {
        let (code, out, err) = npm(&project, &["exec", "--offline", "--", cmd, "--version"]);
        assert_eq!(code, 0, "npx {cmd} --version:\n{out}\n{err}");
        assert!(
            out.starts_with(&format!("tfc {version}")),
            "npx {cmd} --version: {out:?}"
        );
    }
    let (code, out, err) = run(Command::new(project.join("node_modules/.bin/tfc"))
        .args(["check", "examples/changelog/flow.json"])
        .current_dir(&project)
        .env("NO_COLOR", "1"));
    assert_eq!(code, 0, "tfc check through npm:\n{out}\n{err}");
    // The launcher passes on the exit code.
    let (code, _, err) = run(Command::new(project.join("node_modules/.bin/tfc"))
        .args(["check", "examples/no-such-flow.json"])
        .current_dir(&project));
    assert_eq!(code, 2, "{err}");
}

#[test]
fn the_wheel_installs_into_a_venv() {
    // maturin from PyPI (`.ci/run` installs it into a venv and sets TFC_MATURIN).
    let Some(maturin) = std::env::var_os("TFC_MATURIN").map(PathBuf::from) else {
        return skip("TFC_MATURIN is not set (the maturin binary that builds the wheel)");
    };
    if !have("python3") {
        return skip("no python3 on PATH");
    }
    let work = scratch("dist-wheel");
    let wheels = work.join("wheels");
    // The dist profile and the host target, as `dist build` compiles: with its target
    // folder (TFC_DIST_TARGET_DIR) the binary is reused, not compiled again.
    let mut build = Command::new(&maturin);
    // Without what `cargo test` adds to this process's environment (CARGO_*, LD_LIBRARY_PATH,
    // …): build scripts that watch such variables would otherwise compile again.
    build.env_clear();
    for (k, v) in std::env::vars_os() {
        let keep = [
            "PATH",
            "HOME",
            "CARGO_HOME",
            "RUSTUP_HOME",
            "TMPDIR",
            "LANG",
        ];
        if keep.iter().any(|name| k == *name) || k.to_string_lossy().starts_with("CARGO_PROFILE_") {
            build.env(k, v);
        }
    }
    build
        .args(["build", "--locked", "--out"])
        .arg(&wheels)
        .arg("--target")
        .arg(&host_targets()[0])
        .arg("--manifest-path")
        .arg(root().join("Cargo.toml"))
        .current_dir(root());
    if let Some(dir) = std::env::var_os("TFC_DIST_TARGET_DIR") {
        build.env("CARGO_TARGET_DIR", dir);
    }
    let (code, out, err) = run(&mut build);
    assert_eq!(code, 0, "maturin build:\n{out}\n{err}");
    let wheel = std::fs::read_dir(&wheels)
        .expect("wheels")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("a wheel");
    let file = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        file.starts_with(&format!("tfc_cli-{}-py3-none-", env!("CARGO_PKG_VERSION"))),
        "{file}"
    );

    let venv = work.join("venv");
    let (code, _, err) = run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    assert_eq!(code, 0, "venv: {err}");
    let (code, out, err) = run(Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .arg(&wheel));
    assert_eq!(code, 0, "pip install:\n{out}\n{err}");
    let bin = venv.join("bin/tfc");
    assert_version(&bin);
    assert_checks(&bin, "dist-wheel-project");
    // The package's metadata, as pip installed it.
    let site = std::fs::read_dir(venv.join("lib"))
        .expect("venv lib")
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .next()
        .expect("site-packages");
    let info = site.join(format!(
        "tfc_cli-{}.dist-info/METADATA",
        env!("CARGO_PKG_VERSION")
    ));
    let metadata = std::fs::read_to_string(&info).expect("METADATA");
    for line in [
        "Name: tfc-cli",
        "License-Expression: MIT OR Apache-2.0",
        "Project-URL: Repository, https://github.com/tfc-dev/tfc",
    ] {
        assert!(
            metadata.lines().any(|l| l == line),
            "{line} not in {metadata}"
        );
    }
}
