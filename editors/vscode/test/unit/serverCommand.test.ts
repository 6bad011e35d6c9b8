// Server command resolution against real executables, and the resolved command really serves.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { formatCommand, nodeProbe, resolveServerCommand, ServerCommandError } from "../../src/models/serverCommand";
import { serverCommandFromEnv } from "./server";

describe("resolveServerCommand", () => {
  let bin: string;
  const [python] = serverCommandFromEnv();

  before(() => {
    bin = mkdtempSync(path.join(tmpdir(), "ragls-vscode-bin-"));
  });

  after(() => rmSync(bin, { recursive: true, force: true }));

  it("uses the setting when it is set", () => {
    const command = resolveServerCommand([python, "-m", "ragls", "serve"], nodeProbe());
    assert.equal(command.source, "setting");
    assert.deepEqual(command.args, ["-m", "ragls", "serve"]);
    assert.ok(path.isAbsolute(command.command));
  });

  it("explains a setting that is not an array of strings", () => {
    assert.throws(
      () => resolveServerCommand("ragls serve", nodeProbe()),
      (error: unknown) => error instanceof ServerCommandError && /must be an array/.test(error.message) && /ragls.server.command/.test(error.message),
    );
  });

  it("explains a setting whose program does not exist", () => {
    assert.throws(
      () => resolveServerCommand(["/nonexistent/ragls", "serve"], nodeProbe()),
      (error: unknown) => error instanceof ServerCommandError && /not an executable file/.test(error.message) && /Fix the path/.test(error.message),
    );
  });

  it("finds ragls on PATH next", () => {
    const script = path.join(bin, "ragls");
    writeFileSync(script, "#!/bin/sh\nexit 0\n");
    chmodSync(script, 0o755);
    const command = resolveServerCommand([], nodeProbe({ PATH: bin }));
    assert.deepEqual(command, { command: script, args: ["serve"], source: "path" });
    rmSync(script);
  });

  it("falls back to python3 -m ragls when that runs", () => {
    // A wrapper, not a symlink: a virtual environment's python finds its packages by its own path.
    const link = path.join(bin, "python3");
    writeFileSync(link, `#!/bin/sh\nexec ${JSON.stringify(resolveOnPath(python))} "$@"\n`);
    chmodSync(link, 0o755);
    const command = resolveServerCommand(undefined, nodeProbe({ PATH: bin }));
    assert.equal(command.source, "python");
    assert.deepEqual(command.args, ["-m", "ragls", "serve"]);
    assert.match(formatCommand(command), /python3 -m ragls serve$/);
    rmSync(link);
  });

  it("says what was tried and how to fix it when nothing works", () => {
    assert.throws(
      () => resolveServerCommand(null, nodeProbe({ PATH: bin })),
      (error: unknown) =>
        error instanceof ServerCommandError && /not on PATH/.test(error.message) && /pip install ragls/.test(error.message),
    );
  });
});

function resolveOnPath(program: string): string {
  if (program.includes("/")) {
    return program;
  }
  const found = nodeProbe().which(program);
  assert.ok(found, `${program} is not on PATH`);
  return found;
}
