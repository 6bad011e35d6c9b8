// Search Workspace's model against the real server: rows, debounce, stale answers, errors.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { firstLine, openTarget, SearchSession, SearchState, toSearchItem } from "../../src/models/search";
import { AddDocumentRequest, RagConnection, SearchRequest } from "../../src/protocol";
import { TestServer, Workspace, withIndexedServer } from "./server";

describe("SearchSession", () => {
  let workspace: Workspace;
  let server: TestServer;
  withIndexedServer((started, running) => {
    workspace = started;
    server = running;
  });

  /** The real connection, counting the rag/search requests that reach it. */
  function counted(): { connection: RagConnection; queries: string[] } {
    const queries: string[] = [];
    const connection: RagConnection = {
      sendRequest: (type, params, token) => {
        if (type.method === SearchRequest.method) {
          queries.push((params as { query: string }).query);
        }
        return server.connection.sendRequest(type, params, token);
      },
    };
    return { connection, queries };
  }

  it("shows symbol, file:start-end, score and first line, and opens the chunk's range", async () => {
    const states: SearchState[] = [];
    const session = new SearchSession(server.connection, { topK: 5, debounceMs: 10 }, (state) => states.push(state));
    session.setQuery("validate the bearer token");
    await session.whenSettled();
    const top = session.current.items[0];
    assert.ok(top, "no results");
    assert.equal(top.label, "validate_token");
    assert.match(top.description, /^src\/auth\/middleware\.py:38-39 {2}\d\.\d{4}$/);
    assert.equal(top.detail, "def validate_token(token):");
    assert.deepEqual(openTarget(top.result), {
      uri: workspace.fileUri("src/auth/middleware.py"),
      range: { start: { line: 37, character: 0 }, end: { line: 38, character: 60 } },
    });
    assert.equal(states[0]?.busy, true);
    assert.equal(session.current.busy, false);
    assert.equal(session.current.complete, true);
    session.dispose();
  });

  it("debounces keystrokes into one request for the last text", async () => {
    const { connection, queries } = counted();
    const session = new SearchSession(connection, { topK: 5, debounceMs: 50 }, () => undefined);
    for (const text of ["c", "co", "con", "conn", "connection pool"]) {
      session.setQuery(text);
    }
    await session.whenSettled();
    assert.deepEqual(queries, ["connection pool"]);
    assert.equal(session.current.items[0]?.result.metadata.file, "src/db/pool.py");
    session.dispose();
  });

  it("drops answers to stale queries and clears on empty text", async () => {
    const session = new SearchSession(server.connection, { topK: 5, debounceMs: 0 }, () => undefined);
    session.setQuery("route matching");
    await new Promise((resolve) => setTimeout(resolve, 5));
    session.setQuery("");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(session.current.items, []);
    assert.equal(session.current.query, "");
    session.dispose();
  });

  it("shows the server's InvalidParams message as the error", async () => {
    const session = new SearchSession(server.connection, { topK: 500, debounceMs: 0 }, () => undefined);
    session.setQuery("auth");
    await session.whenSettled();
    assert.match(session.current.error ?? "", /topK/);
    assert.deepEqual(session.current.items, []);
    session.dispose();
  });

  it("labels added documents by id and gives them no file to open", async () => {
    const { id } = await server.connection.sendRequest(AddDocumentRequest, {
      content: "Zebra crossings are painted every spring.",
    });
    const { results } = await server.connection.sendRequest(SearchRequest, { query: "zebra crossings painted" });
    const added = results.find((result) => result.id === id);
    assert.ok(added);
    const item = toSearchItem(added);
    assert.equal(item.label, id);
    assert.equal(openTarget(added), undefined);
    assert.equal(firstLine("\n\n  second  \nthird"), "second");
  });
});
