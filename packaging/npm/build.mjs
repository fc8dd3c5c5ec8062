#!/usr/bin/env node
// Builds the npm packages of tfc (SPEC §19) from cargo-dist's archives:
//
//   - one package per platform, `tfc-cli-<os>-<cpu>[-musl]`, holding that platform's binary
//     (`os`, `cpu` and `libc` fields let npm install only the one that fits);
//   - the meta package `tfc-cli`, listing them all in `optionalDependencies` and installing
//     the commands `tfc` and `tfc-cli`, a small launcher that runs the platform's binary.
//
// Nothing is downloaded after install: the binary comes in the platform package, so an
// install works offline from a registry mirror or from the packed tarballs.
//
//   node packaging/npm/build.mjs --dist DIR --out DIR
//
// DIR of --dist holds the archives (`tfc-cli-<target>.tar.xz`, `tfc-cli-<target>.zip`, as
// `dist build` writes them into target/distrib/); every archive found there becomes a
// platform package, and the meta package names every platform of PLATFORMS. Each package
// is written to `<out>/<name>/`, ready for `npm pack` or `npm publish`. Needs `tar` (with xz)
// and, for the Windows zip, `unzip`.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");

/** cargo-dist target → the npm platform package and the `os`/`cpu`/`libc` it is for. */
export const PLATFORMS = {
  "x86_64-unknown-linux-gnu": { pkg: "tfc-cli-linux-x64", os: "linux", cpu: "x64", libc: "glibc" },
  "aarch64-unknown-linux-gnu": { pkg: "tfc-cli-linux-arm64", os: "linux", cpu: "arm64", libc: "glibc" },
  "x86_64-unknown-linux-musl": { pkg: "tfc-cli-linux-x64-musl", os: "linux", cpu: "x64", libc: "musl" },
  "aarch64-unknown-linux-musl": { pkg: "tfc-cli-linux-arm64-musl", os: "linux", cpu: "arm64", libc: "musl" },
  "x86_64-apple-darwin": { pkg: "tfc-cli-darwin-x64", os: "darwin", cpu: "x64" },
  "aarch64-apple-darwin": { pkg: "tfc-cli-darwin-arm64", os: "darwin", cpu: "arm64" },
  "x86_64-pc-windows-msvc": { pkg: "tfc-cli-win32-x64", os: "win32", cpu: "x64", exe: true },
};

function args(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--dist" || a === "--out") {
      if (i + 1 >= argv.length) fail(`${a} needs a folder`);
      out[a.slice(2)] = path.resolve(argv[++i]);
    } else {
      fail(`unknown argument ${a} (usage: build.mjs --dist DIR --out DIR)`);
    }
  }
  if (!out.dist || !out.out) fail("usage: build.mjs --dist DIR --out DIR");
  return out;
}

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(2);
}

/** The `[package]` fields of Cargo.toml the packages repeat. */
function cargoPackage() {
  const text = fs.readFileSync(path.join(root, "Cargo.toml"), "utf8");
  const section = text.split(/^\[package\]\s*$/m)[1].split(/^\[/m)[0];
  const field = (name) => {
    const m = section.match(new RegExp(`^${name}\\s*=\\s*"([^"]*)"`, "m"));
    if (!m) fail(`Cargo.toml has no package.${name}`);
    return m[1];
  };
  return {
    version: field("version"),
    description: field("description"),
    license: field("license"),
    repository: field("repository"),
    homepage: field("homepage"),
  };
}

function writeJson(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + "\n");
}

/** Unpack `archive` into a fresh temporary folder and return the binary's path in it. */
function binaryOf(archive, target, exe) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tfc-npm-"));
  if (archive.endsWith(".zip")) {
    execFileSync("unzip", ["-q", archive, "-d", tmp]);
  } else {
    execFileSync("tar", ["-xJf", archive, "-C", tmp]);
  }
  const name = exe ? "tfc.exe" : "tfc";
  // cargo-dist's tar archives have a `tfc-cli-<target>/` folder; its zips are flat.
  for (const candidate of [path.join(tmp, `tfc-cli-${target}`, name), path.join(tmp, name)]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  fail(`${archive} holds no ${name}`);
}

function main() {
  const { dist, out } = args(process.argv.slice(2));
  const cargo = cargoPackage();
  const common = {
    version: cargo.version,
    license: cargo.license,
    homepage: cargo.homepage,
    repository: { type: "git", url: `git+${cargo.repository}.git` },
  };
  fs.mkdirSync(out, { recursive: true });
  const built = [];
  for (const [target, p] of Object.entries(PLATFORMS)) {
    const archive = [".tar.xz", ".zip"]
      .map((ext) => path.join(dist, `tfc-cli-${target}${ext}`))
      .find((f) => fs.existsSync(f));
    if (!archive) continue;
    const dir = path.join(out, p.pkg);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
    const bin = p.exe ? "tfc.exe" : "tfc";
    fs.copyFileSync(binaryOf(archive, target, p.exe), path.join(dir, "bin", bin));
    fs.chmodSync(path.join(dir, "bin", bin), 0o755);
    for (const f of ["LICENSE-MIT", "LICENSE-APACHE"]) {
      fs.copyFileSync(path.join(root, f), path.join(dir, f));
    }
    writeJson(path.join(dir, "package.json"), {
      name: p.pkg,
      ...common,
      description: `The ${target} binary of tfc-cli (install tfc-cli, not this package)`,
      os: [p.os],
      cpu: [p.cpu],
      ...(p.libc ? { libc: [p.libc] } : {}),
      files: [`bin/${bin}`, "LICENSE-MIT", "LICENSE-APACHE"],
      preferUnplugged: true,
    });
    fs.writeFileSync(
      path.join(dir, "README.md"),
      `# ${p.pkg}\n\nThe \`tfc\` binary for ${target}, installed by the [tfc-cli](https://www.npmjs.com/package/tfc-cli) package. Install that one: \`npm install tfc-cli\`.\n`,
    );
    built.push(p.pkg);
  }
  if (built.length === 0) fail(`no tfc-cli-<target> archive in ${dist} (run dist build first)`);

  const meta = path.join(out, "tfc-cli");
  fs.rmSync(meta, { recursive: true, force: true });
  fs.mkdirSync(path.join(meta, "bin"), { recursive: true });
  fs.copyFileSync(path.join(here, "tfc.js"), path.join(meta, "bin", "tfc.js"));
  fs.chmodSync(path.join(meta, "bin", "tfc.js"), 0o755);
  fs.copyFileSync(path.join(root, "README.md"), path.join(meta, "README.md"));
  for (const f of ["LICENSE-MIT", "LICENSE-APACHE"]) {
    fs.copyFileSync(path.join(root, f), path.join(meta, f));
  }
  writeJson(path.join(meta, "package.json"), {
    name: "tfc-cli",
    ...common,
    description: cargo.description,
    keywords: ["taskflow", "agents", "workflow", "llm", "cli"],
    bin: { tfc: "bin/tfc.js", "tfc-cli": "bin/tfc.js" },
    files: ["bin/tfc.js", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
    engines: { node: ">=16" },
    optionalDependencies: Object.fromEntries(
      Object.values(PLATFORMS).map((p) => [p.pkg, cargo.version]),
    ),
  });
  console.log(`wrote tfc-cli and ${built.join(", ")} (${cargo.version}) to ${out}`);
}

main();
