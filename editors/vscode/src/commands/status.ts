// ragls: Show Status — every folder's index, in a dialog and in the output channel.
import * as vscode from "vscode";
import { ServerController } from "../client";
import { describeFolders, fetchStatus } from "../models/status";
import { FolderStatus } from "../protocol";

export async function showStatus(
  server: ServerController,
  output: vscode.OutputChannel,
  onStatus: (folders: FolderStatus[]) => void,
): Promise<void> {
  const folders = await fetchStatus(server.connection);
  onStatus(folders);
  const lines = describeFolders(folders);
  output.appendLine(["ragls status:", ...lines].join("\n"));
  const failed = folders.some((folder) => folder.state === "failed" || folder.error);
  const title = failed ? "ragls: an index run failed" : "ragls: index status";
  const choice = await vscode.window.showInformationMessage(title, { modal: true, detail: lines.join("\n") }, "Reindex", "Show Log");
  if (choice === "Reindex") {
    await vscode.commands.executeCommand("ragls.reindexWorkspace");
  } else if (choice === "Show Log") {
    output.show();
  }
}
