// Which command starts the language server: the setting, else `ragls` on PATH, else `python3 -m ragls`.
// Plain Node (no vscode import), so the resolution is tested against real executables.
import { spawnSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import * as path from "node:path";

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where the command came from, for the log. */
  source: "setting" | "path" | "python";
}

/** What the resolution asks of the machine; `nodeProbe()` answers from the real one. */
export interface CommandProbe {
  /** The absolute path of an executable, looked up on PATH unless the name has a directory. */
  which(name: string): string | undefined;
  /** True when the command runs and exits 0 within a few seconds. */
  runs(command: string, args: string[]): boolean;
}

/** The server could not be found; the message says what was tried and how to fix it. */
export class ServerCommandError extends Error {}

export const SETTING = "ragls.server.command";
const PYTHON = "python3";

/** The server's start command, from the `ragls.server.command` value and what the machine has. */
export function resolveServerCommand(setting: unknown, probe: CommandProbe): ServerCommand {
  if (setting !== undefined && setting !== null && !(Array.isArray(setting) && setting.length === 0)) {
    return fromSetting(setting, probe);
  }
  const ragls = probe.which("ragls");
  if (ragls !== undefined) {
    return { command: ragls, args: ["serve"], source: "path" };
  }
  const python = probe.which(PYTHON);
  if (python !== undefined && probe.runs(python, ["-m", "ragls", "--version"])) {
    return { command: python, args: ["-m", "ragls", "serve"], source: "python" };
  }
  throw new ServerCommandError(
    "ragls: cannot find the language server: `ragls` is not on PATH and `python3 -m ragls --version` " +
      "failed. Install it (`pip install ragls`, or into a virtual environment), or set " +
      `\`${SETTING}\` to its full command, e.g. ["/path/to/venv/bin/ragls", "serve"].`,
  );
}

/** A readable one-line form of a command, for the log and error messages. */
export function formatCommand(command: ServerCommand): string {
  return [command.command, ...command.args].map((part) => (/\s/.test(part) ? JSON.stringify(part) : part)).join(" ");
}

function fromSetting(setting: unknown, probe: CommandProbe): ServerCommand {
  if (!Array.isArray(setting) || !setting.every((part) => typeof part === "string" && part.length > 0)) {
    throw new ServerCommandError(
      `ragls: \`${SETTING}\` must be an array of non-empty strings, got ${JSON.stringify(setting)}. ` +
        'Set it to e.g. ["/path/to/venv/bin/ragls", "serve"], or clear it to use `ragls` from PATH.',
    );
  }
  const [name, ...args] = setting as string[];
  const command = probe.which(name);
  if (command === undefined) {
    throw new ServerCommandError(
      `ragls: \`${SETTING}\` starts with ${JSON.stringify(name)}, which is not an executable file` +
        (name.includes("/") || name.includes("\\") ? "" : " on PATH") +
        ". Fix the path in the setting, or clear it to use `ragls` from PATH.",
    );
  }
  return { command, args, source: "setting" };
}

/** A probe that looks at this machine: PATH lookups and short synchronous runs. */
export function nodeProbe(env: NodeJS.ProcessEnv = process.env, timeoutMs = 15000): CommandProbe {
  return {
    which: (name) => which(name, env),
    runs: (command, args) => {
      const run = spawnSync(command, args, { env, timeout: timeoutMs, stdio: "ignore" });
      return run.error === undefined && run.status === 0;
    },
  };
}

function which(name: string, env: NodeJS.ProcessEnv): string | undefined {
  if (name.includes("/") || name.includes(path.sep)) {
    return isExecutable(name) ? path.resolve(name) : undefined;
  }
  const extensions = process.platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  for (const directory of (env.PATH ?? "").split(path.delimiter)) {
    for (const extension of extensions) {
      const candidate = path.join(directory || ".", name + extension);
      if (directory && isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
