// ragls: Search Workspace — a live quick pick over rag/search with a preview of the active chunk.
import * as vscode from "vscode";
import { ServerController } from "../client";
import { clientSettings } from "../models/settings";
import { openTarget, SearchItem, SearchSession, SearchState } from "../models/search";
import { RagResult } from "../protocol";

const TITLE = "ragls: Search Workspace";
const PLACEHOLDER = "Describe what you are looking for (searches as you type)";

interface Row extends vscode.QuickPickItem {
  item: SearchItem;
}

/** Where a finished search goes: the Results view keeps it. */
export type SearchRecorder = (query: string, results: RagResult[]) => void;

/** Shows the picker (with `initialQuery` searched at once, e.g. the selection); resolves when it closes. */
export function searchWorkspace(server: ServerController, record: SearchRecorder, initialQuery?: string): Promise<void> {
  const connection = server.connection;
  const settings = clientSettings((key) => vscode.workspace.getConfiguration("ragls").get(key));
  const picker = vscode.window.createQuickPick<Row>();
  picker.title = TITLE;
  picker.placeholder = PLACEHOLDER;
  picker.matchOnDescription = false;
  picker.matchOnDetail = false;
  const session = new SearchSession(
    connection,
    { topK: settings.searchTopK, debounceMs: settings.searchDebounceMs },
    (state) => render(picker, state),
  );
  const original = vscode.window.activeTextEditor;
  let accepted = false;
  picker.onDidChangeValue((value) => session.setQuery(value));
  let previewing: Promise<void> = Promise.resolve();
  let previewed = false;
  picker.onDidChangeActive((rows) => {
    previewed ||= rows[0] !== undefined;
    previewing = preview(rows[0]?.item.result).catch(() => undefined);
  });
  picker.onDidAccept(async () => {
    await session.whenSettled();
    await previewing; // the accepted row is opened last, so its cursor and selection stay
    const row = picker.activeItems[0] ?? picker.items[0];
    if (row !== undefined) {
      accepted = true;
      picker.hide();
      await openResult(row.item.result, false);
    }
  });
  const closed = new Promise<void>((resolve) => picker.onDidHide(() => resolve()));
  picker.onDidHide(() => {
    const { query, items } = session.current;
    if (query.length > 0 && items.length > 0) {
      record(query, items.map((item) => item.result));
    }
    session.dispose();
    picker.dispose();
    // Back to where the user was only if a preview moved them: an empty search leaves the editor alone.
    if (!accepted && previewed && original !== undefined) {
      void vscode.window.showTextDocument(original.document, { viewColumn: original.viewColumn, selection: original.selection });
    }
  });
  picker.show();
  if (initialQuery !== undefined && initialQuery.trim().length > 0) {
    picker.value = initialQuery;
    session.setQuery(initialQuery);
  }
  return closed;
}

function render(picker: vscode.QuickPick<Row>, state: SearchState): void {
  picker.busy = state.busy;
  // alwaysShow: the server ranks by meaning, so VS Code's own label filter must not hide rows.
  picker.items = state.items.map((item) => ({
    label: `$(symbol-${iconOf(item.result)}) ${item.label}`,
    description: item.description,
    detail: item.detail,
    alwaysShow: true,
    item,
  }));
  // The title carries the state: the placeholder is hidden once the user has typed.
  if (state.error !== undefined) {
    picker.title = `${TITLE}: search failed: ${state.error}`;
  } else if (!state.complete) {
    picker.title = `${TITLE} (the first index is still being built; results may be incomplete)`;
  } else {
    picker.title = TITLE;
  }
}

function iconOf(result: RagResult): string {
  const kind = result.metadata.symbolKind;
  const known = ["class", "method", "function", "interface", "struct", "enum", "module", "namespace", "constant"];
  return kind !== undefined && known.includes(kind) ? kind : "file";
}

async function preview(result: RagResult | undefined): Promise<void> {
  if (result !== undefined) {
    await openResult(result, true);
  }
}

/** Opens a result with its range selected and the cursor on its first line. */
export async function openResult(result: RagResult, asPreview: boolean): Promise<void> {
  const target = openTarget(result);
  if (target === undefined) {
    const document = await vscode.workspace.openTextDocument({ content: result.content });
    await vscode.window.showTextDocument(document, { preview: asPreview, preserveFocus: asPreview });
    return;
  }
  const { start, end } = target.range;
  const selection = new vscode.Selection(end.line, end.character, start.line, start.character);
  // Not through showTextDocument's `selection` option: that takes a Range and puts the cursor on the last
  // line, and a preview that resolved late could leave it there after the accepted row had set it.
  const editor = await vscode.window.showTextDocument(vscode.Uri.parse(target.uri), {
    preview: asPreview,
    preserveFocus: asPreview,
  });
  editor.selection = selection;
  editor.revealRange(selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}
