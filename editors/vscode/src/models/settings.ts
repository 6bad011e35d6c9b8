// Settings: the server's part (PROTOCOL.md Configuration) and the extension's own.
// Values are read through a `read(key)` function, so this runs in plain Node.
import { DEFAULT_SERVER_SETTINGS, PromptFormat, ServerSettings } from "../protocol";

/** Reads `ragls.<key>`; undefined when unset and without a default. */
export type SettingReader = (key: string) => unknown;

/** The extension's own settings (not sent to the server). */
export interface ClientSettings {
  serverCommand: unknown;
  promptFormat: PromptFormat;
  promptTopK: number;
  searchTopK: number;
  searchDebounceMs: number;
}

export const SERVER_KEYS: readonly (keyof ServerSettings)[] = [
  "weights",
  "maxChunksPerFile",
  "embedding",
  "limits",
  "watch",
  "cacheDir",
  "recency",
  "openFilesBoost",
  "reranker",
  "queryExpansion",
  "sharedIndex",
];

/**
 * The `ragls` section the server gets as initializationOptions, from workspace/configuration and
 * with didChangeConfiguration. Values pass through unchanged: the server checks them and names a bad
 * one by its path, so the user sees the server's own message.
 */
export function serverSettings(read: SettingReader): ServerSettings {
  const settings: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const value = read(key);
    settings[key] = value === undefined ? DEFAULT_SERVER_SETTINGS[key] : value;
  }
  return settings as unknown as ServerSettings;
}

export function clientSettings(read: SettingReader): ClientSettings {
  return {
    serverCommand: read("server.command"),
    promptFormat: read("contextPrompt.format") === "plain" ? "plain" : "fenced",
    promptTopK: integer(read("contextPrompt.topK"), 5, 1, 100),
    searchTopK: integer(read("search.topK"), 20, 1, 100),
    searchDebounceMs: integer(read("search.debounceMs"), 150, 0, 2000),
  };
}

/** True when a changed setting (given as a predicate over full keys) concerns the server's section. */
export function serverSettingsChanged(affects: (section: string) => boolean): boolean {
  return SERVER_KEYS.some((key) => affects(`ragls.${key}`));
}

function integer(value: unknown, fallback: number, min: number, max: number): number {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max ? value : fallback;
}
