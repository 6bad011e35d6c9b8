// The ragls wire protocol (../../shared/PROTOCOL.md, v1) as vscode-jsonrpc request types.
// This file imports vscode-jsonrpc only, so every model that uses it runs in plain Node.
// Keep it in step with PROTOCOL.md: a tidy test compares the method and command names.
import { CancellationToken, RequestType } from "vscode-jsonrpc";

/** Anything that sends typed requests: a LanguageClient, or a vscode-jsonrpc MessageConnection. */
export interface RagConnection {
  sendRequest<P, R, E>(type: RequestType<P, R, E>, params: P, token?: CancellationToken): Promise<R>;
}

// ---------------------------------------------------------------- names

export const METHOD_SEARCH = "rag/search";
export const METHOD_CONTEXT_PROMPT = "rag/contextPrompt";
export const METHOD_STATUS = "rag/status";
export const METHOD_REINDEX = "rag/reindex";
export const METHOD_ADD_DOCUMENT = "rag/addDocument";
export const METHOD_REMOVE_DOCUMENT = "rag/removeDocument";
export const METHOD_GET_DOCUMENT = "rag/getDocument";
export const METHOD_LIST_DOCUMENTS = "rag/listDocuments";
export const METHOD_CLEAR = "rag/clear";

/** Every rag/* request of PROTOCOL.md, in its order. */
export const METHODS = [
  METHOD_SEARCH,
  METHOD_CONTEXT_PROMPT,
  METHOD_STATUS,
  METHOD_REINDEX,
  METHOD_ADD_DOCUMENT,
  METHOD_REMOVE_DOCUMENT,
  METHOD_GET_DOCUMENT,
  METHOD_LIST_DOCUMENTS,
  METHOD_CLEAR,
] as const;

// Server commands for workspace/executeCommand. vscode-languageclient registers these itself,
// so the extension's own palette commands use other ids (see package.json).
export const COMMAND_SEARCH = "ragls.search";
export const COMMAND_CONTEXT_PROMPT = "ragls.contextPrompt";
export const COMMAND_REINDEX = "ragls.reindex";
export const COMMAND_STATUS = "ragls.status";

/** Every server command of PROTOCOL.md. */
export const COMMANDS = [COMMAND_SEARCH, COMMAND_CONTEXT_PROMPT, COMMAND_REINDEX, COMMAND_STATUS] as const;

// ---------------------------------------------------------------- values

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

/** Metadata of a result; `file`, `startLine` and `endLine` are there for chunks of files. */
export interface RagMetadata {
  file?: string;
  language?: string;
  symbol?: string;
  symbolKind?: string;
  /** 1-based, inclusive. */
  startLine?: number;
  /** 1-based, inclusive. */
  endLine?: number;
  /** "file" for chunks of files, "manual" for added documents. */
  source?: string;
  [key: string]: unknown;
}

export interface RagResult {
  id: string;
  score: number;
  content: string;
  /** Absent for added documents. */
  uri?: string;
  /** 0-based LSP range of the chunk; absent for added documents. */
  range?: Range;
  metadata: RagMetadata;
}

export type FolderState = "indexing" | "idle" | "failed";

export interface VectorStatus {
  model: string;
  dims: number;
  embedded: number;
  total: number;
}

/** Where a folder's index came from, with the `sharedIndex` setting; `source` never holds a password. */
export interface SharedIndexStatus {
  name: string;
  source: string;
  commit: string | null;
  generation: number | null;
  publishedAt: string | null;
  files: number;
  localFiles: number;
  vectorModel: string | null;
  vectors: number;
  error: string | null;
}

export interface FolderStatus {
  folder: string;
  state: FolderState;
  files: number;
  chunks: number;
  documents: number;
  generation: number;
  lastIndexedAt: string | null;
  indexedPath: string | null;
  skipped: Record<string, number>;
  error: string | null;
  vectors?: VectorStatus;
  sharedIndex?: SharedIndexStatus;
}

export type PromptFormat = "fenced" | "plain";

export const PROMPT_FORMATS: readonly PromptFormat[] = ["fenced", "plain"];

// ---------------------------------------------------------------- params and results

export interface SearchParams {
  query: string;
  topK?: number;
  filters?: Record<string, unknown>;
  folder?: string;
  /** Leave out results scoring less (scores are relevance, 0..1); default 0. */
  minScore?: number;
}

