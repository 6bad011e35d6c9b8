// Search Workspace: live, debounced rag/search and the quick-pick rows it shows.
import { CancellationTokenSource } from "vscode-jsonrpc";
import { RagConnection, RagResult, Range, SearchRequest } from "../protocol";

/** One quick-pick row: symbol, `file:start-end` and score, and the chunk's first line. */
export interface SearchItem {
  label: string;
  description: string;
  detail: string;
  result: RagResult;
}

/** What the quick pick shows now. */
export interface SearchState {
  query: string;
  items: SearchItem[];
  /** A request is in flight or waiting for the debounce. */
  busy: boolean;
  /** False while the first index of a folder has not finished. */
  complete: boolean;
  error?: string;
}

export interface SearchOptions {
  topK: number;
  debounceMs: number;
  folder?: string;
}

/** Where Enter goes: the file and the chunk's 0-based range. */
export interface OpenTarget {
  uri: string;
  range: Range;
}

export function toSearchItem(result: RagResult): SearchItem {
  const { metadata } = result;
  const where = metadata.file ?? result.id;
  const lines = metadata.startLine !== undefined ? `:${metadata.startLine}-${metadata.endLine ?? metadata.startLine}` : "";
  return {
    label: metadata.symbol ?? metadata.file ?? result.id,
    description: `${where}${lines}  ${result.score.toFixed(4)}`,
    detail: firstLine(result.content),
    result,
  };
}

/** The file and range to open, or undefined for added documents (they have no file). */
export function openTarget(result: RagResult): OpenTarget | undefined {
  return result.uri !== undefined && result.range !== undefined ? { uri: result.uri, range: result.range } : undefined;
}

export function firstLine(content: string): string {
  const line = content.split(/\r?\n/).find((text) => text.trim().length > 0) ?? "";
  return line.trim();
}

/**
 * Runs rag/search for the latest text only: each keystroke restarts the debounce, a newer query
 * cancels the older request, and answers to stale queries are dropped.
 */
export class SearchSession {
  private state: SearchState = { query: "", items: [], busy: false, complete: true };
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: CancellationTokenSource | undefined;
  private sequence = 0;
  private settled: Promise<void> = Promise.resolve();

  constructor(
    private readonly connection: RagConnection,
    private readonly options: SearchOptions,
    private readonly onChange: (state: SearchState) => void,
  ) {}

  get current(): SearchState {
    return this.state;
  }

  /** The user typed: search after the debounce (an empty query clears the list at once). */
  setQuery(text: string): void {
    const query = text.trim();
    const ticket = ++this.sequence;
    this.cancelPending();
    if (query.length === 0) {
      this.update({ query, items: [], busy: false, complete: true });
      return;
    }
    this.update({ ...this.state, query, busy: true, error: undefined });
    this.settled = new Promise((resolve) => {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.run(query, ticket).finally(resolve);
      }, this.options.debounceMs);
    });
  }

  /** Resolves when the latest query has been answered (for tests and for Enter before results). */
  whenSettled(): Promise<void> {
    return this.settled;
  }

  dispose(): void {
    this.sequence++;
    this.cancelPending();
  }

  private async run(query: string, ticket: number): Promise<void> {
    const source = new CancellationTokenSource();
    this.inFlight = source;
    try {
      const answer = await this.connection.sendRequest(
        SearchRequest,
        { query, topK: this.options.topK, folder: this.options.folder },
        source.token,
      );
      if (ticket === this.sequence) {
        this.update({ query, items: answer.results.map(toSearchItem), busy: false, complete: answer.complete });
      }
    } catch (error) {
      if (ticket === this.sequence) {
        this.update({ query, items: [], busy: false, complete: true, error: errorMessage(error) });
      }
    } finally {
      source.dispose();
      if (this.inFlight === source) {
        this.inFlight = undefined;
      }
    }
  }

  private cancelPending(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.inFlight?.cancel();
    this.inFlight = undefined;
  }

  private update(state: SearchState): void {
    this.state = state;
    this.onChange(state);
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
