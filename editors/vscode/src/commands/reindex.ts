// ragls: Reindex and ragls: Reindex (Full Rebuild).
import * as vscode from "vscode";
import { ServerController } from "../client";
import { reindexWorkspace } from "../models/reindex";
import { FolderStatus } from "../protocol";

export async function reindex(server: ServerController, full: boolean, onDone: (folders: FolderStatus[]) => void): Promise<void> {
  const connection = server.connection;
  const outcome = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: full ? "ragls: full reindex" : "ragls: reindexing" },
    () => reindexWorkspace(connection, { full }),
  );
  onDone(outcome.folders);
  if (outcome.failed) {
    void vscode.window.showErrorMessage(outcome.message);
  } else {
    void vscode.window.showInformationMessage(outcome.message);
  }
}