export interface SearchResult {
  results: RagResult[];
  complete: boolean;
  tookMs: number;
}

export interface ContextPromptParams {
  query: string;
  topK?: number;
  format?: PromptFormat;
  folder?: string;
  minScore?: number;
}

export interface ContextPromptResult {
  prompt: string;
  results: RagResult[];
}

export interface FolderParams {
  folder?: string;
}

export interface ReindexParams {
  folder?: string;
  full?: boolean;
}

export interface StatusResult {
  folders: FolderStatus[];
}

export interface AddDocumentParams {
  content: string;
  metadata?: Record<string, unknown>;
  id?: string;
  folder?: string;
}

export interface DocumentIdParams {
  id: string;
  folder?: string;
}

export interface DocumentInfo {
  id: string;
  preview: string;
  contentLength: number;
  metadata: Record<string, unknown>;
}

export interface StoredDocument {
  id: string;
  content: string;
  metadata: Record<string, unknown>;
}

// ---------------------------------------------------------------- request types

export const SearchRequest = new RequestType<SearchParams, SearchResult, void>(METHOD_SEARCH);
export const ContextPromptRequest = new RequestType<ContextPromptParams, ContextPromptResult, void>(
  METHOD_CONTEXT_PROMPT,
);
export const StatusRequest = new RequestType<FolderParams, StatusResult, void>(METHOD_STATUS);
export const ReindexRequest = new RequestType<ReindexParams, StatusResult, void>(METHOD_REINDEX);
export const AddDocumentRequest = new RequestType<AddDocumentParams, { id: string }, void>(METHOD_ADD_DOCUMENT);
export const RemoveDocumentRequest = new RequestType<DocumentIdParams, { removed: boolean }, void>(
  METHOD_REMOVE_DOCUMENT,
);
export const GetDocumentRequest = new RequestType<DocumentIdParams, { document: StoredDocument | null }, void>(
  METHOD_GET_DOCUMENT,
);
export const ListDocumentsRequest = new RequestType<FolderParams, { documents: DocumentInfo[] }, void>(
  METHOD_LIST_DOCUMENTS,
);
export const ClearRequest = new RequestType<FolderParams, StatusResult, void>(METHOD_CLEAR);

// ---------------------------------------------------------------- configuration

export interface Weights {
  bm25: number;
  vector: number;
  names?: number;
  dense?: number;
  code?: number;
}

/** Unset limits are the server's defaults, or those of `preset`. */
export interface Limits {
  preset?: "default" | "strict";
  maxDecodedBytes?: number;
  maxFiles?: number;
  maxEntries?: number;
  maxDepth?: number;
  maxFileBytes?: number;
}

export type WatchMode = "auto" | "client" | "server" | "off";

/** Seed 003's temporal strategy: a factor from `floor` (long unchanged) to 1 (just changed). */
export interface Recency {
  enabled: boolean;
  halfLifeDays?: number;
  floor?: number;
}

/** The `ragls` section of initializationOptions and workspace/configuration. */
export interface ServerSettings {
  weights: Weights;
  maxChunksPerFile: number;
  embedding: string | Record<string, unknown>;
  limits: Limits;
  watch: WatchMode;
  cacheDir: string | null;
  recency: Recency;
  openFilesBoost: boolean;
  // Provider objects the server checks and names by path; null is off.
  reranker: Record<string, unknown> | null;
  queryExpansion: Record<string, unknown> | null;
  sharedIndex: { url?: string; name?: string } | null;
}

/** PROTOCOL.md's documented defaults. */
export const DEFAULT_SERVER_SETTINGS: ServerSettings = {
  weights: { bm25: 0.5, vector: 0.5, names: 0.4, dense: 0.5, code: 0.4 },
  maxChunksPerFile: 3,
  embedding: "auto",
  // Empty: the server's own defaults (and a `preset` the user sets is not overridden by them).
  limits: {},
  watch: "auto",
  cacheDir: null,
  recency: { enabled: false, halfLifeDays: 30, floor: 0.8 },
  openFilesBoost: false,
  reranker: null,
  queryExpansion: null,
  sharedIndex: null,
};

/** JSON-RPC error code of a bad request (the message names the field). */
export const INVALID_PARAMS = -32602;
