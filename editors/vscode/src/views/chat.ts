// The @ragls chat participant. The chat and language-model APIs arrived after VS Code 1.82 (our
// engines floor), so they are typed here by hand and looked up at run time.
import * as vscode from "vscode";
import { ServerController } from "../client";
import { answerChat, ChatModel, ChatOutput } from "../models/chat";
import { clientSettings } from "../models/settings";
import { openTarget } from "../models/search";
import { RagResult } from "../protocol";

interface LanguageModelChat {
  name: string;
  sendRequest(messages: unknown[], options?: object, token?: vscode.CancellationToken): Thenable<{ text: AsyncIterable<string> }>;
}

interface ChatRequest {
  prompt: string;
  model?: LanguageModelChat;
}

interface ChatResponseStream {
  markdown(value: string): void;
  progress(value: string): void;
  reference(value: vscode.Uri | vscode.Location): void;
}

type ChatHandler = (
  request: ChatRequest,
  context: unknown,
  stream: ChatResponseStream,
  token: vscode.CancellationToken,
) => Promise<unknown>;

interface ChatApis {
  chat: { createChatParticipant(id: string, handler: ChatHandler): vscode.Disposable & { iconPath?: unknown } };
  lm?: { selectChatModels(selector?: object): Thenable<LanguageModelChat[]> };
  LanguageModelChatMessage: { User(content: string): unknown };
}

export const PARTICIPANT_ID = "ragls.chat";

/** Registers @ragls where this VS Code has the chat API; otherwise logs why it is absent. */
export function registerChatParticipant(
  server: ServerController,
  extensionUri: vscode.Uri,
  output: vscode.OutputChannel,
): vscode.Disposable | undefined {
  const apis = vscode as unknown as Partial<ChatApis>;
  if (typeof apis.chat?.createChatParticipant !== "function" || apis.LanguageModelChatMessage === undefined) {
    output.appendLine("This VS Code has no chat API (it needs 1.90 or later), so @ragls is not available.");
    return undefined;
  }
  const participant = apis.chat.createChatParticipant(PARTICIPANT_ID, (request, _context, stream, token) =>
    handle(server, apis as ChatApis, request, stream, token),
  );
  participant.iconPath = vscode.Uri.joinPath(extensionUri, "media", "icon.png");
  return participant;
}

async function handle(
  server: ServerController,
  apis: ChatApis,
  request: ChatRequest,
  stream: ChatResponseStream,
  token: vscode.CancellationToken,
): Promise<unknown> {
  const settings = clientSettings((key) => vscode.workspace.getConfiguration("ragls").get(key));
  let connection;
  try {
    connection = server.connection;
  } catch (error) {
    stream.markdown(error instanceof Error ? error.message : String(error));
    return {};
  }
  const model = await chooseModel(apis, request);
  const chatModel: ChatModel | undefined =
    model === undefined
      ? undefined
      : {
          name: model.name,
          ask: async (prompt) =>
            (await model.sendRequest([apis.LanguageModelChatMessage.User(prompt)], {}, token)).text,
        };
  const result = await answerChat(connection, request.prompt, chatModel, toOutput(stream), { topK: settings.promptTopK });
  return { metadata: { sources: result.sources.map((source) => source.id) } };
}

async function chooseModel(apis: ChatApis, request: ChatRequest): Promise<LanguageModelChat | undefined> {
  if (request.model !== undefined) {
    return request.model;
  }
  try {
    return (await apis.lm?.selectChatModels({}))?.[0];
  } catch {
    return undefined;
  }
}

function toOutput(stream: ChatResponseStream): ChatOutput {
  return {
    progress: (message) => stream.progress(message),
    markdown: (text) => stream.markdown(text),
    reference: (result: RagResult) => {
      const target = openTarget(result);
      if (target !== undefined) {
        const { start, end } = target.range;
        const range = new vscode.Range(start.line, start.character, end.line, end.character);
        stream.reference(new vscode.Location(vscode.Uri.parse(target.uri), range));
      }
    },
  };
}
