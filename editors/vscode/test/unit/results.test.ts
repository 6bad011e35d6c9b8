// The Results view's model over the real server's answers: grouped by file, newest search first.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { groupByFile, ResultsModel } from "../../src/models/results";
import { SearchRequest } from "../../src/protocol";
import { TestServer, withIndexedServer } from "./server";

describe("ResultsModel", () => {
  let server: TestServer;
  withIndexedServer((_, running) => {
    server = running;
  });

  it("groups a search's results by file, best file first, with lines and a preview", async () => {
    const { results } = await server.connection.sendRequest(SearchRequest, { query: "validate the bearer token", topK: 10 });
    const groups = groupByFile(results);
    assert.equal(groups[0]?.file, "src/auth/middleware.py");
    assert.equal(new Set(groups.map((group) => group.file)).size, groups.length, "a file appears twice");
    assert.equal(groups.reduce((sum, group) => sum + group.entries.length, 0), results.length);
    const top = groups[0]?.entries[0];
    assert.equal(top?.symbol, "validate_token");
    assert.equal(top?.lines, "38-39");
    assert.equal(top?.preview, "def validate_token(token):");
  });

  it("keeps the last searches, newest first; a repeated query moves up with its new results", async () => {
    const model = new ResultsModel(2);
    for (const query of ["bearer token", "connection pool", "route matching"]) {
      const { results } = await server.connection.sendRequest(SearchRequest, { query, topK: 5 });
      model.add(query, results);
    }
    assert.deepEqual(model.all.map((search) => search.query), ["route matching", "connection pool"]);
    model.add("connection pool", []);
    assert.deepEqual(model.all.map((search) => [search.query, search.count]), [["connection pool", 0], ["route matching", model.all[1]?.count]]);
    model.clear();
    assert.equal(model.all.length, 0);
  });
});
