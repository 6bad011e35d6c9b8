// @ragls in chat: ground the question on the workspace, ask the user's chat model, cite the sources.
import { PromptFormat, RagConnection, RagResult } from "../protocol";
import { buildContextPrompt } from "./contextPrompt";
import { errorMessage } from "./search";

/** The user's chat model, reduced to what we need: send a prompt, read the answer as it streams. */
export interface ChatModel {
  name: string;
  ask(prompt: string): Promise<AsyncIterable<string>>;
}

/** Where the answer goes (a ChatResponseStream, behind a thin wrapper). */
export interface ChatOutput {
  progress(message: string): void;
  markdown(text: string): void;
  reference(result: RagResult): void;
}

export interface ChatAnswer {
  sources: RagResult[];
  answered: boolean;
}

const FORMAT: PromptFormat = "fenced";

export const NO_MODEL_MESSAGE =
  "No chat model is available in this VS Code, so @ragls cannot write an answer. " +
  "The workspace sources for your question are listed below; **ragls: Copy Context Prompt** " +
  "copies the grounded prompt for the assistant you use.";

export const USAGE_MESSAGE = "Ask @ragls a question about this workspace, e.g. `@ragls how are requests authenticated?`";

/** Answers one chat request; never throws (errors are written to the output). */
export async function answerChat(
  connection: RagConnection,
  question: string,
  model: ChatModel | undefined,
  output: ChatOutput,
  options: { topK: number; folder?: string },
): Promise<ChatAnswer> {
  if (question.trim().length === 0) {
    output.markdown(USAGE_MESSAGE);
    return { sources: [], answered: false };
  }
  output.progress("Searching the workspace index…");
  let sources: RagResult[];
  let prompt: string;
  try {
    ({ prompt, results: sources } = await buildContextPrompt(connection, question, { ...options, format: FORMAT }));
  } catch (error) {
    output.markdown(`ragls could not search the workspace: ${errorMessage(error)}`);
    return { sources: [], answered: false };
  }
  const answered = model === undefined ? noModel(output) : await streamAnswer(model, prompt, output);
  citeSources(sources, output);
  return { sources, answered };
}

function noModel(output: ChatOutput): boolean {
  output.markdown(NO_MODEL_MESSAGE);
  return false;
}

async function streamAnswer(model: ChatModel, prompt: string, output: ChatOutput): Promise<boolean> {
  output.progress(`Asking ${model.name}…`);
  try {
    for await (const fragment of await model.ask(prompt)) {
      output.markdown(fragment);
    }
    return true;
  } catch (error) {
    output.markdown(`\n\nThe chat model failed: ${errorMessage(error)}`);
    return false;
  }
}

function citeSources(sources: RagResult[], output: ChatOutput): void {
  const seen = new Set<string>();
  for (const source of sources) {
    if (!seen.has(source.id)) {
      seen.add(source.id);
      output.reference(source);
    }
  }
}
