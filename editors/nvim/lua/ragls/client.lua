--- The language server's lifecycle: finding the workspace root, starting `ragls serve`
--- with vim.lsp, attaching buffers, and sending requests on Neovim 0.10 and 0.11+.
local M = {}

local config = require("ragls.config")
local protocol = require("ragls.protocol")

M.NAME = "ragls"

-- 0.11 made client methods take self (client:request); 0.10 only has client.request.
local has_method_calls = vim.fn.has("nvim-0.11") == 1

local missing_reported = {}

-- What the statusline and :checkhealth show: the last rag/status answer and the
-- running index progress, per client id.
M.last_status = {}
M.progress = {}

--- Call a method of an LSP client in the calling convention of this Neovim.
local function call(client, method, ...)
  if has_method_calls then
    return client[method](client, ...)
  end
  return client[method](...)
end

local function normalize(path)
  local normalized = vim.fs.normalize(vim.fn.fnamemodify(path, ":p")):gsub("(.)/$", "%1")
  return normalized
end

local function is_inside(path, root)
  return path == root or vim.startswith(path, root == "/" and root or root .. "/")
end

--- The workspace root of a buffer: root_dir, else the nearest root marker, else the cwd.
---@param bufnr integer
---@return string|nil root, nil when the buffer's file lies outside the cwd fallback
function M.root_for(bufnr)
  local options = config.get()
  local root = options.root_dir
  if vim.is_callable(root) then
    root = root(bufnr)
  end
  if type(root) == "string" then
    return normalize(root)
  end
  if #options.root_markers > 0 then
    local found = vim.fs.root(bufnr, options.root_markers)
    if found then
      return normalize(found)
    end
  end
  local cwd = normalize(vim.fn.getcwd())
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name ~= "" and not is_inside(normalize(name), cwd) then
    return nil
  end
  return cwd
end

