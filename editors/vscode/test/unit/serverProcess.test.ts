// The server's own process: a wrong command's exit code and stderr, a killed server, and the restart bound.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RestartPolicy } from "../../src/models/restartPolicy";
import { nodeProbe } from "../../src/models/serverCommand";
import { describeExit, ServerProcess } from "../../src/models/serverProcess";
import { serverCommandFromEnv } from "./server";

function resolved(parts: string[]): { command: string; args: string[]; source: "setting" } {
  const [name, ...args] = parts;
  assert.ok(name);
  return { command: nodeProbe().which(name) ?? name, args, source: "setting" };
}

describe("ServerProcess", () => {
  const serve = serverCommandFromEnv();

  it("names a wrong command (a path without `serve`), its exit code and the first line of its stderr", async () => {
    const command = resolved(serve.filter((part) => part !== "serve"));
    const server = new ServerProcess(command);
    const exit = await server.exited;
    assert.equal(exit.code, 2);
    assert.match(exit.firstStderrLine ?? "", /^usage: ragls /);
    const message = describeExit(command, exit, "start");
    assert.ok(message.includes(`\`${[command.command, ...command.args].join(" ")}\``), message);
    assert.match(message, /exited with code 2 before it started: usage: ragls /);
    assert.match(message, /The command must run `ragls serve`\.$/);
  });

  it("says a killed server was killed, by which signal", async () => {
    const command = resolved(serve);
    const server = new ServerProcess(command);
    assert.equal(await server.waitForExit(300), undefined, "the real server should keep running on an open stdin");
    server.child.kill("SIGKILL");
    const exit = await server.exited;
    assert.equal(exit.signal, "SIGKILL");
    assert.match(describeExit(command, exit, "running"), /^ragls: The server `.+ serve` was killed by SIGKILL/);
  });

  it("kill() ends a running server", async () => {
    const server = new ServerProcess(resolved(serve));
    await server.kill();
    assert.ok(server.exitInfo, "still running after kill()");
  });
});

describe("RestartPolicy", () => {
  it("restarts 3 times in 3 minutes, then leaves it to the user, and counts again after the window or a reset", () => {
    let now = 0;
    const policy = new RestartPolicy(undefined, () => now);
    assert.deepEqual([policy.crashed(), policy.crashed(), policy.crashed()], [true, true, true]);
    now += 60_000;
    assert.equal(policy.crashed(), false);
    assert.equal(policy.recentCrashes, 4);
    assert.equal(policy.describeBound(), "3 times in 3 minutes");
    now += 3 * 60_000;
    assert.equal(policy.crashed(), true);
    policy.crashed();
    policy.crashed();
    assert.equal(policy.crashed(), false);
    policy.reset();
    assert.equal(policy.crashed(), true);
  });
});
