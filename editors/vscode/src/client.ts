// Starts, stops and restarts the language client; the one place that knows vscode-languageclient.
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  FeatureState,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StaticFeature,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
} from "vscode-languageclient/node";
import { RagConnection } from "./protocol";
import { formatCommand, nodeProbe, resolveServerCommand, ServerCommandError, SETTING } from "./models/serverCommand";
import { serverSettings } from "./models/settings";
import { ProgressValue, ServerState } from "./models/status";

export const CLIENT_ID = "ragls";
const STOP_TIMEOUT_MS = 5000;

/** What the rest of the extension hears about the server. */
export interface ServerEvents {
  onState(state: ServerState, message?: string): void;
  onProgress(token: string, value: ProgressValue): void;
}

/** Owns the LanguageClient: resolves the command, starts it, restarts it, sends settings. */
export class ServerController implements vscode.Disposable {
  private client: LanguageClient | undefined;

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly events: ServerEvents,
  ) {}

  /** The running client as a connection for the models; throws a clear error when it is not running. */
  get connection(): RagConnection {
    if (this.client === undefined || this.client.state !== State.Running) {
      throw new Error("The ragls server is not running. Run “ragls: Restart Server” and check the ragls output.");
    }
    return this.client;
  }

  async start(): Promise<void> {
    this.events.onState("starting");
    const settings = vscode.workspace.getConfiguration("ragls");
    let serverOptions: ServerOptions;
    try {
      const command = resolveServerCommand(settings.get("server.command"), nodeProbe());
      this.output.appendLine(`Starting the server (${command.source}): ${formatCommand(command)}`);
      // No `transport`: TransportKind.stdio would append `--stdio` to the arguments.
      serverOptions = { command: command.command, args: command.args };
    } catch (error) {
      this.failed(error);
      return;
    }
    const client = new LanguageClient(CLIENT_ID, "ragls", serverOptions, this.clientOptions());
    client.registerFeature(new ProgressTap(client, this.events));
    client.onDidChangeState(({ newState }) => this.stateChanged(client, newState));
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.failed(error);
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined && client.needsStop()) {
      try {
        await client.stop(STOP_TIMEOUT_MS);
      } catch (error) {
        this.output.appendLine(`Stopping the server: ${String(error)}`);
      }
    }
    this.events.onState("stopped");
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Sends the server's part of the settings again (PROTOCOL.md: the `ragls` section). */
  async sendSettings(): Promise<void> {
    if (this.client?.state === State.Running) {
      await this.client.sendNotification("workspace/didChangeConfiguration", { settings: { ragls: readServerSettings() } });
    }
  }

  dispose(): void {
    void this.stop();
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: [{ scheme: "file" }],
      initializationOptions: readServerSettings(),
      outputChannel: this.output,
      // Answer workspace/configuration with the server's keys only: the server warns about unknown ones.
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) {
              return answers;
            }
            return answers.map((answer, index) =>
              params.items[index]?.section === "ragls" ? readServerSettings() : (answer as unknown),
            );
          },
        },
      },
      initializationFailedHandler: (error) => {
        this.failed(error);
        return false;
      },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => ({
          action: CloseAction.DoNotRestart,
          message: "The ragls server stopped. Run “ragls: Restart Server”; the ragls output has its log.",
        }),
      },
    };
  }

  private stateChanged(client: LanguageClient, state: State): void {
    if (client !== this.client) {
      return;
    }
    if (state === State.Running) {
      this.events.onState("running");
    } else if (state === State.Stopped) {
      this.events.onState("failed", "The ragls server stopped. Click for status; run “ragls: Restart Server”.");
    }
  }

  private failed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.output.appendLine(message);
    this.events.onState("failed", message);
    const fix = error instanceof ServerCommandError ? "Open Settings" : "Show Log";
    void vscode.window.showErrorMessage(message, fix).then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", SETTING);
      } else if (choice === "Show Log") {
        this.output.show();
      }
    });
  }
}

function readServerSettings(): ReturnType<typeof serverSettings> {
  const settings = vscode.workspace.getConfiguration("ragls");
  return serverSettings((key) => settings.get(key));
}

/**
 * Takes over window/workDoneProgress/create (registered after the built-in progress feature, so it
 * wins) and hands every `$/progress` value to the status-bar item, which is our progress display.
 */
class ProgressTap implements StaticFeature {
  constructor(
    private readonly client: LanguageClient,
    private readonly events: ServerEvents,
  ) {}

  fillClientCapabilities(): void {
    // The built-in progress feature already advertises window.workDoneProgress.
  }

  initialize(): void {
    this.client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      const key = String(token);
      const subscription = this.client.onProgress(WorkDoneProgress.type, token, (value) => {
        this.events.onProgress(key, value);
        if (value.kind === "end") {
          subscription.dispose();
        }
      });
    });
  }

  getState(): FeatureState {
    return { kind: "static" };
  }

  clear(): void {
    // Nothing is held between runs.
  }
}
