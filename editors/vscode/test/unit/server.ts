// The real `ragls serve` over vscode-jsonrpc, on a fixture workspace each test file makes.
// The server command comes from RAGLS_SERVER (a JSON array); the default is `ragls serve`.
import { ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before } from "node:test";
import { pathToFileURL } from "node:url";
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { FolderStatus, StatusRequest } from "../../src/protocol";
import { ProgressValue } from "../../src/models/status";

export const FIXTURE_FILES: Record<string, string> = {
  "src/auth/middleware.py": [
    '"""Request authentication."""',
    "",
    "",
    "class AuthMiddleware:",
    '    """Checks the bearer token of every request."""',
    "",
    "    def check(self, request):",
    "        # The blank lines below keep this class over the 30 lines small neighbours are packed up to.",
    '        token = request.headers.get("Authorization")',
    ...Array<string>(25).fill(""),
    "        return validate_token(token)",
    "",
    "",
    "def validate_token(token):",
    '    return token is not None and token.startswith("Bearer ")',
    "",
  ].join("\n"),
  "src/db/pool.py": [
    "class ConnectionPool:",
    "    def acquire(self):",
    "        return self.connections.pop()",
    "",
    "    def release(self, connection):",
    "        self.connections.append(connection)",
    "",
  ].join("\n"),
  "web/router.js": [
    "function matchRoute(path, routes) {",
    "  return routes.find((route) => route.pattern.test(path));",
    "}",
    "",
    "class Router {",
    "  dispatch(request) {",
    "    return matchRoute(request.url, this.routes);",
    "  }",
    "}",
    "",
  ].join("\n"),
  "docs/guide.md": [
    "# Guide",
    "",
    "## Installing",
    "",
    "Run the installer with pip.",
    "",
    "## Rate limiting",
    "",
    "Requests over the quota get a 429 answer from the throttle.",
    "",
  ].join("\n"),
};

export function serverCommandFromEnv(): string[] {
  const raw = process.env.RAGLS_SERVER;
  if (raw === undefined || raw.trim() === "") {
    return ["ragls", "serve"];
  }
  const parsed: unknown = JSON.parse(raw);
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((part) => typeof part === "string")) {
    throw new Error(`RAGLS_SERVER must be a JSON array of strings, got ${raw}`);
  }
  return parsed;
}

/** A temporary folder with the fixture files (or others); removed by `remove()`. */
export class Workspace {
  readonly root: string;
  readonly uri: string;

  constructor(files: Record<string, string> = FIXTURE_FILES) {
    this.root = mkdtempSync(path.join(tmpdir(), "ragls-vscode-unit-"));
    for (const [relative, content] of Object.entries(files)) {
      const file = path.join(this.root, relative);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
    this.uri = pathToFileURL(this.root).href;
  }

  fileUri(relative: string): string {
    return pathToFileURL(path.join(this.root, relative)).href;
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

export interface StartOptions {
  settings?: Record<string, unknown>;
  workDoneProgress?: boolean;
}

/** One running server, its connection and what it sent us. */
export class TestServer {
  readonly progress: { token: string; value: ProgressValue }[] = [];
  readonly messages: string[] = [];
  initializeResult: { capabilities: Record<string, unknown> } | undefined;

  private constructor(
    readonly connection: MessageConnection,
    private readonly process: ChildProcess,
    private readonly cacheDir: string,
  ) {}

  static async start(workspace: Workspace, options: StartOptions = {}): Promise<TestServer> {
    const [command, ...args] = serverCommandFromEnv();
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    const spawnFailed = new Promise<never>((_, reject) =>
      child.once("error", (error) =>
        reject(new Error(`cannot start the server ${JSON.stringify([command, ...args])}: ${error.message}; set RAGLS_SERVER`)),
      ),
    );
    child.stderr?.on("data", (chunk: Buffer) => {
      if (process.env.RAGLS_TEST_VERBOSE) {
        process.stderr.write(chunk);
      }
    });
    const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const cacheDir = mkdtempSync(path.join(tmpdir(), "ragls-vscode-cache-"));
    const server = new TestServer(connection, child, cacheDir);
    const settings = { cacheDir, ...options.settings };
    server.listen(settings);
    connection.listen();
    const initialized = connection.sendRequest<TestServer["initializeResult"]>("initialize", {
      processId: process.pid,
      rootUri: workspace.uri,
      workspaceFolders: [{ uri: workspace.uri, name: path.basename(workspace.root) }],
      initializationOptions: settings,
      capabilities: {
        window: { workDoneProgress: options.workDoneProgress ?? true },
        workspace: { configuration: true, didChangeWatchedFiles: { dynamicRegistration: true }, workspaceFolders: true },
      },
    });
    server.initializeResult = await Promise.race([initialized, spawnFailed]);
    await connection.sendNotification("initialized", {});
    return server;
  }

  /**
   * Polls rag/status until the folders are open, none is indexing, and each has committed at least
   * `generation` runs (0: wait for the first run to end, even if it failed).
   */
  async waitForIndex(generation = 1, timeoutMs = 60000): Promise<FolderStatus[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { folders } = await this.connection.sendRequest(StatusRequest, {});
      if (folders.length > 0 && folders.every((folder) => folder.generation >= generation && folder.state !== "indexing")) {
        return folders;
      }
      if (Date.now() > deadline) {
        throw new Error(`index not ready after ${timeoutMs} ms: ${JSON.stringify(folders)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Waits until the `$/progress` end of `token` has arrived (notifications and answers may cross). */
  async waitForProgressEnd(token: string, timeoutMs = 30000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.progress.some((event) => event.token === token && event.value.kind === "end")) {
      if (Date.now() > deadline) {
        throw new Error(`no $/progress end for ${token} after ${timeoutMs} ms: ${JSON.stringify(this.progress)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => {
      if (this.process.exitCode !== null) {
        resolve();
      } else {
        this.process.once("exit", () => resolve());
      }
    });
    try {
      await this.connection.sendRequest("shutdown");
      await this.connection.sendNotification("exit");
    } catch {
      // Already gone: the exit wait below still applies.
    }
    const timer = setTimeout(() => this.process.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
    this.connection.dispose();
    rmSync(this.cacheDir, { recursive: true, force: true });
  }

  private listen(settings: Record<string, unknown>): void {
    const connection = this.connection;
    connection.onRequest("workspace/configuration", (params: { items: { section?: string }[] }) =>
      params.items.map((item) => (item.section === "ragls" ? settings : null)),
    );
    connection.onRequest("window/workDoneProgress/create", () => null);
    connection.onRequest("client/registerCapability", () => null);
    connection.onUnhandledProgress(({ token, value }) => {
      this.progress.push({ token: String(token), value: value as ProgressValue });
    });
    connection.onNotification("window/showMessage", (params: { message: string }) => this.messages.push(params.message));
    connection.onNotification("window/logMessage", () => undefined);
  }
}

/**
 * Start the real server on a fresh workspace before a suite's tests (waiting for its first index)
 * and stop it after; `ready` hands the suite both.
 */
export function withIndexedServer(ready: (workspace: Workspace, server: TestServer) => void): void {
  let workspace: Workspace | undefined;
  let server: TestServer | undefined;
  before(async () => {
    workspace = new Workspace();
    server = await TestServer.start(workspace);
    await server.waitForIndex();
    ready(workspace, server);
  });
  after(async () => {
    await server?.stop();
    workspace?.remove();
  });
}
