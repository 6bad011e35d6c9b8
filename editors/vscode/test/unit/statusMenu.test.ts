// The menu behind the status-bar item, from the real server's rag/status.
import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, it } from "node:test";
import { fetchStatus } from "../../src/models/status";
import { statusMenu, statusTitle } from "../../src/models/statusMenu";
import { TestServer, Workspace, withIndexedServer } from "./server";

describe("statusMenu", () => {
  let workspace: Workspace;
  let server: TestServer;
  withIndexedServer((started, running) => {
    workspace = started;
    server = running;
  });

  it("has the status as its title and search first, so Enter never starts a reindex", async () => {
    const folders = await fetchStatus(server.connection);
    const menu = statusMenu(folders, "running");
    assert.equal(menu.title, `ragls: ${path.basename(workspace.root)}: idle, 4 files, ${folders[0]?.chunks} chunks`);
    assert.deepEqual(
      menu.items.map((item) => item.command),
      ["ragls.searchWorkspace", "ragls.reindexWorkspace", "ragls.reindexWorkspaceFull", "ragls.showOutput", "ragls.openSettings"],
    );
  });

  it("leads with Restart Server when the server is not running", () => {
    const menu = statusMenu(undefined, "failed");
    assert.equal(menu.title, "ragls: the server is not running (failed)");
    assert.equal(menu.items[0]?.command, "ragls.restartServer");
    assert.equal(statusTitle([], "running"), "ragls: no workspace folder is open");
  });
});
