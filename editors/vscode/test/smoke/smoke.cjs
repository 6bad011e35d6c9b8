// Smoke test in a real VS Code: code-server (VS Code 1.100 server + web workbench) with the built
// .vsix installed into a throwaway profile, driven by Debian's Chromium through playwright-core.
// The extension host is a Node process on this machine, so the real extension starts the real
// `ragls serve`. Steps: open a fixture workspace, wait for the status bar to show the index,
// run "ragls: Search Workspace" for a known query, check the quick pick shows the expected file,
// press Enter and check the editor landed on the expected line. A screenshot is kept either way.
//
// node smoke.cjs --code-server BIN --vsix FILE --server-command JSON --screenshot FILE [--keep]
/* global document */ // used inside page.waitForFunction, which runs in the browser
"use strict";
const { spawn, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const net = require("node:net");
const os = require("node:os");
const path = require("node:path");
const { chromium } = require("playwright-core");

const QUERY = "refund a payment to the customer";
const EXPECTED_FILE = "src/billing/refunds.py";
const EXPECTED_SYMBOL = "issue_refund";
const FIXTURE = {
  [EXPECTED_FILE]: [
    '"""Refunds for orders that were paid and then cancelled."""',
    "",
    "from decimal import Decimal",
    "",
    "",
    "class RefundError(Exception):",
    '    """A refund that the payment provider rejected."""',
    // Blank lines keep the class over the 30 lines small neighbours are packed up to, so issue_refund is
    // a result of its own.
    ...Array(25).fill(""),
    '    code = "provider_rejected"',
    "",
    "",
    "# The provider takes amounts in cents.",
    "",
    "def issue_refund(payment, amount: Decimal, reason: str):",
    '    """Refund part or all of a payment to the customer\'s card."""',
    "    if amount > payment.captured:",
    '        raise RefundError("cannot refund more than was captured")',
    "    return payment.provider.refund(payment.id, int(amount * 100), reason)",
    "",
  ].join("\n"),
  "src/catalog/products.py": [
    "class Product:",
    "    def __init__(self, sku, title, price):",
    "        self.sku = sku",
    "        self.title = title",
    "        self.price = price",
    "",
    "",
    "def find_product(products, sku):",
    "    return next((p for p in products if p.sku == sku), None)",
    "",
  ].join("\n"),
  "web/cart.js": [
    "export function cartTotal(items) {",
    "  return items.reduce((sum, item) => sum + item.price * item.quantity, 0);",
    "}",
    "",
  ].join("\n"),
  "README.md": "# Shop\n\nA tiny shop used by the ragls VS Code smoke test.\n",
};
// 1-based, as VS Code's status bar shows it: the result starts at the comment above issue_refund.
const EXPECTED_LINE = FIXTURE[EXPECTED_FILE].split("\n").indexOf("# The provider takes amounts in cents.") + 1;
const BROWSER = process.env.RAGLS_CHROMIUM || "/usr/bin/chromium";

function parseArgs(argv) {
  const args = { keep: false };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i];
    if (key === "--keep") {
      args.keep = true;
    } else {
      args[key.replace(/^--/, "").replace(/-(\w)/g, (_, c) => c.toUpperCase())] = argv[++i];
    }
  }
  for (const needed of ["codeServer", "vsix", "serverCommand", "screenshot"]) {
    if (!args[needed]) {
      throw new Error(`missing --${needed}; usage: smoke.cjs --code-server BIN --vsix FILE --server-command JSON --screenshot FILE`);
    }
  }
  return args;
}

/** `shot.png` -> `shot-quickpick.png`, beside it. */
function shotPath(screenshot, suffix) {
  const parsed = path.parse(path.resolve(screenshot));
  return path.join(parsed.dir, `${parsed.name}-${suffix}${parsed.ext}`);
}

