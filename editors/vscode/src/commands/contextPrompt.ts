// ragls: Copy Context Prompt / Open Context Prompt — for a question typed or offered from the selection,
// and the "for Selection" variants of the editor's context menu, which use the selection as it is.
import * as vscode from "vscode";
import { ServerController } from "../client";
import { buildContextPrompt, ContextPrompt, questionFromSelection, questionInput } from "../models/contextPrompt";
import { clientSettings } from "../models/settings";

type Source = "ask" | "selection";

export async function copyContextPrompt(server: ServerController, source: Source = "ask"): Promise<void> {
  const built = await promptForQuestion(server, source);
  if (built !== undefined) {
    await vscode.env.clipboard.writeText(built.prompt);
    void vscode.window.showInformationMessage(`Copied. ${built.summary}`);
  }
}

export async function openContextPrompt(server: ServerController, source: Source = "ask"): Promise<void> {
  const built = await promptForQuestion(server, source);
  if (built !== undefined) {
    const document = await vscode.workspace.openTextDocument({ content: built.prompt, language: "markdown" });
    await vscode.window.showTextDocument(document, { preview: false });
    vscode.window.setStatusBarMessage(built.summary, 5000);
  }
}

/** The selected text of the active editor, if any. */
export function selectedText(): string | undefined {
  const editor = vscode.window.activeTextEditor;
  return editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : undefined;
}

async function promptForQuestion(server: ServerController, source: Source): Promise<ContextPrompt | undefined> {
  const connection = server.connection;
  const question = source === "selection" ? questionFromSelection(selectedText()) ?? (await ask()) : await ask();
  if (question === undefined || question.trim().length === 0) {
    return undefined;
  }
  const settings = clientSettings((key) => vscode.workspace.getConfiguration("ragls").get(key));
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "ragls: building the context prompt" },
    () => buildContextPrompt(connection, question, { format: settings.promptFormat, topK: settings.promptTopK }),
  );
}

/** The question box, with the selection offered (selected, so typing replaces it). */
async function ask(): Promise<string | undefined> {
  const input = questionInput(selectedText());
  return vscode.window.showInputBox({
    title: "ragls: Context Prompt",
    prompt: input.prompt,
    value: input.value,
    valueSelection: [0, input.value.length],
    placeHolder: "e.g. How are bearer tokens checked?",
    ignoreFocusOut: true,
  });
}
