// @ragls's model against the real server, with a stand-in chat model (VS Code's is not in Node).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { answerChat, ChatModel, ChatOutput, NO_MODEL_MESSAGE, USAGE_MESSAGE } from "../../src/models/chat";
import { RagResult } from "../../src/protocol";
import { TestServer, withIndexedServer } from "./server";

interface Recorded extends ChatOutput {
  text: string[];
  progressLines: string[];
  references: RagResult[];
}

function recorder(): Recorded {
  const recorded: Recorded = {
    text: [],
    progressLines: [],
    references: [],
    markdown: (text) => recorded.text.push(text),
    progress: (line) => recorded.progressLines.push(line),
    reference: (result) => recorded.references.push(result),
  };
  return recorded;
}

describe("answerChat", () => {
  let server: TestServer;
  withIndexedServer((_, running) => {
    server = running;
  });

  it("sends the fenced prompt to the model, streams its answer and cites the sources", async () => {
    const prompts: string[] = [];
    const model: ChatModel = {
      name: "stand-in",
      ask: (prompt) => {
        prompts.push(prompt);
        return Promise.resolve(
          (async function* () {
            yield await Promise.resolve("Tokens are checked ");
            yield "by `validate_token`.";
          })(),
        );
      },
    };
    const out = recorder();
    const answer = await answerChat(server.connection, "how is the bearer token validated?", model, out, { topK: 3 });
    assert.equal(answer.answered, true);
    assert.match(prompts[0] ?? "", /^<tnsai-memory>[\s\S]*<tnsai-user-message>\nhow is the bearer token validated\?\n/);
    assert.equal(out.text.join(""), "Tokens are checked by `validate_token`.");
    assert.ok(out.references.some((result) => result.metadata.file === "src/auth/middleware.py"));
    assert.deepEqual(out.references.map((result) => result.id), answer.sources.map((result) => result.id));
    assert.deepEqual(out.progressLines, ["Searching the workspace index…", "Asking stand-in…"]);
  });

  it("degrades with a clear message and still lists sources when there is no chat model", async () => {
    const out = recorder();
    const answer = await answerChat(server.connection, "connection pool release", undefined, out, { topK: 2 });
    assert.equal(answer.answered, false);
    assert.deepEqual(out.text, [NO_MODEL_MESSAGE]);
    assert.ok(out.references.some((result) => result.metadata.file === "src/db/pool.py"));
  });

  it("reports a failing model and a bad request in the chat, without throwing", async () => {
    const failing: ChatModel = { name: "broken", ask: () => Promise.reject(new Error("quota exceeded")) };
    const out = recorder();
    await answerChat(server.connection, "router dispatch", failing, out, { topK: 2 });
    assert.match(out.text.join(""), /The chat model failed: quota exceeded/);
    const bad = recorder();
    await answerChat(server.connection, "router", undefined, bad, { topK: 0 });
    assert.match(bad.text.join(""), /^ragls could not search the workspace: .*topK/);
  });

  it("explains itself when asked nothing", async () => {
    const out = recorder();
    await answerChat(server.connection, "  ", undefined, out, { topK: 2 });
    assert.deepEqual(out.text, [USAGE_MESSAGE]);
  });
});
