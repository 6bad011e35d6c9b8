// The menu behind the status-bar item: the status as its title, then what one can do from there.
import { FolderStatus } from "../protocol";
import { folderName, ServerState } from "./status";

/** One row of the menu; `command` is the extension command it runs. */
export interface StatusMenuItem {
  label: string;
  description?: string;
  command: string;
}

export interface StatusMenu {
  title: string;
  items: StatusMenuItem[];
}

/** The title: each folder's state and counts, or the server's state when it is not running. */
export function statusTitle(folders: FolderStatus[] | undefined, server: ServerState): string {
  if (server !== "running" || folders === undefined) {
    return `ragls: the server is ${server === "failed" ? "not running (failed)" : server}`;
  }
  if (folders.length === 0) {
    return "ragls: no workspace folder is open";
  }
  const parts = folders.map((folder) => {
    const failed = folder.state === "failed" || folder.error;
    const state = failed ? "failed" : folder.state;
    return `${folderName(folder.folder)}: ${state}, ${folder.files} files, ${folder.chunks} chunks`;
  });
  return `ragls: ${parts.join("; ")}`;
}

/** Search first: Enter on the menu never starts a reindex. Restart leads when the server is down. */
export function statusMenu(folders: FolderStatus[] | undefined, server: ServerState): StatusMenu {
  const items: StatusMenuItem[] = [
    { label: "$(search) Search Workspace", command: "ragls.searchWorkspace" },
    { label: "$(sync) Reindex", description: "changed files", command: "ragls.reindexWorkspace" },
    { label: "$(refresh) Reindex (Full Rebuild)", description: "every file", command: "ragls.reindexWorkspaceFull" },
    { label: "$(output) Show Server Log", command: "ragls.showOutput" },
    { label: "$(gear) Open Settings", command: "ragls.openSettings" },
  ];
  if (server !== "running") {
    items.unshift({ label: "$(debug-restart) Restart Server", command: "ragls.restartServer" });
  }
  return { title: statusTitle(folders, server), items };
}