function log(message) {
  process.stdout.write(`smoke: ${message}\n`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The command as the extension gets it: through env, so the smoke test can find the server's process. */
function markedCommand(serverCommand, base) {
  return ["/usr/bin/env", `RAGLS_SMOKE_MARK=${base}`, ...serverCommand];
}

function makeProfile(serverCommand) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "ragls-smoke-"));
  const dirs = {
    base,
    workspace: path.join(base, "shop"),
    userData: path.join(base, "user"),
    extensions: path.join(base, "extensions"),
    home: path.join(base, "home"),
    cache: path.join(base, "ragls-cache"),
  };
  for (const [relative, content] of Object.entries(FIXTURE)) {
    const file = path.join(dirs.workspace, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  fs.mkdirSync(path.join(dirs.userData, "User"), { recursive: true });
  fs.mkdirSync(dirs.home, { recursive: true });
  const settings = {
    "ragls.server.command": markedCommand(serverCommand, base),
    "ragls.cacheDir": dirs.cache,
    "ragls.search.debounceMs": 100,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "extensions.ignoreRecommendations": true,
    "chat.commandCenter.enabled": false,
    // The smoke test types settings.json: no brackets, quotes or indentation added as it types.
    "editor.autoClosingBrackets": "never",
    "editor.autoClosingQuotes": "never",
    "editor.autoIndent": "none",
  };
  fs.writeFileSync(path.join(dirs.userData, "User", "settings.json"), JSON.stringify(settings, null, 2));
  return dirs;
}

function codeServerEnv(dirs) {
  // Nothing lands in the real home: code-server writes its config and data under HOME and XDG dirs.
  return { ...process.env, HOME: dirs.home, XDG_CONFIG_HOME: path.join(dirs.home, ".config"), XDG_DATA_HOME: path.join(dirs.home, ".local", "share"), XDG_CACHE_HOME: path.join(dirs.home, ".cache") };
}

function profileArgs(dirs) {
  return ["--config", path.join(dirs.base, "config.yaml"), "--user-data-dir", dirs.userData, "--extensions-dir", dirs.extensions];
}

function installExtension(args, dirs) {
  const run = spawnSync(args.codeServer, [...profileArgs(dirs), "--install-extension", path.resolve(args.vsix)], {
    env: codeServerEnv(dirs),
    encoding: "utf8",
    timeout: 120000,
  });
  if (run.status !== 0) {
    throw new Error(`--install-extension failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
  }
  log(run.stdout.trim().split("\n").pop());
}

async function startCodeServer(args, dirs, port) {
  const logFile = path.join(dirs.base, "code-server.log");
  const out = fs.openSync(logFile, "w");
  const child = spawn(
    args.codeServer,
    [
      ...profileArgs(dirs),
      "--auth", "none",
      "--bind-addr", `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      dirs.workspace,
    ],
    { env: codeServerEnv(dirs), stdio: ["ignore", out, out], detached: true },
  );
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`code-server exited with ${child.exitCode}:\n${fs.readFileSync(logFile, "utf8")}`);
    }
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.ok) {
        return { child, logFile };
      }
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`code-server did not answer on port ${port} within 60 s:\n${fs.readFileSync(logFile, "utf8")}`);
}

function stopCodeServer(child) {
  if (child && child.exitCode === null) {
    try {
      process.kill(-child.pid, "SIGTERM"); // its whole process group: the extension host and ragls too
    } catch {
      // Already gone.
    }
  }
}

async function statusBarText(page, pattern, timeout) {
  const item = page.locator(".statusbar-item", { hasText: pattern }).first();
  await item.waitFor({ timeout });
  return (await item.innerText()).trim();
}

async function runCommand(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ timeout: 15000 });
  await input.fill(`>${title}`);
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first();
  await row.waitFor({ timeout: 15000 });
  await page.keyboard.press("Enter");
}

