// Smoke test in a real VS Code: code-server (VS Code 1.100 server + web workbench) with the built
// .vsix installed into a throwaway profile, driven by Debian's Chromium through playwright-core.
// The extension host is a Node process on this machine, so the real extension starts the real
// `ragls serve`. Steps: open a fixture workspace, wait for the status bar to show the index,
// run "ragls: Search Workspace" for a known query, check the quick pick shows the expected file,
// press Enter and check the editor landed on the expected line. A screenshot is kept either way.
//
// node smoke.cjs --code-server BIN --vsix FILE --server-command JSON --screenshot FILE [--keep]
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
    "ragls.server.command": serverCommand,
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
