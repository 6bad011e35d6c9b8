// ragls: Show Status (and the status-bar item) — a menu whose title is the status; nothing runs on a stray Enter
// but a search.
import * as vscode from "vscode";
import { ServerController } from "../client";
import { describeFolders, fetchStatus, ServerState } from "../models/status";
import { statusMenu, StatusMenuItem } from "../models/statusMenu";
import { FolderStatus } from "../protocol";

interface Row extends vscode.QuickPickItem {
  item: StatusMenuItem;
}

export async function showStatus(
  server: ServerController,
  output: vscode.OutputChannel,
  serverState: () => ServerState,
  onStatus: (folders: FolderStatus[]) => void,
): Promise<void> {
  let folders: FolderStatus[] | undefined;
  const state = serverState();
  if (state === "running") {
    folders = await fetchStatus(server.connection);
    onStatus(folders);
    output.appendLine(["ragls status:", ...describeFolders(folders)].join("\n"));
  }
  const menu = statusMenu(folders, state);
  const picked = await vscode.window.showQuickPick<Row>(
    menu.items.map((item) => ({ label: item.label, description: item.description, item })),
    { title: menu.title, placeHolder: "What should ragls do?" },
  );
  if (picked !== undefined) {
    await vscode.commands.executeCommand(picked.item.command);
  }
}
