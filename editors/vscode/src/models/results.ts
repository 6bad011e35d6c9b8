// The Results view's model: the last searches, each grouped by file, like VS Code's Search view.
import { RagResult } from "../protocol";
import { firstLine } from "./search";

/** One result under its file: the lines and a one-line preview. */
export interface ResultEntry {
  result: RagResult;
  /** `38-39` (1-based, inclusive), or empty for added documents. */
  lines: string;
  preview: string;
  symbol?: string;
}

export interface FileGroup {
  /** The workspace-relative path, or the document id for added documents. */
  file: string;
  entries: ResultEntry[];
}

export interface SearchRecord {
  query: string;
  /** Distinguishes two searches for the same words. */
  id: number;
  files: FileGroup[];
  count: number;
}

export const MAX_SEARCHES = 10;

/** Keeps the newest `max` searches, newest first; a repeated query moves to the top with its new results. */
export class ResultsModel {
  private searches: SearchRecord[] = [];
  private nextId = 1;

  constructor(private readonly max = MAX_SEARCHES) {}

  get all(): readonly SearchRecord[] {
    return this.searches;
  }

  add(query: string, results: RagResult[]): SearchRecord {
    const record: SearchRecord = { query, id: this.nextId++, files: groupByFile(results), count: results.length };
    this.searches = [record, ...this.searches.filter((search) => search.query !== query)].slice(0, this.max);
    return record;
  }

  remove(id: number): void {
    this.searches = this.searches.filter((search) => search.id !== id);
  }

  clear(): void {
    this.searches = [];
  }
}

/** Files in the order of their best result; results in rank order within a file. */
export function groupByFile(results: RagResult[]): FileGroup[] {
  const groups = new Map<string, FileGroup>();
  for (const result of results) {
    const file = result.metadata.file ?? result.id;
    const group = groups.get(file) ?? { file, entries: [] };
    group.entries.push(toEntry(result));
    groups.set(file, group);
  }
  return [...groups.values()];
}

function toEntry(result: RagResult): ResultEntry {
  const { startLine, endLine, symbol } = result.metadata;
  const lines = startLine !== undefined ? `${startLine}-${endLine ?? startLine}` : "";
  return { result, lines, preview: firstLine(result.content), symbol };
}
