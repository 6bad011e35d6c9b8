--- :checkhealth ragls: each problem is reported with its fix.
local M = {}

local client_mod = require("ragls.client")
local config = require("ragls.config")
local protocol = require("ragls.protocol")
local ui = require("ragls.ui")

local health = vim.health

local function check_neovim()
  local version = tostring(vim.version())
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. version)
  else
    health.error("Neovim " .. version .. " is too old", { "Install Neovim 0.10 or newer" })
  end
end

local function check_config()
  local options, problems = config.resolve()
  if #problems == 0 then
    health.ok("config is valid")
  end
  for _, problem in ipairs(problems) do
    local text, fix = problem:match("^(.-)%. Fix: (.*)$")
    health.error(text or problem, { fix or "see :help ragls-options" })
  end
  return options
end

--- The command that prints the server's version: cmd without a trailing "serve", plus --version.
---@param cmd string[]
function M.version_command(cmd)
  local command = vim.deepcopy(cmd)
  if command[#command] == "serve" then
    table.remove(command)
  end
  command[#command + 1] = "--version"
  return command
end

local function version_less(version, minimum)
  local have, want = vim.version.parse(version), vim.version.parse(minimum)
  return have and want and vim.version.lt(have, want)
end

--- Run `<server> --version` with a timeout; returns the version string or nil.
local function check_version(cmd, timeout_ms)
  local command = M.version_command(cmd)
  local ok, process = pcall(vim.system, command, { text = true })
  if not ok then
    health.error(("`%s` failed to start: %s"):format(table.concat(command, " "), process), { "Check the cmd option" })
    return
  end
  -- After a timeout wait() kills the process, but returns nil while a child still holds its pipes.
  local result = process:wait(timeout_ms) or { code = 124 }
  local output = vim.trim((result.stdout or "") .. (result.stderr or ""))
  if result.code == 124 or result.signal == 9 then
    health.error(("`%s` did not answer within %d ms"):format(table.concat(command, " "), timeout_ms), {
      "Run it in a shell to see why it hangs; raise timeout_ms if the machine is slow",
    })
  elseif result.code ~= 0 then
    health.error(("`%s` exited with %d: %s"):format(table.concat(command, " "), result.code, output), {
      "Reinstall the server: pip install --upgrade ragls",
    })
  else
    return output:match("ragls%s+(%S+)") or output
  end
end

local function check_server(options)
  local executable = options.cmd[1]
  local path = vim.fn.exepath(executable)
  if path == "" then
    health.error(("server command %q not found"):format(executable), {
      "pip install ragls (or pipx install ragls) so that `ragls` is on PATH",
      'or set vim.g.ragls = { cmd = { "/path/to/ragls", "serve" } }',
    })
    return
  end
  health.ok(("server command: %s (%s)"):format(table.concat(options.cmd, " "), path))
  local version = check_version(options.cmd, options.timeout_ms)
  if not version then
    return
  end
  if version_less(version, protocol.MIN_SERVER_VERSION) then
    health.error(("ragls %s is older than %s"):format(version, protocol.MIN_SERVER_VERSION), {
      "pip install --upgrade ragls",
    })
  else
    health.ok("ragls " .. version)
  end
end

--- The client's status now, else the last one seen (with a warning).
local function client_status(client, options)
  local answer, err = client_mod.request_sync(client, protocol.STATUS, protocol.params(), options.timeout_ms)
  if answer then
    client_mod.last_status[client.id] = answer
    return answer
  end
  health.warn("rag/status failed: " .. tostring(err), {
    "See :LspLog; restart the server with :lua vim.lsp.stop_client(" .. client.id .. ")",
  })
  return client_mod.last_status[client.id]
end

local function report_client_status(client, options)
  local answer = client_status(client, options) or {}
  for _, folder in ipairs(answer.folders or {}) do
    local text = table.concat(ui.folder_status_lines(folder), "\n")
    if folder.state == "failed" then
      health.error(text, {
        "Fix the error above (the ignore file, or the limits option), then run :Ragls reindex",
      })
    elseif (folder.generation or 0) < 1 then
      health.info(text .. "\n  the first index is still running")
    else
      health.ok(text)
    end
  end
end

local function check_clients(options)
  local clients = client_mod.all()
  if #clients == 0 then
    health.warn("no ragls client is running", {
      "Open a file of a workspace (autostart), or run :Ragls status to start one for the current directory",
    })
    return
  end
  for _, client in ipairs(clients) do
    local buffers = vim.tbl_count(client.attached_buffers or {})
    health.ok(("client %d attached to %d buffer(s), root %s"):format(client.id, buffers, client.root_dir or "?"))
    report_client_status(client, options)
  end
end

function M.check()
  health.start("ragls: Neovim")
  check_neovim()
  health.start("ragls: configuration")
  local options = check_config()
  health.start("ragls: server")
  check_server(options)
  health.start("ragls: clients and index")
  check_clients(options)
end

return M
