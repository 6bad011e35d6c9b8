// Copy / Open Context Prompt: a grounded prompt for the selection or a typed question.
import { ContextPromptRequest, PromptFormat, RagConnection, RagResult } from "../protocol";

export interface ContextPrompt {
  prompt: string;
  results: RagResult[];
  /** One line for the user, e.g. "Context prompt for "auth" with 3 sources". */
  summary: string;
}

/** The selected text as a question (for "for Selection" commands), else undefined. */
export function questionFromSelection(selectedText: string | undefined): string | undefined {
  const text = selectedText?.trim();
  return text ? text : undefined;
}

/** What the question box shows: the selection offered (on one line, editable), never used unasked. */
export interface QuestionInput {
  value: string;
  prompt: string;
}

/** Input boxes hold one line; longer selections are cut so the box stays usable. */
export const MAX_PREFILL_CHARS = 500;

export function questionInput(selectedText: string | undefined): QuestionInput {
  const offered = (questionFromSelection(selectedText) ?? "").replace(/\s+/g, " ").slice(0, MAX_PREFILL_CHARS);
  return {
    value: offered,
    prompt: offered
      ? "The question to ground on this workspace: the selection is offered; edit it or press Enter"
      : "The question to ground on this workspace",
  };
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
