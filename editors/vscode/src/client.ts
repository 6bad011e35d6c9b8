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
import { RestartPolicy } from "./models/restartPolicy";
import { formatCommand, nodeProbe, resolveServerCommand, ServerCommand } from "./models/serverCommand";
import { describeExit, ServerProcess } from "./models/serverProcess";
import { serverSettings } from "./models/settings";
import { ProgressValue, ServerState } from "./models/status";

export const CLIENT_ID = "ragls";
const STOP_TIMEOUT_MS = 5000;
/** How long a closed connection waits for the process's exit code before it reports without one. */
const EXIT_WAIT_MS = 3000;

/** What the rest of the extension hears about the server. */
export interface ServerEvents {
  onState(state: ServerState, message?: string): void;
  onProgress(token: string, value: ProgressValue): void;
}

/** Owns the LanguageClient: resolves the command, starts it, restarts it, sends settings. */
export class ServerController implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private process: ServerProcess | undefined;
  private readonly restarts = new RestartPolicy();
  /** One notification per failure: set when a start attempt's failure has been reported. */
  private reported = false;
  private running = false;

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
    this.reported = false;
    this.running = false;
    const settings = vscode.workspace.getConfiguration("ragls");
    let command: ServerCommand;
    try {
      command = resolveServerCommand(settings.get("server.command"), nodeProbe());
    } catch (error) {
      this.report(error instanceof Error ? error.message : String(error), ["Open Settings"]);
      return;
    }
    this.output.appendLine(`Starting the server (${command.source}): ${formatCommand(command)}`);
    // We spawn the process ourselves (vscode-languageclient would hide its exit code and stderr).
    const serverOptions: ServerOptions = () => {
      this.process = new ServerProcess(command);
      this.reported = false;
      return Promise.resolve(this.process.child);
    };
    const client = new RaglsLanguageClient(CLIENT_ID, "ragls", serverOptions, this.clientOptions());
    client.registerFeature(new ProgressTap(client, this.events));
    client.onDidChangeState(({ newState }) => this.stateChanged(client, newState));
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      await this.reportStartFailure(error);
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    const serverProcess = this.process;
    this.client = undefined;
    this.process = undefined;
    if (client !== undefined && client.needsStop()) {
      try {
        await client.stop(STOP_TIMEOUT_MS);
      } catch (error) {
        this.output.appendLine(`Stopping the server: ${String(error)}`);
      }
    }
    await serverProcess?.kill();
    this.events.onState("stopped");
  }

  /** A user's restart: the crash count starts again. */
  async restart(): Promise<void> {
    this.restarts.reset();
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
        void this.reportStartFailure(error);
        return false;
      },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => this.closed(),
      },
    };
  }

  /** The connection closed without a stop: a start that failed, or a crash to restart within the bound. */
  private async closed(): Promise<{ action: CloseAction; handled: true }> {
    const serverProcess = this.process;
    const exit = await serverProcess?.waitForExit(EXIT_WAIT_MS);
    if (serverProcess === undefined || exit === undefined) {
      this.report("ragls: the connection to the server closed. The ragls output has its log.", ["Restart", "Show Log"]);
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    if (!this.running) {
      this.report(describeExit(serverProcess.command, exit, "start"), ["Open Settings", "Show Log"]);
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const stopped = describeExit(serverProcess.command, exit, "running");
    this.output.appendLine(stopped);
    this.running = false;
    if (this.restarts.crashed()) {
      this.output.appendLine(`Restarting the server (${this.restarts.recentCrashes} of ${this.restarts.bound.maxRestarts}).`);
      this.events.onState("starting");
      return { action: CloseAction.Restart, handled: true };
    }
    this.report(
      `${stopped.replace(/\.$/, "")}; it stopped ${this.restarts.recentCrashes} times, more than ${this.restarts.describeBound()}, so it was not restarted.`,
      ["Restart", "Show Log"],
    );
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private async reportStartFailure(error: unknown): Promise<void> {
    const serverProcess = this.process;
    const exit = await serverProcess?.waitForExit(EXIT_WAIT_MS);
    if (serverProcess !== undefined && exit !== undefined) {
      this.report(describeExit(serverProcess.command, exit, "start"), ["Open Settings", "Show Log"]);
    } else {
      const message = error instanceof Error ? error.message : String(error);
      this.report(`ragls: the server did not start: ${message}`, ["Open Settings", "Show Log"]);
    }
  }

  private stateChanged(client: LanguageClient, state: State): void {
    if (client !== this.client) {
      return;
    }
    if (state === State.Running) {
      this.running = true;
      this.events.onState("running");
    } else if (state === State.Stopped && this.reported) {
      this.events.onState("failed", "The ragls server stopped. Click for the menu; run “ragls: Restart Server”.");
    }
  }

  /** The one notification of a failure, with its fixes; later reports of the same failure go to the log only. */
  private report(message: string, actions: ("Open Settings" | "Show Log" | "Restart")[]): void {
    this.output.appendLine(message);
    this.events.onState("failed", message);
    if (this.reported) {
      return;
    }
    this.reported = true;
    void vscode.window.showErrorMessage(message, ...actions).then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("ragls.openSettings");
      } else if (choice === "Show Log") {
        this.output.show();
      } else if (choice === "Restart") {
        void this.restart();
      }
    });
  }
}

/** vscode-languageclient shows its own toasts for errors ("Pending response rejected since connection got
 * disposed", "couldn't create connection"); ours say it once, in our words, so its errors go to the log only. */
class RaglsLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown): void {
    super.error(message, data, false);
  }

  // Its restart path passes a boolean where the data goes, which would log a stray "false".
  override info(message: string, data?: unknown): void {
    super.info(message, typeof data === "boolean" ? undefined : data, false);
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
