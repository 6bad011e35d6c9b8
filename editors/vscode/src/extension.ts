// Wiring only: create the output channel, the server controller, the views, and register commands.
import * as vscode from "vscode";
import { ServerController } from "./client";
import { copyContextPrompt, openContextPrompt } from "./commands/contextPrompt";
import { reindex } from "./commands/reindex";
import { searchWorkspace } from "./commands/search";
import { showStatus } from "./commands/status";
import { serverSettingsChanged } from "./models/settings";
import { fetchStatus } from "./models/status";
import { registerChatParticipant } from "./views/chat";
import { StatusBarView } from "./views/statusBar";

let server: ServerController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("ragls");
  const statusBar = new StatusBarView();
  const refreshStatus = (): void => {
    fetchStatus(controller.connection).then(
      (folders) => statusBar.setFolders(folders),
      (error: unknown) => output.appendLine(`rag/status failed: ${String(error)}`),
    );
  };
  const controller = new ServerController(output, {
    onState: (state, message) => {
      statusBar.setServerState(state, message);
      if (state === "running") {
        refreshStatus();
      }
    },
    onProgress: (token, value) => {
      if (statusBar.progress(token, value)) {
        refreshStatus();
      }
    },
  });
  server = controller;
  const run = (action: () => Promise<void>) => () =>
    action().catch((error: unknown) => {
      void vscode.window.showErrorMessage(`ragls: ${error instanceof Error ? error.message : String(error)}`);
    });
  const setFolders = statusBar.setFolders.bind(statusBar);
  context.subscriptions.push(
    output,
    statusBar,
    controller,
    vscode.commands.registerCommand("ragls.searchWorkspace", run(() => searchWorkspace(controller))),
    vscode.commands.registerCommand("ragls.copyContextPrompt", run(() => copyContextPrompt(controller))),
    vscode.commands.registerCommand("ragls.openContextPrompt", run(() => openContextPrompt(controller))),
    vscode.commands.registerCommand("ragls.reindexWorkspace", run(() => reindex(controller, false, setFolders))),
    vscode.commands.registerCommand("ragls.reindexWorkspaceFull", run(() => reindex(controller, true, setFolders))),
    vscode.commands.registerCommand("ragls.showStatus", run(() => showStatus(controller, output, setFolders))),
    vscode.commands.registerCommand("ragls.restartServer", run(() => controller.restart())),
    vscode.commands.registerCommand("ragls.showOutput", () => output.show()),
    vscode.workspace.onDidChangeConfiguration((event) => onSettingsChanged(event, controller)),
  );
  const participant = registerChatParticipant(controller, context.extensionUri, output);
  if (participant !== undefined) {
    context.subscriptions.push(participant);
  }
  await controller.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}

function onSettingsChanged(event: vscode.ConfigurationChangeEvent, controller: ServerController): void {
  if (serverSettingsChanged((section) => event.affectsConfiguration(section))) {
    void controller.sendSettings();
  }
  if (event.affectsConfiguration("ragls.server.command")) {
    void vscode.window
      .showInformationMessage("ragls: the server command changed.", "Restart Server")
      .then((choice) => choice && controller.restart());
  }
}
