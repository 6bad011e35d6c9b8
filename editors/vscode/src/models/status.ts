// Show Status and the status-bar item: what the index is doing, from $/progress and rag/status.
import { FolderStatus, RagConnection, SharedIndexStatus, StatusRequest } from "../protocol";

/** The value of a `$/progress` notification for work-done progress (LSP WorkDoneProgress*). */
export interface ProgressValue {
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  percentage?: number;
}

/** What the status-bar item shows; `icon` is a codicon name. */
export interface StatusBarView {
  text: string;
  tooltip: string;
  icon: string;
  error: boolean;
}

export type ServerState = "starting" | "running" | "stopped" | "failed";

/** Progress runs in flight, keyed by token, with the files done and in total, or the phase without a count. */
interface Run {
  title: string;
  done?: number;
  total?: number;
  path?: string;
  step?: string;
}

/** The phases a run reports without a count (PROTOCOL.md's progress messages), as the status bar says them. */
const STEPS: [prefix: string, step: string][] = [
  ["loading the stored index", "loading"],
  ["walking the folder", "walking"],
  ["building the search index", "building the index"],
  ["saving the index", "saving"],
];

/** Folds server state, progress and statuses into the status-bar item's view. */
export class StatusBarModel {
  private server: { state: ServerState; message?: string } = { state: "starting" };
  private runs = new Map<string, Run>();
  private folders: FolderStatus[] = [];

  setServerState(state: ServerState, message?: string): void {
    this.server = { state, message };
    if (state !== "running") {
      this.runs.clear();
    }
  }

  /** Feed one `$/progress` value; true when the run ended (refresh statuses then). */
  progress(token: string, value: ProgressValue): boolean {
    if (value.kind === "end") {
      this.runs.delete(token);
      return true;
    }
    const run = this.runs.get(token) ?? { title: value.title ?? "Indexing" };
    if (value.title !== undefined) {
      run.title = value.title;
    }
    const counted = parseProgressMessage(value.message);
    if (counted.total !== undefined) {
      Object.assign(run, counted, { step: undefined });
    } else if (value.message) {
      run.step = STEPS.find(([prefix]) => value.message?.startsWith(prefix))?.[1] ?? value.message;
    }
    this.runs.set(token, run);
    return false;
  }

  setFolders(folders: FolderStatus[]): void {
    this.folders = folders;
  }

  view(): StatusBarView {
    if (this.server.state === "failed") {
      return { text: "ragls", icon: "error", error: true, tooltip: this.server.message ?? "ragls: the server failed" };
    }
    if (this.server.state === "starting") {
      return { text: "ragls", icon: "loading~spin", error: false, tooltip: "ragls: starting the server" };
    }
    if (this.server.state === "stopped") {
      return { text: "ragls", icon: "debug-stop", error: false, tooltip: "ragls: the server is stopped" };
    }
    if (this.runs.size > 0) {
      return this.indexingView();
    }
    return this.idleView();
  }

  private indexingView(): StatusBarView {
    const runs = [...this.runs.values()];
    const stepping = runs.find((run) => run.step !== undefined);
    const known = runs.filter((run) => run.total !== undefined);
    const done = known.reduce((sum, run) => sum + (run.done ?? 0), 0);
    const total = known.reduce((sum, run) => sum + (run.total ?? 0), 0);
    const counts = known.length > 0 ? `ragls ${done}/${total}` : "ragls indexing";
    const text = stepping?.step !== undefined ? `ragls ${stepping.step}` : counts;
    const tooltip = runs.map((run) => `${run.title}${run.step ? `: ${run.step}` : run.path ? `: ${run.path}` : ""}`).join("\n");
    return { text, icon: "sync~spin", error: false, tooltip };
  }

