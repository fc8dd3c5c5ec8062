#!/usr/bin/env node
// The `tfc` (and `tfc-cli`) command of the npm package tfc-cli: runs the binary of the
// platform package npm installed beside it (tfc-cli-<os>-<cpu>[-musl]), with the same
// arguments, standard streams and exit code. Nothing is downloaded.
"use strict";

const { spawn } = require("node:child_process");

/** Whether this Linux runs on musl (no glibc version in Node's report). */
function isMusl() {
  try {
    const report = process.report && process.report.getReport();
    const header = report && (typeof report === "string" ? JSON.parse(report) : report).header;
    return !(header && header.glibcVersionRuntime);
  } catch {
    return false;
  }
}

/** The platform packages that can run here, best first. */
function candidates() {
  const { platform, arch } = process;
  const base = `tfc-cli-${platform}-${arch}`;
  if (platform !== "linux") return [base];
  // The musl binaries are static: they run on glibc systems too.
  return isMusl() ? [`${base}-musl`] : [base, `${base}-musl`];
}

function binary() {
  const exe = process.platform === "win32" ? "tfc.exe" : "tfc";
  for (const pkg of candidates()) {
    try {
      return require.resolve(`${pkg}/bin/${exe}`);
    } catch {
      // not installed: try the next
    }
  }
  return null;
}

const bin = binary();
if (!bin) {
  console.error(
    `tfc-cli: no prebuilt tfc for ${process.platform}-${process.arch} was installed ` +
      `(looked for ${candidates().join(", ")}). Reinstall without --no-optional / ` +
      `--omit=optional, or install from source: cargo install tfc-cli`,
  );
  process.exit(1);
}
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
// Ctrl-C and a closed terminal signal the whole process group, tfc included: this launcher
// only waits for tfc to end (it may cancel its agents first). A SIGTERM sent to the launcher
// alone is passed on.
process.on("SIGINT", () => {});
process.on("SIGHUP", () => {});
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.on("error", (e) => {
  console.error(`tfc-cli: cannot run ${bin}: ${e.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
