// protocol.ts against the real server: the commands it advertises and the methods it answers.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { ResponseError } from "vscode-jsonrpc";
import * as protocol from "../../src/protocol";
import { TestServer, withIndexedServer } from "./server";

const SOURCE = path.resolve(__dirname, "..", "..", "..", "src");

describe("protocol.ts", () => {
  let server: TestServer;
  withIndexedServer((_, running) => {
    server = running;
  });

  it("names the server commands the server advertises", () => {
    const provider = server.initializeResult?.capabilities.executeCommandProvider as { commands: string[] };
    assert.deepEqual([...provider.commands].sort(), [...protocol.COMMANDS].sort());
  });

  it("names nine rag/* methods, each answered by the server", async () => {
    assert.equal(protocol.METHODS.length, 9);
    for (const method of protocol.METHODS) {
      // Deliberately bad params: every method must exist (InvalidParams, not MethodNotFound), and
      // nothing about a bad request changes the index.
      try {
        await server.connection.sendRequest(method, { query: "", content: "", id: 7, topK: 0, folder: 3 });
      } catch (error) {
        assert.ok(error instanceof ResponseError, `${method}: ${String(error)}`);
        assert.notEqual(error.code, -32601, `${method} is not implemented by the server`);
      }
    }
  });

  it("reports bad params as InvalidParams naming the field", async () => {
    await assert.rejects(
      server.connection.sendRequest(protocol.SearchRequest, { query: "auth", topK: 0 }),
      (error: unknown) => error instanceof ResponseError && error.code === protocol.INVALID_PARAMS && /topK/.test(error.message),
    );
  });

  it("round-trips added documents with the typed requests", async () => {
    const { id } = await server.connection.sendRequest(protocol.AddDocumentRequest, {
      content: "Deploys go out on Tuesdays after the release review.",
      metadata: { "team-name": "ops" },
    });
    const listed = await server.connection.sendRequest(protocol.ListDocumentsRequest, {});
    assert.ok(listed.documents.some((document) => document.id === id));
    const got = await server.connection.sendRequest(protocol.GetDocumentRequest, { id });
    assert.equal(got.document?.metadata["team-name"], "ops");
    const removed = await server.connection.sendRequest(protocol.RemoveDocumentRequest, { id });
    assert.equal(removed.removed, true);
  });

  it("keeps the models free of the vscode module, so they run in plain Node", () => {
    const files = ["protocol.ts", ...readdirSync(path.join(SOURCE, "models")).map((name) => path.join("models", name))];
    for (const file of files) {
      const text = readFileSync(path.join(SOURCE, file), "utf8");
      assert.doesNotMatch(text, /from "vscode"|require\("vscode"\)/, `${file} imports vscode`);
    }
    assert.doesNotMatch(readFileSync(path.join(SOURCE, "protocol.ts"), "utf8"), /from "(?!vscode-jsonrpc")[^"]+"/);
  });
});
