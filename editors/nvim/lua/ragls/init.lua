--- ragls for Neovim: the public API (see :help ragls-api).
local M = {}

local client_mod = require("ragls.client")
local commands = require("ragls.commands")
local config = require("ragls.config")
local protocol = require("ragls.protocol")

M.search = commands.search
M.context = commands.context
M.reindex = commands.reindex
M.show_status = commands.status
M.symbols = commands.symbols
M.menu = commands.menu

--- Configure the plugin (optional: vim.g.ragls works without it) and attach open buffers.
---@param options table|nil see :help ragls-options
function M.setup(options)
  config.setup(options)
  if config.get().autostart then
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        client_mod.attach(bufnr)
      end
    end
  end
end

--- Called for each file buffer that is read or created: start or reuse the server.
---@param bufnr integer
function M.on_buffer(bufnr)
  if config.get().autostart then
    client_mod.attach(bufnr)
  end
end

local function refresh_status(client)
  client_mod.request(client, protocol.STATUS, protocol.params(), function(err, answer)
    if not err then
      client_mod.last_status[client.id] = answer
      vim.cmd("redrawstatus")
    end
  end)
end

--- LspProgress handler: remember ragls's index progress for status(); refresh the status at the end.
---@param event table the autocmd event
function M.on_progress(event)
  local data = event.data or {}
  local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
  if not client or client.name ~= client_mod.NAME then
    return
  end
  local value = data.params and data.params.value or {}
  if value.kind == "end" then
    client_mod.progress[client.id] = nil
    refresh_status(client)
  else
    local previous = client_mod.progress[client.id] or {}
    client_mod.progress[client.id] = {
      title = value.title or previous.title,
      message = value.message or previous.message,
      percentage = value.percentage or previous.percentage,
    }
  end
  vim.cmd("redrawstatus")
end

local function progress_text(progress)
  local text = progress.title or "Indexing"
  if progress.percentage then
    text = ("%s %d%%"):format(text, progress.percentage)
  end
  return progress.message and (text .. " " .. progress.message) or text
end

local function status_text(answer)
  local files, states = 0, {}
  for _, folder in ipairs(answer.folders or {}) do
    files = files + (folder.files or 0)
    states[folder.state] = true
  end
  local state = states.failed and "failed" or states.indexing and "indexing" or "idle"
  return ("%s, %d files"):format(state, files)
end

--- A short text for statuslines: "" without a server, else progress or the last status.
---@param bufnr integer|nil default: the current buffer
---@return string
function M.status(bufnr)
  local clients = vim.lsp.get_clients({ name = client_mod.NAME, bufnr = bufnr or 0 })
  local client = clients[1] or client_mod.all()[1]
  if not client then
    return ""
  end
  local progress = client_mod.progress[client.id]
  if progress then
    return "ragls: " .. progress_text(progress)
  end
  local answer = client_mod.last_status[client.id]
  return "ragls: " .. (answer and status_text(answer) or "starting")
end

return M
