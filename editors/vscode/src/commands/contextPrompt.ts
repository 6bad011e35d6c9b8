// ragls: Copy Context Prompt / Open Context Prompt — for the selection or a typed question.
import * as vscode from "vscode";
import { ServerController } from "../client";
import { buildContextPrompt, ContextPrompt, questionFromSelection } from "../models/contextPrompt";
import { clientSettings } from "../models/settings";

export async function copyContextPrompt(server: ServerController): Promise<void> {
  const built = await promptForQuestion(server);
  if (built !== undefined) {
    await vscode.env.clipboard.writeText(built.prompt);
    void vscode.window.showInformationMessage(`Copied. ${built.summary}`);
  }
}

export async function openContextPrompt(server: ServerController): Promise<void> {
  const built = await promptForQuestion(server);
  if (built !== undefined) {
    const document = await vscode.workspace.openTextDocument({ content: built.prompt, language: "markdown" });
    await vscode.window.showTextDocument(document, { preview: false });
    vscode.window.setStatusBarMessage(built.summary, 5000);
  }
}

async function promptForQuestion(server: ServerController): Promise<ContextPrompt | undefined> {
  const connection = server.connection;
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : undefined;
  const question =
    questionFromSelection(selected) ??
    (await vscode.window.showInputBox({
      title: "ragls: Context Prompt",
      prompt: "The question to ground on this workspace (or select text first)",
      ignoreFocusOut: true,
    }));
  if (question === undefined || question.trim().length === 0) {
    return undefined;
  }
  const settings = clientSettings((key) => vscode.workspace.getConfiguration("ragls").get(key));
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "ragls: building the context prompt" },
    () => buildContextPrompt(connection, question, { format: settings.promptFormat, topK: settings.promptTopK }),
  );
}
