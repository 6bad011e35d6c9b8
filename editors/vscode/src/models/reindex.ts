// Reindex: rebuild the index now (incremental by default, full on request) and say how it went.
import { FolderStatus, RagConnection, ReindexRequest } from "../protocol";
import { folderName } from "./status";

export interface ReindexOutcome {
  folders: FolderStatus[];
  /** A one-line summary for a notification. */
  message: string;
  failed: boolean;
}

export async function reindexWorkspace(
  connection: RagConnection,
  options: { full: boolean; folder?: string },
): Promise<ReindexOutcome> {
  const answer = await connection.sendRequest(ReindexRequest, { full: options.full, folder: options.folder });
  const failed = answer.folders.filter((folder) => folder.state === "failed" || folder.error !== null);
  const kind = options.full ? "Full reindex" : "Reindex";
  if (failed.length > 0) {
    const reasons = failed.map((folder) => `${folderName(folder.folder)}: ${folder.error ?? "failed"}`);
    return { folders: answer.folders, failed: true, message: `${kind} failed. ${reasons.join("; ")}` };
  }
  const files = answer.folders.reduce((sum, folder) => sum + folder.files, 0);
  const chunks = answer.folders.reduce((sum, folder) => sum + folder.chunks, 0);
  const names = answer.folders.map((folder) => folderName(folder.folder)).join(", ");
  return {
    folders: answer.folders,
    failed: false,
    message: `${kind} of ${names || "the workspace"} done: ${files} files, ${chunks} chunks.`,
  };
}