--- Whether a buffer is a file of some workspace (any filetype; not help, terminal, scratch...).
---@param bufnr integer
function M.is_workspace_buffer(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= "" and not name:match("^%a[%w+.-]*://")
end

-- Ids of the clients this plugin started: 0.10's get_clients() lists a client only once
-- it has initialized, and a second buffer must not start a second server meanwhile.
local started_ids = {}

--- Every running ragls client, initialized or not.
---@return vim.lsp.Client[]
function M.all()
  local clients, seen = {}, {}
  for _, client in ipairs(vim.lsp.get_clients({ name = M.NAME })) do
    seen[client.id] = true
    clients[#clients + 1] = client
  end
  for client_id in pairs(started_ids) do
    local client = vim.lsp.get_client_by_id(client_id)
    if not client or call(client, "is_stopped") then
      started_ids[client_id] = nil
    elseif not seen[client_id] then
      clients[#clients + 1] = client
    end
  end
  return clients
end

local function serves(client, root)
  for _, folder in ipairs(client.workspace_folders or {}) do
    if normalize(vim.uri_to_fname(folder.uri)) == root then
      return true
    end
  end
  return client.root_dir ~= nil and normalize(client.root_dir) == root
end

--- The running client whose workspace folders include root.
---@param root string
---@return vim.lsp.Client|nil
function M.find(root)
  for _, client in ipairs(M.all()) do
    if serves(client, root) then
      return client
    end
  end
  return nil
end

local function workspace_folders(root, extra)
  local folders, seen = {}, {}
  for _, path in ipairs(vim.list_extend({ root }, extra)) do
    local dir = normalize(path)
    if not seen[dir] then
      seen[dir] = true
      folders[#folders + 1] = { uri = vim.uri_from_fname(dir), name = dir }
    end
  end
  return folders
end

--- The vim.lsp client config for a root.
---@param root string
---@param options ragls.Config
function M.lsp_config(root, options)
  local settings = protocol.params(options.settings)
  if next(options.limits or {}) ~= nil then
    -- The `limits` option wins over `settings.limits`, key by key.
    settings.limits = protocol.params(vim.tbl_extend("force", settings.limits or {}, options.limits))
  end
  return {
    name = M.NAME,
    cmd = options.cmd,
    root_dir = root,
    workspace_folders = workspace_folders(root, options.workspace_folders),
    init_options = settings,
    settings = { ragls = settings },
  }
end

local function report_missing(command)
  if missing_reported[command] then
    return
  end
  missing_reported[command] = true
  vim.notify(
    ("ragls: the server command %q was not found or is not executable. Fix: `pip install ragls` "
      .. "(or put it on PATH), or set vim.g.ragls = { cmd = { \"/path/to/ragls\", \"serve\" } }; "
      .. "see :checkhealth ragls"):format(command),
    -- A warning, as for bad options: this runs inside BufReadPost, where an error aborts the :edit.
    vim.log.levels.WARN
  )
end

local function start_new(lsp_config)
  if has_method_calls then
    return vim.lsp.start(lsp_config, { attach = false, reuse_client = function() return false end })
  end
  return vim.lsp.start_client(lsp_config)
end

--- The client for root, started when none runs yet; nil (with a message) when it cannot start.
---@param root string
---@return vim.lsp.Client|nil
function M.ensure(root)
  local client = M.find(root)
  if client then
    return client
  end
  local options = config.get()
  if vim.fn.executable(options.cmd[1]) ~= 1 then
    report_missing(options.cmd[1])
    return nil
  end
  local client_id = start_new(M.lsp_config(root, options))
  if not client_id then
    return nil
  end
  started_ids[client_id] = true
  return vim.lsp.get_client_by_id(client_id)
end

--- Attach a workspace buffer to the client of its root (starting the server if needed).
---@param bufnr integer
---@return vim.lsp.Client|nil
function M.attach(bufnr)
  if not M.is_workspace_buffer(bufnr) then
    return nil
  end
  local root = M.root_for(bufnr)
  local client = root and M.ensure(root)
  if client and not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
  return client
end

--- The client attached to the buffer, else the one for the buffer's (or the cwd's) root.
---@param bufnr integer|nil
---@return vim.lsp.Client|nil
function M.current(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local attached = vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr })
  if attached[1] then
    return attached[1]
  end
  local root = M.is_workspace_buffer(bufnr) and M.root_for(bufnr) or normalize(vim.fn.getcwd())
  return M.ensure(root)
end

--- Run fn(client) once the client has finished initializing (polling, with a timeout).
---@param client vim.lsp.Client
---@param fn fun(client: vim.lsp.Client)
function M.when_ready(client, fn)
  local deadline = vim.uv.now() + config.get().timeout_ms
  local function poll()
    if client.initialized then
      fn(client)
    elseif client.is_stopped and call(client, "is_stopped") then
      vim.notify("ragls: the server stopped before it was ready; see :LspLog", vim.log.levels.ERROR)
    elseif vim.uv.now() > deadline then
      vim.notify("ragls: the server did not initialize in time; see :LspLog", vim.log.levels.ERROR)
    else
      vim.defer_fn(poll, 20)
    end
  end
  poll()
end

--- Send a request; callback(err, result) with err a string.
---@param client vim.lsp.Client
---@param method string
---@param params table
---@param callback fun(err: string|nil, result: any)
function M.request(client, method, params, callback)
  M.when_ready(client, function()
    call(client, "request", method, params, function(err, result)
      callback(err and (err.message or vim.inspect(err)) or nil, result)
    end)
  end)
end

--- Send a request and wait for its answer; returns result, err (a string).
---@param client vim.lsp.Client
---@param method string
---@param params table
---@param timeout_ms integer|nil
function M.request_sync(client, method, params, timeout_ms)
  timeout_ms = timeout_ms or config.get().timeout_ms
  if not vim.wait(timeout_ms, function() return client.initialized end, 20) then
    return nil, "the server did not initialize within " .. timeout_ms .. " ms"
  end
  local response, err = call(client, "request_sync", method, params, timeout_ms)
  if not response then
    return nil, tostring(err or "no answer")
  end
  if response.err then
    return nil, response.err.message or vim.inspect(response.err)
  end
  return response.result
end

--- Stop every ragls client.
function M.stop_all()
  for _, client in ipairs(M.all()) do
    call(client, "stop")
  end
end

return M