  private idleView(): StatusBarView {
    const failed = this.folders.filter((folder) => folder.state === "failed" || folder.error);
    if (failed.length > 0) {
      const tooltip = failed.map((folder) => `${folderName(folder.folder)}: ${folder.error ?? "failed"}`).join("\n");
      return { text: "ragls: index failed", icon: "error", error: true, tooltip: `${tooltip}\nClick for status.` };
    }
    if (this.folders.length === 0) {
      return { text: "ragls", icon: "database", error: false, tooltip: "ragls: no folder indexed yet" };
    }
    const indexing = this.folders.some((folder) => folder.state === "indexing");
    if (indexing && this.folders.every((folder) => folder.generation < 1)) {
      // The first run is scheduled but has not reported progress yet: no counts to show.
      return { text: "ragls indexing", icon: "sync~spin", error: false, tooltip: "ragls: the first index is running" };
    }
    const files = this.folders.reduce((sum, folder) => sum + folder.files, 0);
    const chunks = this.folders.reduce((sum, folder) => sum + folder.chunks, 0);
    return {
      text: `ragls ${files} files · ${chunks} chunks`,
      icon: indexing ? "sync~spin" : "database",
      error: false,
      tooltip: describeFolders(this.folders).join("\n") + "\nClick for status.",
    };
  }
}

/** `"12/40 src/app.py"` (PROTOCOL.md's progress message) as its parts. */
export function parseProgressMessage(message: string | undefined): { done?: number; total?: number; path?: string } {
  const match = /^(\d+)\/(\d+)(?:\s+(.*))?$/.exec(message ?? "");
  if (match === null) {
    return {};
  }
  return { done: Number(match[1]), total: Number(match[2]), path: match[3] };
}

export async function fetchStatus(connection: RagConnection, folder?: string): Promise<FolderStatus[]> {
  return (await connection.sendRequest(StatusRequest, { folder })).folders;
}

/** Human lines for Show Status, one block per folder. */
export function describeFolders(folders: FolderStatus[]): string[] {
  if (folders.length === 0) {
    return ["No workspace folder is open, so nothing is indexed."];
  }
  return folders.flatMap(describeFolder);
}

function describeFolder(folder: FolderStatus): string[] {
  const lines = [
    `${folderName(folder.folder)} — ${folder.state}, generation ${folder.generation}`,
    `  ${folder.files} files, ${folder.chunks} chunks, ${folder.documents} added documents`,
  ];
  if (folder.lastIndexedAt) {
    lines.push(`  last indexed ${folder.lastIndexedAt}`);
  }
  const skipped = Object.entries(folder.skipped ?? {}).filter(([, count]) => count > 0);
  if (skipped.length > 0) {
    lines.push(`  skipped: ${skipped.map(([reason, count]) => `${count} ${reason}`).join(", ")}`);
  }
  if (folder.vectors) {
    const { model, embedded, total } = folder.vectors;
    lines.push(`  vectors: ${embedded}/${total} embedded with ${model}`);
  }
  if (folder.sharedIndex) {
    lines.push(describeShared(folder.sharedIndex));
  }
  if (folder.error) {
    lines.push(`  error: ${folder.error}`);
  }
  return lines;
}

/** The shared index a folder started from: its commit, its files in use, the files indexed here. */
function describeShared(shared: SharedIndexStatus): string {
  const where = `  shared index ${shared.name} (${shared.source})`;
  if (shared.commit === null) {
    return `${where}: not used (${shared.error ?? "unknown"}); every file is indexed here`;
  }
  const lost = shared.error ? `; not answering now (${shared.error})` : "";
  const counts = `${shared.files} files from it, ${shared.localFiles} indexed here`;
  return `${where} at commit ${shared.commit.slice(0, 12)}, generation ${shared.generation}: ${counts}${lost}`;
}

/** The last path segment of a folder URI, decoded. */
export function folderName(uri: string): string {
  const trimmed = uri.replace(/\/+$/, "");
  const name = trimmed.slice(trimmed.lastIndexOf("/") + 1);
  try {
    return decodeURIComponent(name) || uri;
  } catch {
    return name || uri;
  }
}
