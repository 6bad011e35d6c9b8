// The server's process: spawned here (not by vscode-languageclient) so that we know its exit code and
// the first line of its stderr, and can say in one message why it stopped. Plain Node, tested for real.
import { ChildProcess, spawn } from "node:child_process";
import { formatCommand, ServerCommand } from "./serverCommand";

/** How a server process ended. */
export interface ServerExit {
  /** The exit code, or null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The first non-empty line the process wrote to stderr, if any. */
  firstStderrLine?: string;
  /** Set when the process could not be started at all (e.g. ENOENT). */
  spawnError?: string;
}

const STDERR_HEAD_BYTES = 4096;

/** One spawned server: its child process, the start of its stderr, and a promise of its exit. */
export class ServerProcess {
  readonly child: ChildProcess;
  /** Resolves once the process has exited (or failed to spawn); never rejects. */
  readonly exited: Promise<ServerExit>;
  private stderrHead = "";
  private exit: ServerExit | undefined;

  constructor(readonly command: ServerCommand, env: NodeJS.ProcessEnv = process.env) {
    this.child = spawn(command.command, command.args, { env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr?.on("data", (chunk: Buffer | string) => {
      if (this.stderrHead.length < STDERR_HEAD_BYTES) {
        this.stderrHead += chunk.toString();
      }
    });
    this.exited = new Promise((resolve) => {
      this.child.once("error", (error) => {
        this.exit ??= { code: null, signal: null, spawnError: error.message };
        resolve(this.exit);
      });
      // "close", not "exit": stderr has been read to its end by then.
      this.child.once("close", (code, signal) => {
        this.exit ??= { code, signal, firstStderrLine: firstLine(this.stderrHead) };
        resolve(this.exit);
      });
    });
  }

  /** The exit, if the process has ended. */
  get exitInfo(): ServerExit | undefined {
    return this.exit;
  }

  /** Waits up to `timeoutMs` for the process to end; undefined when it is still running. */
  async waitForExit(timeoutMs: number): Promise<ServerExit | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the process if it still runs: SIGTERM, then SIGKILL after `graceMs`. */
  async kill(graceMs = 2000): Promise<void> {
    if (this.exit !== undefined || this.child.exitCode !== null) {
      return;
    }
    this.child.kill("SIGTERM");
    if ((await this.waitForExit(graceMs)) === undefined) {
      this.child.kill("SIGKILL");
      await this.waitForExit(graceMs);
    }
  }
}

/** One sentence for the user: which command stopped, how, and what it said first. */
export function describeExit(command: ServerCommand, exit: ServerExit, when: "start" | "running"): string {
  const shown = `\`${formatCommand(command)}\``;
  if (exit.spawnError !== undefined) {
    return `ragls: cannot start the server ${shown}: ${exit.spawnError}.`;
  }
  const how = exit.code !== null ? `exited with code ${exit.code}` : `was killed by ${exit.signal ?? "a signal"}`;
  const what = when === "start" ? `The server ${shown} ${how} before it started` : `The server ${shown} ${how}`;
  const said = exit.firstStderrLine ? `: ${exit.firstStderrLine}` : " (nothing on stderr)";
  const hint = when === "start" && command.args.length > 0 && !command.args.includes("serve") ? ". The command must run `ragls serve`" : "";
  return `ragls: ${what}${said}${hint}.`;
}

function firstLine(text: string): string | undefined {
  const line = text.split(/\r?\n/).find((candidate) => candidate.trim().length > 0);
  return line === undefined ? undefined : line.trim().slice(0, 300);
}