async function drive(page, port, dirs, args) {
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.workspace)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 90000 });
  log("workbench loaded");
  const status = await statusBarText(page, /ragls \d+ files · \d+ chunks/, 90000);
  log(`status bar: ${status}`);
  if (!/ragls 4 files · \d+ chunks/.test(status)) {
    throw new Error(`status bar shows "${status}", expected 4 files`);
  }
  await runCommand(page, "ragls: Search Workspace");
  const input = page.locator(".quick-input-widget input");
  await page.locator(".quick-input-widget .quick-input-title", { hasText: "ragls: Search Workspace" }).waitFor({ timeout: 15000 });
  await input.fill(QUERY);
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: EXPECTED_FILE }).first();
  await row.waitFor({ timeout: 30000 });
  const rows = await page.locator(".quick-input-widget .monaco-list-row").allInnerTexts();
  await page.screenshot({ path: shotPath(args.screenshot, "quickpick") });
  log(`quick pick rows:\n  ${rows.map((text) => text.replace(/\s+/g, " ").trim()).join("\n  ")}`);
  const first = (rows[0] || "").replace(/\s+/g, " ");
  if (!first.includes(EXPECTED_SYMBOL) || !first.includes(`${EXPECTED_FILE}:${EXPECTED_LINE}-`)) {
    throw new Error(`the first row is "${first}", expected ${EXPECTED_SYMBOL} in ${EXPECTED_FILE}:${EXPECTED_LINE}-`);
  }
  await page.waitForTimeout(300); // let the preview of the active row settle
  await page.keyboard.press("Enter");
  await page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout: 15000 });
  await page.locator(".tabs-container .tab.active", { hasText: "refunds.py" }).waitFor({ timeout: 15000 });
  const position = await statusBarText(page, /Ln \d+, Col \d+/, 15000);
  log(`editor position: ${position}`);
  const line = Number(/Ln (\d+)/.exec(position)[1]);
  if (line !== EXPECTED_LINE) {
    throw new Error(`the editor landed on line ${line}, expected ${EXPECTED_LINE} (${position})`);
  }
  if (!/selected/.test(position)) {
    throw new Error(`the chunk is not selected (${position})`);
  }
  await checkResultsView(page, args);
  await checkKeybindingAndContextMenu(page, args);
  await checkPromptOffersSelection(page, args);
  await checkStatusMenu(page, args);
  await checkWalkthrough(page, args);
  await checkCrashRestarts(page, dirs, args);
  await checkWrongCommand(page, dirs, args);
}

async function editorLine(page) {
  return Number(/Ln (\d+)/.exec(await statusBarText(page, /Ln \d+, Col \d+/, 15000))[1]);
}

async function focusEditor(page) {
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
}

