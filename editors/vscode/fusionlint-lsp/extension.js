// A minimal VS Code client for `fusionlint server` (LSP over stdio).
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("fusionlint");
  const command = config.get("path", "fusionlint");
  const args = ["server", ...config.get("args", [])];
  const cwd = vscode.workspace.workspaceFolders ? vscode.workspace.workspaceFolders[0].uri.fsPath : undefined;
  const serverOptions = { command, args, options: { cwd } };
  const clientOptions = {
    documentSelector: ["c", "cpp", "cuda-cpp"].map((language) => ({ scheme: "file", language })),
  };
  client = new LanguageClient("fusionlint", "fusionlint", serverOptions, clientOptions);
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
