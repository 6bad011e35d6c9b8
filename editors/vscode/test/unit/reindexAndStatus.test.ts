// Reindex, Show Status and the status-bar item, fed by the real server's $/progress and rag/status.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { reindexWorkspace } from "../../src/models/reindex";
import { describeFolders, fetchStatus, folderName, parseProgressMessage, StatusBarModel } from "../../src/models/status";
import { FIXTURE_FILES, TestServer, Workspace, withIndexedServer } from "./server";

describe("reindex and status", () => {
  let workspace: Workspace;
  let server: TestServer;
  withIndexedServer((started, running) => {
    workspace = started;
    server = running;
  });

  it("drives the status-bar item from the first run's progress, then shows counts", async () => {
    const model = new StatusBarModel();
    assert.equal(model.view().icon, "loading~spin");
    model.setServerState("running");
    const begin = server.progress.find((event) => event.value.kind === "begin");
    assert.ok(begin, "the server sent no $/progress begin");
    // rag/status can say idle before the run's `$/progress` end has reached us: wait for the end.
    await server.waitForProgressEnd(begin.token);
    assert.equal(begin.value.title, "Indexing");
    let sawCounts = false;
    for (const { token, value } of server.progress.filter((event) => event.token === begin.token)) {
      const ended = model.progress(token, value);
      if (!ended && value.kind === "report" && /^\d+\//.test(value.message ?? "")) {
        assert.match(model.view().text, /^ragls \d+\/4$/);
        assert.equal(model.view().icon, "sync~spin");
        sawCounts = true;
      } else if (!ended && value.kind === "report") {
        // The phases without a count (the walk, building the index, saving) say which one it is.
        assert.match(model.view().text, /^ragls (loading|walking|building the index|saving)$/);
      }
      assert.equal(ended, value.kind === "end");
    }
    assert.ok(sawCounts, "no report with a count");
    model.setFolders(await fetchStatus(server.connection));
    const view = model.view();
    assert.match(view.text, /^ragls 4 files · \d+ chunks$/);
    assert.equal(view.error, false);
    assert.match(view.tooltip, /idle, generation 1/);
  });

  it("says indexing, not zero counts, before the first run has reported", async () => {
    const model = new StatusBarModel();
    model.setServerState("running");
    const [folder] = await fetchStatus(server.connection);
    assert.ok(folder);
    model.setFolders([{ ...folder, state: "indexing", generation: 0, files: 0, chunks: 0 }]);
    assert.equal(model.view().text, "ragls indexing");
    model.setFolders([folder]);
    assert.match(model.view().text, /^ragls \d+ files · \d+ chunks$/);
  });

  it("reindexes incrementally and fully, and says what it did", async () => {
    writeFileSync(path.join(workspace.root, "src", "extra.py"), "def refund_payment(order):\n    return order.total\n");
    const incremental = await reindexWorkspace(server.connection, { full: false });
    assert.equal(incremental.failed, false);
    assert.equal(incremental.message, `Reindex of ${path.basename(workspace.root)} done: 5 files, ${incremental.folders[0]?.chunks} chunks.`);
    const full = await reindexWorkspace(server.connection, { full: true });
    assert.match(full.message, /^Full reindex of .* done: 5 files/);
    assert.ok((full.folders[0]?.generation ?? 0) > (incremental.folders[0]?.generation ?? 0));
  });

  it("describes each folder for Show Status", async () => {
    const lines = describeFolders(await fetchStatus(server.connection));
    assert.match(lines[0] ?? "", new RegExp(`^${path.basename(workspace.root)} — idle, generation \\d+$`));
    assert.match(lines[1] ?? "", /^ {2}5 files, \d+ chunks, 0 added documents$/);
    assert.deepEqual(describeFolders([]), ["No workspace folder is open, so nothing is indexed."]);
  });

  it("says which shared index a folder started from, and why one is not used", async () => {
    const [folder] = await fetchStatus(server.connection);
    assert.ok(folder);
    const shared = {
      name: "monorepo",
      source: "postgresql://reader@db/ragls",
      commit: "1f3c5e7a9b2d4f6e8a0c",
      generation: 42,
      publishedAt: "2026-11-30T18:00:00Z",
      files: 86670,
      localFiles: 9,
      vectorModel: null,
      vectors: 0,
      error: null,
    };
    const lines = describeFolders([{ ...folder, sharedIndex: shared }]);
    assert.ok(
      lines.includes("  shared index monorepo (postgresql://reader@db/ragls) at commit 1f3c5e7a9b2d, generation 42: 86670 files from it, 9 indexed here"),
      lines.join("\n"),
    );
    const down = { ...shared, commit: null, generation: null, files: 0, error: "cannot connect" };
    assert.ok(describeFolders([{ ...folder, sharedIndex: down }]).some((line) => line.endsWith(": not used (cannot connect); every file is indexed here")));
  });

  it("parses progress messages and folder names", () => {
    assert.deepEqual(parseProgressMessage("3/10 src/app.py"), { done: 3, total: 10, path: "src/app.py" });
    assert.deepEqual(parseProgressMessage("done"), {});
    assert.equal(folderName("file:///home/me/my%20app/"), "my app");
  });
});

describe("a folder whose run fails", () => {
  let workspace: Workspace;
  let server: TestServer;

  before(async () => {
    workspace = new Workspace(FIXTURE_FILES);
    // Over the file limit: PROTOCOL.md says the run fails with a clear error in the status.
    server = await TestServer.start(workspace, { settings: { limits: { maxFiles: 1 } } });
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  it("turns the status bar red with the error, and Reindex reports the failure", async () => {
    const [first] = await server.waitForIndex(0);
    assert.equal(first?.state, "failed");
    const outcome = await reindexWorkspace(server.connection, { full: true });
    assert.equal(outcome.failed, true);
    assert.match(outcome.message, /^Full reindex failed\. .+: .+/);
    const model = new StatusBarModel();
    model.setServerState("running");
    model.setFolders(outcome.folders);
    const view = model.view();
    assert.equal(view.error, true);
    assert.equal(view.text, "ragls: index failed");
    assert.match(view.tooltip, /maxFiles|files/);
  });

  it("shows a server failure as an error", () => {
    const model = new StatusBarModel();
    model.setServerState("failed", "ragls: cannot find the language server");
    assert.deepEqual(model.view(), {
      text: "ragls",
      icon: "error",
      error: true,
      tooltip: "ragls: cannot find the language server",
    });
  });
});
