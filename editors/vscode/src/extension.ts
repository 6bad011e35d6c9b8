// Wiring only: create the output channel, the server controller, the views, and register commands.
import * as vscode from "vscode";
import { ServerController } from "./client";
import { copyContextPrompt, openContextPrompt } from "./commands/contextPrompt";
import { reindex } from "./commands/reindex";
import { openResult, searchWorkspace } from "./commands/search";
import { selectedText } from "./commands/contextPrompt";
import { showStatus } from "./commands/status";
import { questionInput } from "./models/contextPrompt";
import { serverSettingsChanged } from "./models/settings";
import { fetchStatus } from "./models/status";
import { RagResult } from "./protocol";
import { registerChatParticipant } from "./views/chat";
import { OPEN_RESULT_COMMAND, ResultsView } from "./views/results";
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
  const run = <A extends unknown[]>(action: (...args: A) => Promise<void>) => (...args: A) =>
    action(...args).catch((error: unknown) => {
      void vscode.window.showErrorMessage(`ragls: ${error instanceof Error ? error.message : String(error)}`);
    });
  const setFolders = statusBar.setFolders.bind(statusBar);
  const results = new ResultsView();
  const record = results.add.bind(results);
  const extensionId = context.extension.id;
  context.subscriptions.push(
    output,
    statusBar,
    controller,
    results,
    vscode.commands.registerCommand("ragls.searchWorkspace", run(() => searchWorkspace(controller, record))),
    vscode.commands.registerCommand(
      "ragls.searchSelection",
      run(() => searchWorkspace(controller, record, questionInput(selectedText()).value)),
    ),
    vscode.commands.registerCommand("ragls.copyContextPrompt", run(() => copyContextPrompt(controller))),
    vscode.commands.registerCommand("ragls.copyContextPromptForSelection", run(() => copyContextPrompt(controller, "selection"))),
    vscode.commands.registerCommand("ragls.openContextPrompt", run(() => openContextPrompt(controller))),
    vscode.commands.registerCommand("ragls.reindexWorkspace", run(() => reindex(controller, false, setFolders))),
    vscode.commands.registerCommand("ragls.reindexWorkspaceFull", run(() => reindex(controller, true, setFolders))),
    vscode.commands.registerCommand(
      "ragls.showStatus",
      run(() => showStatus(controller, output, () => statusBar.state, setFolders)),
    ),
    vscode.commands.registerCommand("ragls.restartServer", run(() => controller.restart())),
    vscode.commands.registerCommand("ragls.showOutput", () => output.show()),
    // The `@ext:` query shows every scope (User, Remote, Workspace), where a plain settings search may not.
    vscode.commands.registerCommand("ragls.openSettings", () =>
      vscode.commands.executeCommand("workbench.action.openSettings", `@ext:${extensionId}`),
    ),
    vscode.commands.registerCommand("ragls.getStarted", () =>
      vscode.commands.executeCommand("workbench.action.openWalkthrough", `${extensionId}#ragls.firstRun`, false),
    ),
    vscode.commands.registerCommand(OPEN_RESULT_COMMAND, run((result?: RagResult) => (result ? openResult(result, false) : Promise.resolve()))),
    vscode.commands.registerCommand("ragls.clearResults", () => results.clear()),
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
