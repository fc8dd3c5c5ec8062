// Starts `tfc lsp` for flow files (*.flow.json, .tfc/flows/**/*.json, taskflows/**/*.json)
// and their test files (*.test.json).
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

exports.activate = function activate() {
  const command = vscode.workspace.getConfiguration("tfc").get("path", "tfc");
  client = new LanguageClient(
    "tfc",
    "tfc",
    { command, args: ["lsp"] },
    {
      documentSelector: [
        { scheme: "file", pattern: "**/*.flow.json" },
        { scheme: "file", pattern: "**/.tfc/flows/**/*.json" },
        { scheme: "file", pattern: "**/taskflows/**/*.json" },
        { scheme: "file", pattern: "**/*.test.json" },
      ],
    },
  );
  return client.start();
};

exports.deactivate = function deactivate() {
  return client ? client.stop() : undefined;
};
