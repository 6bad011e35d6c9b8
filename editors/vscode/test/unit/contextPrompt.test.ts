// Copy/Open Context Prompt's model against the real server: both formats, the summary, the selection rule.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildContextPrompt, MAX_PREFILL_CHARS, questionFromSelection, questionInput } from "../../src/models/contextPrompt";
import { TestServer, withIndexedServer } from "./server";

describe("buildContextPrompt", () => {
  let server: TestServer;
  withIndexedServer((_, running) => {
    server = running;
  });

  it("builds the fenced prompt with the sources and the question last", async () => {
    const built = await buildContextPrompt(server.connection, "How is the bearer token checked?", { format: "fenced", topK: 3 });
    assert.match(built.prompt, /^<tnsai-memory>/);
    assert.match(built.prompt, /<value>src\/auth\/middleware\.py<\/value>/);
    assert.match(built.prompt, /<tnsai-user-message>\nHow is the bearer token checked\?\n<\/tnsai-user-message>/);
    assert.ok(built.results.length >= 1 && built.results.length <= 3);
    assert.match(built.summary, /^Context prompt for "How is the bearer token checked\?" with \d sources? from \d files?\.$/);
  });

  it("builds the plain prompt on request", async () => {
    const built = await buildContextPrompt(server.connection, "rate limiting quota", { format: "plain", topK: 2 });
    assert.match(built.prompt, /^\[Relevant code context\]/);
    assert.match(built.prompt, /--- file: docs\/guide\.md \(lines \d+-\d+\) ---/);
    assert.match(built.prompt, /\[User question\]\nrate limiting quota/);
  });

  it("says so when nothing matches (the prompt is the question alone)", async () => {
    const built = await buildContextPrompt(server.connection, "qqqxyzzy", { format: "fenced", topK: 2 });
    assert.equal(built.prompt.trim(), "qqqxyzzy");
    assert.match(built.summary, /^No workspace context found/);
  });

  it("offers the selection as the question, on one line, without using it unasked", () => {
    assert.deepEqual(questionInput("  validate_token(\n  token)  "), {
      value: "validate_token( token)",
      prompt: "The question to ground on this workspace: the selection is offered; edit it or press Enter",
    });
    assert.deepEqual(questionInput(undefined), { value: "", prompt: "The question to ground on this workspace" });
    assert.equal(questionInput("x".repeat(2000)).value.length, MAX_PREFILL_CHARS);
  });

  it("takes the selection as it is for the for-Selection commands", () => {
    assert.equal(questionFromSelection("  validate_token  "), "validate_token");
    assert.equal(questionFromSelection("   "), undefined);
    assert.equal(questionFromSelection(undefined), undefined);
  });
});