/** Item 7: the Results panel keeps the search, grouped by file with previews; a click opens the range. */
async function checkResultsView(page, args) {
  await focusEditor(page);
  await page.keyboard.press("Control+Home");
  await runCommand(page, "ragls: Focus on Results View");
  const view = page.locator(".pane", { has: page.locator(".pane-header", { hasText: /Results/i }) }).first();
  const search = view.locator(".monaco-list-row", { hasText: QUERY }).first();
  await search.waitFor({ timeout: 15000 });
  const entry = view.locator(".monaco-list-row", { hasText: `${EXPECTED_SYMBOL} :${EXPECTED_LINE}-` }).first();
  await entry.waitFor({ timeout: 15000 });
  const rows = (await view.locator(".monaco-list-row").allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
  log(`results view rows:\n  ${rows.join("\n  ")}`);
  if (!rows.some((row) => row.startsWith("refunds.py"))) {
    throw new Error("the Results view has no refunds.py file row");
  }
  await page.screenshot({ path: shotPath(args.screenshot, "results") });
  await entry.click();
  await page.waitForTimeout(500);
  const line = await editorLine(page);
  log(`results view click: Ln ${line}`);
  if (line !== EXPECTED_LINE) {
    throw new Error(`clicking the result landed on line ${line}, expected ${EXPECTED_LINE}`);
  }
}

/** Selects the first line of the active editor. */
async function selectFirstLine(page) {
  await focusEditor(page);
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("Shift+End");
  await page.waitForTimeout(200);
}

const FIRST_LINE = FIXTURE[EXPECTED_FILE].split("\n")[0];

/** Item 6: Ctrl+Alt+R searches (for the selection when there is one); the context menu has both entries. */
async function checkKeybindingAndContextMenu(page, args) {
  await focusEditor(page);
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Control+Alt+KeyR");
  const input = page.locator(".quick-input-widget input");
  await page.locator(".quick-input-widget .quick-input-title", { hasText: "ragls: Search Workspace" }).waitFor({ timeout: 15000 });
  if ((await input.inputValue()) !== "") {
    throw new Error(`Ctrl+Alt+R without a selection prefilled "${await input.inputValue()}"`);
  }
  await page.keyboard.press("Escape");
  await page.waitForTimeout(300);
  await selectFirstLine(page);
  await page.keyboard.press("Control+Alt+KeyR");
  await page.locator(".quick-input-widget .quick-input-title", { hasText: "ragls: Search Workspace" }).waitFor({ timeout: 15000 });
  await page.waitForFunction((expected) => document.querySelector(".quick-input-widget input")?.value === expected, FIRST_LINE, { timeout: 15000 });
  log(`Ctrl+Alt+R with a selection searches for: ${await input.inputValue()}`);
  await page.keyboard.press("Escape");
  await page.waitForTimeout(500); // closing returns to the editor as it was before the previews
  await selectFirstLine(page);
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click({ button: "right", position: { x: 40, y: 8 } });
  const menu = page.locator(".monaco-menu");
  await menu.locator(".action-label", { hasText: "Search Workspace for Selection" }).first().waitFor({ timeout: 15000 });
  await menu.locator(".action-label", { hasText: "Copy Context Prompt for Selection" }).first().waitFor({ timeout: 15000 });
  log("editor context menu: Search Workspace for Selection, Copy Context Prompt for Selection");
  await page.screenshot({ path: shotPath(args.screenshot, "context-menu") });
  await page.keyboard.press("Escape");
}

/** Item 5: Copy Context Prompt offers the selection in an input box instead of using it. */
async function checkPromptOffersSelection(page, args) {
  await selectFirstLine(page);
  await runCommand(page, "ragls: Copy Context Prompt");
  await page.locator(".quick-input-widget .quick-input-title", { hasText: "ragls: Context Prompt" }).waitFor({ timeout: 15000 });
  await page.waitForFunction((expected) => document.querySelector(".quick-input-widget input")?.value === expected, FIRST_LINE, { timeout: 15000 });
  log(`Copy Context Prompt offers: ${await page.locator(".quick-input-widget input").inputValue()}`);
  await page.screenshot({ path: shotPath(args.screenshot, "prompt-input") });
  await page.keyboard.press("Escape");
  await page.waitForTimeout(500);
  if ((await toastTexts(page)).some((text) => text.includes("Copied"))) {
    throw new Error("Copy Context Prompt copied although the question box was dismissed");
  }
}

/** Item 4: the status-bar item opens a quick pick titled with the status, search first. */
async function checkStatusMenu(page, args) {
  await page.locator(".statusbar-item", { hasText: /ragls \d+ files/ }).first().click();
  const title = page.locator(".quick-input-widget .quick-input-title", { hasText: /ragls: shop: idle, 4 files, \d+ chunks/ });
  await title.waitFor({ timeout: 15000 });
  const rows = (await page.locator(".quick-input-widget .monaco-list-row").allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
  log(`status menu "${(await title.innerText()).trim()}":\n  ${rows.join("\n  ")}`);
  const wanted = ["Search Workspace", "Reindex", "Reindex (Full Rebuild)", "Show Server Log", "Open Settings"];
  if (!wanted.every((label, index) => (rows[index] || "").startsWith(label))) {
    throw new Error(`the status menu rows are ${JSON.stringify(rows)}, expected ${JSON.stringify(wanted)}`);
  }
  if ((await page.locator(".monaco-dialog-box").count()) > 0) {
    throw new Error("the status-bar item opened a modal dialog");
  }
  await page.screenshot({ path: shotPath(args.screenshot, "status-menu") });
  await page.keyboard.press("Escape");
}

/** Item 8: the walkthrough opens from ragls: Get Started. */
async function checkWalkthrough(page, args) {
  await runCommand(page, "ragls: Get Started");
  await page.getByText("Get started with ragls").first().waitFor({ timeout: 20000 });
  await page.getByText("Install the ragls server").first().waitFor({ timeout: 15000 });
  log("walkthrough: Get started with ragls");
  await page.screenshot({ path: shotPath(args.screenshot, "walkthrough") });
  // The walkthrough page keeps F1 to itself: back to the editor.
  await page.locator(".tabs-container .tab", { hasText: "refunds.py" }).first().click();
  await focusEditor(page);
}

/** Items 1 and 8: settings open on the `@ext:` query, in our order, under "ragls". */
async function checkSettings(page, args, how) {
  const search = page.locator(".settings-editor .settings-header .suggest-input-container .view-lines");
  await page.waitForFunction(() => /@ext:ragls\.ragls/.test(document.querySelector(".settings-editor .settings-header .view-lines")?.textContent || ""), null, { timeout: 20000 });
  const rows = page.locator(".settings-editor .setting-item-contents .setting-item-title");
  await rows.first().waitFor({ timeout: 15000 });
  const titles = (await rows.allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
  const tabs = (await page.locator(".settings-editor .settings-tabs-widget .action-label").allInnerTexts()).map((text) => text.trim());
  log(`settings (${how}) search "${(await search.innerText()).trim()}", tabs ${JSON.stringify(tabs)}:\n  ${titles.join("\n  ")}`);
  // The User tab lists the window's settings in our order; server.command (machine-overridable) is on Remote.
  const wanted = ["Search: Top K", "Search: Debounce Ms", "Context Prompt: Format", "Context Prompt: Top K"];
  if (!wanted.every((label, index) => (titles[index] || "").endsWith(label))) {
    throw new Error(`the settings are ${JSON.stringify(titles)}, expected them to start ${JSON.stringify(wanted)}`);
  }
  if (!tabs.some((tab) => tab.startsWith("Remote"))) {
    throw new Error(`no Remote tab: ${JSON.stringify(tabs)}`);
  }
  await page.screenshot({ path: shotPath(args.screenshot, `settings-${how}`) });
}

/** The `ragls serve` processes this code-server started (their environment carries the marker). */
function serverPids(dirs) {
  const pids = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (environ.includes(`RAGLS_SMOKE_MARK=${dirs.base}`) && cmdline.includes("ragls") && !cmdline.startsWith("/usr/bin/env")) {
        pids.push(Number(entry));
      }
    } catch {
      // Gone, or not ours.
    }
  }
  return pids;
}

async function waitForServer(dirs, except, timeout) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const pids = serverPids(dirs).filter((pid) => !except.includes(pid));
    if (pids.length > 0) {
      return pids;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no new ragls server process within ${timeout} ms`);
}

async function toastTexts(page) {
  return (await page.locator(".notifications-toasts .notification-toast").allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
}

async function clearNotifications(page) {
  await runCommand(page, "Notifications: Clear All Notifications");
  await page.waitForTimeout(300);
}

/** Item 3: a killed server comes back 3 times; the 4th crash in 3 minutes offers Restart. */
async function checkCrashRestarts(page, dirs, args) {
  await clearNotifications(page);
  let pids = await waitForServer(dirs, [], 15000);
  for (let crash = 1; crash <= 3; crash++) {
    for (const pid of pids) {
      process.kill(pid, "SIGKILL");
    }
    const fresh = await waitForServer(dirs, pids, 30000);
    await statusBarText(page, /ragls \d+ files · \d+ chunks/, 30000);
    log(`crash ${crash}: server ${pids.join(",")} killed, restarted as ${fresh.join(",")}`);
    pids = fresh;
    await page.waitForTimeout(500);
  }
  if ((await toastTexts(page)).length > 0) {
    throw new Error(`restarts within the bound showed toasts: ${JSON.stringify(await toastTexts(page))}`);
  }
  for (const pid of pids) {
    process.kill(pid, "SIGKILL");
  }
  const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "was killed by SIGKILL" });
  await toast.waitFor({ timeout: 20000 });
  await page.waitForTimeout(1500);
  const texts = await toastTexts(page);
  log(`crash 4 toasts: ${JSON.stringify(texts)}`);
  if (texts.length !== 1 || !/more than 3 times in 3 minutes/.test(texts[0])) {
    throw new Error(`expected one toast about the bound, got ${JSON.stringify(texts)}`);
  }
  if (serverPids(dirs).length > 0) {
    throw new Error("the server was restarted a 4th time");
  }
  await page.screenshot({ path: shotPath(args.screenshot, "crash") });
  await toast.locator(".monaco-button", { hasText: "Restart" }).first().click();
  await waitForServer(dirs, pids, 30000);
  await statusBarText(page, /ragls \d+ files · \d+ chunks/, 30000);
  log("Restart from the toast: the server runs again");
}

/** Item 2: a command without `serve` gives one toast in our words; its Open Settings shows the `@ext:` query. */
async function checkWrongCommand(page, dirs, args) {
  await clearNotifications(page);
  const settingsFile = path.join(dirs.userData, "User", "settings.json");
  const settings = JSON.parse(fs.readFileSync(settingsFile, "utf8"));
  settings["ragls.server.command"] = settings["ragls.server.command"].filter((part) => part !== "serve");
  // Through the editor, as a user would (code-server's file watcher may not see a write from outside).
  // ragls.server.command is machine-overridable: in code-server's remote window the Remote settings hold it.
  await runCommand(page, "Preferences: Open Remote Settings (JSON)");
  await page.locator(".tabs-container .tab.active", { hasText: "settings.json" }).waitFor({ timeout: 15000 });
  await page.waitForTimeout(500);
  await focusEditor(page);
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(JSON.stringify({ "ragls.server.command": settings["ragls.server.command"] }));
  // The JSON editor still closes the first brace and quote by itself: drop what follows the cursor.
  await page.keyboard.press("Shift+Control+End");
  await page.keyboard.press("Delete");
  await page.keyboard.press("Control+S");
  const changed = page.locator(".notifications-toasts .notification-toast", { hasText: "the server command changed" });
  await changed.waitFor({ timeout: 20000 });
  await changed.locator(".monaco-button", { hasText: "Restart Server" }).click();
  const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "exited with code 2" });
  await toast.waitFor({ timeout: 30000 });
  await page.waitForTimeout(4000); // any second or third toast would have arrived by now
  const texts = await toastTexts(page);
  log(`wrong command toasts: ${JSON.stringify(texts)}`);
  if (texts.length !== 1) {
    throw new Error(`a wrong command showed ${texts.length} toasts: ${JSON.stringify(texts)}`);
  }
  const [text] = texts;
  for (const needed of ["-m ragls`", "exited with code 2", "usage: ragls", "Open Settings", "Show Log"]) {
    if (!text.includes(needed)) {
      throw new Error(`the toast "${text}" lacks "${needed}"`);
    }
  }
  await page.screenshot({ path: shotPath(args.screenshot, "wrong-command") });
  await toast.locator(".monaco-button", { hasText: "Open Settings" }).click();
  await checkSettings(page, args, "from-error");
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const serverCommand = JSON.parse(args.serverCommand);
  const dirs = makeProfile(serverCommand);
  log(`profile and workspace in ${dirs.base}`);
  installExtension(args, dirs);
  const port = await freePort();
  let codeServer;
  let browser;
  let ok = false;
  try {
    codeServer = await startCodeServer(args, dirs, port);
    log(`code-server on 127.0.0.1:${port}`);
    browser = await chromium.launch({
      executablePath: BROWSER,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    fs.mkdirSync(path.dirname(path.resolve(args.screenshot)), { recursive: true });
    try {
      await drive(page, port, dirs, args);
      ok = true;
    } finally {
      await page.screenshot({ path: args.screenshot });
      log(`screenshot: ${args.screenshot}`);
    }
  } catch (error) {
    log(`FAILED: ${error && error.stack ? error.stack : error}`);
    if (codeServer) {
      log(`code-server log tail:\n${fs.readFileSync(codeServer.logFile, "utf8").split("\n").slice(-30).join("\n")}`);
    }
    dumpExtensionLog(dirs);
  } finally {
    if (browser) {
      await browser.close();
    }
    stopCodeServer(codeServer && codeServer.child);
    if (!args.keep) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      fs.rmSync(dirs.base, { recursive: true, force: true });
    }
  }
  log(ok ? "PASSED" : "FAILED");
  process.exit(ok ? 0 : 1);
}

function dumpExtensionLog(dirs) {
  // The ragls output channel is written under the profile's logs folder.
  const logs = path.join(dirs.userData, "logs");
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (/ragls|exthost/i.test(entry.name)) {
        found.push(full);
      }
    }
  };
  walk(logs);
  for (const file of found) {
    log(`${path.relative(dirs.base, file)}:\n${fs.readFileSync(file, "utf8").split("\n").slice(-40).join("\n")}`);
  }
}

main().catch((error) => {
  log(`FAILED: ${error && error.stack ? error.stack : error}`);
  process.exit(1);
});
