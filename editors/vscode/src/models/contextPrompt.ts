// Copy / Open Context Prompt: a grounded prompt for the selection or a typed question.
import { ContextPromptRequest, PromptFormat, RagConnection, RagResult } from "../protocol";

export interface ContextPrompt {
  prompt: string;
  results: RagResult[];
  /** One line for the user, e.g. "Context prompt for "auth" with 3 sources". */
  summary: string;
}

/** The question to ask: the selected text when there is some, else undefined (ask the user). */
export function questionFromSelection(selectedText: string | undefined): string | undefined {
  const text = selectedText?.trim();
  return text ? text : undefined;
}

export async function buildContextPrompt(
  connection: RagConnection,
  question: string,
  options: { format: PromptFormat; topK: number; folder?: string },
): Promise<ContextPrompt> {
  const answer = await connection.sendRequest(ContextPromptRequest, {
    query: question,
    topK: options.topK,
    format: options.format,
    folder: options.folder,
  });
  return { prompt: answer.prompt, results: answer.results, summary: summarize(question, answer.results) };
}

function summarize(question: string, results: RagResult[]): string {
  const shown = question.length > 40 ? `${question.slice(0, 39)}…` : question;
  if (results.length === 0) {
    return `No workspace context found for "${shown}": the prompt is the question alone.`;
  }
  const files = new Set(results.map((result) => result.metadata.file ?? result.id));
  const sources = `${results.length} source${results.length === 1 ? "" : "s"}`;
  return `Context prompt for "${shown}" with ${sources} from ${files.size} file${files.size === 1 ? "" : "s"}.`;
}
