// Settings: every PROTOCOL.md key with its default, and the real server takes them without complaint.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { clientSettings, SERVER_KEYS, serverSettings, serverSettingsChanged } from "../../src/models/settings";
import { DEFAULT_SERVER_SETTINGS, SearchRequest } from "../../src/protocol";
import { TestServer, Workspace } from "./server";

const PACKAGE = JSON.parse(readFileSync(path.resolve(__dirname, "..", "..", "..", "package.json"), "utf8")) as {
  contributes: { configuration: { properties: Record<string, { default?: unknown; description?: string; markdownDescription?: string }> } };
};

describe("settings", () => {
  const properties = PACKAGE.contributes.configuration.properties;

  it("declares every server key in package.json with a description and PROTOCOL.md's default", () => {
    for (const key of SERVER_KEYS) {
      const property = properties[`ragls.${key}`];
      assert.ok(property, `ragls.${key} is missing from package.json`);
      assert.ok(property.description ?? property.markdownDescription, `ragls.${key} has no description`);
      assert.deepEqual(property.default, DEFAULT_SERVER_SETTINGS[key], `ragls.${key} default`);
    }
    for (const [key, property] of Object.entries(properties)) {
      assert.ok("default" in property, `${key} has no default`);
      assert.ok(property.description ?? property.markdownDescription, `${key} has no description`);
    }
  });

  it("fills unset keys with defaults and passes set ones through", () => {
    assert.deepEqual(serverSettings(() => undefined), DEFAULT_SERVER_SETTINGS);
    const read = (key: string): unknown => ({ maxChunksPerFile: 1, watch: "off" })[key];
    assert.deepEqual(serverSettings(read), { ...DEFAULT_SERVER_SETTINGS, maxChunksPerFile: 1, watch: "off" });
  });

  it("reads the extension's own settings with safe fallbacks", () => {
    const read = (key: string): unknown =>
      ({ "contextPrompt.format": "plain", "search.topK": 0, "search.debounceMs": 40 })[key];
    assert.deepEqual(clientSettings(read), {
      serverCommand: undefined,
      promptFormat: "plain",
      promptTopK: 5,
      searchTopK: 20,
      searchDebounceMs: 40,
    });
  });

  it("knows which changes concern the server", () => {
    assert.equal(serverSettingsChanged((section) => section === "ragls.limits"), true);
    assert.equal(serverSettingsChanged((section) => section === "ragls.search.topK"), false);
  });

  it("sends only the limits the user set, so the strict preset is not overridden by defaults", async () => {
    const read = (key: string): unknown => ({ limits: { preset: "strict", maxFiles: 2 } })[key];
    assert.deepEqual(serverSettings(read).limits, { preset: "strict", maxFiles: 2 });
    const workspace = new Workspace({ "a.py": "x = 1\n", "b.py": "y = 2\n", "c.py": "z = 3\n" });
    const server = await TestServer.start(workspace, { settings: { ...serverSettings(read), embedding: "none" } });
    try {
      const [folder] = await server.waitForIndex(0);
      assert.equal(folder?.state, "failed");
      assert.match(folder?.error ?? "", /maxFiles limit of 2 exceeded \(3 files found\).*`ragls\.limits\.maxFiles`/);
    } finally {
      await server.stop();
      workspace.remove();
    }
  });

  it("is accepted by the real server as initializationOptions, and takes effect", async () => {
    const workspace = new Workspace({
      "big.py": Array.from({ length: 12 }, (_, index) => `def handler_${index}(request):\n    return "refund ${index}"\n\n`).join(""),
    });
    const settings = { ...serverSettings(() => undefined), maxChunksPerFile: 1, embedding: "none" };
    const server = await TestServer.start(workspace, { settings: { ...settings } });
    try {
      await server.waitForIndex();
      const { results } = await server.connection.sendRequest(SearchRequest, { query: "refund handler request", topK: 10 });
      assert.equal(results.length, 1, "maxChunksPerFile: 1 was not applied");
      assert.deepEqual(server.messages, [], "the server complained about the settings");
    } finally {
      await server.stop();
      workspace.remove();
    }
  });
});
