// The status-bar item: progress while indexing, then files and chunks; red when a run failed.
import * as vscode from "vscode";
import { ProgressValue, ServerState, StatusBarModel } from "../models/status";
import { FolderStatus } from "../protocol";

export class StatusBarView implements vscode.Disposable {
  private readonly model = new StatusBarModel();
  private readonly item = vscode.window.createStatusBarItem("ragls.status", vscode.StatusBarAlignment.Left, 10);
  private serverState: ServerState = "starting";

  constructor() {
    this.item.name = "ragls";
    this.item.command = "ragls.showStatus";
    this.render();
    this.item.show();
  }

  /** The server's state as last reported, for the menu behind the item. */
  get state(): ServerState {
    return this.serverState;
  }

  setServerState(state: ServerState, message?: string): void {
    this.serverState = state;
    this.model.setServerState(state, message);
    this.render();
  }

  /** Returns true when a run ended, so the caller can fetch fresh statuses. */
  progress(token: string, value: ProgressValue): boolean {
    const ended = this.model.progress(token, value);
    this.render();
    return ended;
  }

  setFolders(folders: FolderStatus[]): void {
    this.model.setFolders(folders);
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  private render(): void {
    const view = this.model.view();
    this.item.text = `$(${view.icon}) ${view.text}`;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.error ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }
}
