// The ragls Results view: the last searches, each grouped by file with a preview per result, like
// VS Code's Search view. Clicking a result opens its range.
import * as path from "node:path";
import * as vscode from "vscode";
import { FileGroup, ResultEntry, ResultsModel, SearchRecord } from "../models/results";
import { RagResult } from "../protocol";

export const RESULTS_VIEW = "ragls.results";
export const OPEN_RESULT_COMMAND = "ragls.openResult";

type Node =
  | { kind: "search"; search: SearchRecord }
  | { kind: "file"; search: SearchRecord; group: FileGroup }
  | { kind: "entry"; search: SearchRecord; group: FileGroup; entry: ResultEntry };

export class ResultsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly model = new ResultsModel();
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;
  private readonly roots = new Map<number, Node>();

  constructor() {
    this.view = vscode.window.createTreeView(RESULTS_VIEW, { treeDataProvider: this, showCollapseAll: true });
    this.updateMessage();
  }

  /** Keeps a finished search at the top and shows it expanded. */
  add(query: string, results: RagResult[]): void {
    const search = this.model.add(query, results);
    this.refresh();
    const root = this.roots.get(search.id);
    if (root !== undefined && this.view.visible) {
      void this.view.reveal(root, { expand: 2, select: false, focus: false }).then(undefined, () => undefined);
    }
  }

  clear(): void {
    this.model.clear();
    this.refresh();
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "search") {
      const item = new vscode.TreeItem(node.search.query, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `search:${node.search.id}`;
      item.description = `${node.search.count} result${node.search.count === 1 ? "" : "s"} in ${node.search.files.length} file${node.search.files.length === 1 ? "" : "s"}`;
      item.iconPath = new vscode.ThemeIcon("search");
      item.contextValue = "search";
      return item;
    }
    if (node.kind === "file") {
      const item = new vscode.TreeItem(path.posix.basename(node.group.file), vscode.TreeItemCollapsibleState.Expanded);
      item.id = `file:${node.search.id}:${node.group.file}`;
      const uri = node.group.entries[0]?.result.uri;
      if (uri !== undefined) {
        item.resourceUri = vscode.Uri.parse(uri);
      }
      const directory = path.posix.dirname(node.group.file);
      item.description = `${directory === "." ? "" : directory}  ${node.group.entries.length}`;
      item.tooltip = node.group.file;
      return item;
    }
    const { entry } = node;
    const item = new vscode.TreeItem(entry.preview || entry.symbol || entry.result.id, vscode.TreeItemCollapsibleState.None);
    item.id = `entry:${node.search.id}:${entry.result.id}`;
    item.description = [entry.symbol, entry.lines && `:${entry.lines}`, entry.result.score.toFixed(4)].filter(Boolean).join(" ");
    item.tooltip = new vscode.MarkdownString().appendCodeblock(entry.result.content.slice(0, 2000), entry.result.metadata.language ?? "");
    item.command = { command: OPEN_RESULT_COMMAND, title: "Open Result", arguments: [entry.result] };
    return item;
  }

  getChildren(node?: Node): Node[] {
    if (node === undefined) {
      return this.model.all.map((search) => this.roots.get(search.id) ?? { kind: "search", search });
    }
    if (node.kind === "search") {
      return node.search.files.map((group) => ({ kind: "file", search: node.search, group }));
    }
    if (node.kind === "file") {
      return node.group.entries.map((entry) => ({ kind: "entry", search: node.search, group: node.group, entry }));
    }
    return [];
  }

  getParent(node: Node): Node | undefined {
    if (node.kind === "search") {
      return undefined;
    }
    const root = this.roots.get(node.search.id);
    return node.kind === "file" ? root : { kind: "file", search: node.search, group: node.group };
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }

  private refresh(): void {
    this.roots.clear();
    for (const search of this.model.all) {
      this.roots.set(search.id, { kind: "search", search });
    }
    this.updateMessage();
    this.changed.fire(undefined);
  }

  private updateMessage(): void {
    this.view.message =
      this.model.all.length === 0 ? "Searches made with “ragls: Search Workspace” stay here, grouped by file." : undefined;
  }
}
