--- The :Ragls subcommands: each asks the server and hands the answer to ragls.ui.
local M = {}

local client_mod = require("ragls.client")
local config = require("ragls.config")
local protocol = require("ragls.protocol")
local ui = require("ragls.ui")

--- Run fn(query) with the given query, or the one the user types at a prompt.
local function with_query(query, prompt, fn)
  if query and vim.trim(query) ~= "" then
    fn(query)
    return
  end
  vim.ui.input({ prompt = prompt }, function(input)
    if input and vim.trim(input) ~= "" then
      fn(input)
    end
  end)
end

--- Send method to the current client; on_result(result, client) runs unless it failed.
local function ask(method, params, on_result)
  local client = client_mod.current()
  if not client then
    ui.say("no server for this workspace; see :checkhealth ragls", vim.log.levels.ERROR)
    return
  end
  client_mod.request(client, method, params, function(err, result)
    if err then
      ui.say(method .. " failed: " .. err, vim.log.levels.ERROR)
    else
      on_result(result, client)
    end
  end)
end

local function show_results(answer, query, use_quickfix, client)
  local results = answer.results or {}
  if answer.complete == false then
    ui.say("the first index is still running; results may be incomplete", vim.log.levels.WARN)
  end
  if #results == 0 then
    ui.say(("no results for %q"):format(query), vim.log.levels.WARN)
  elseif use_quickfix then
    ui.to_quickfix(results, query)
  else
    ui.select(results, query, client.offset_encoding)
  end
end

--- :Ragls search[!] [query]: pick a result (or fill the quickfix list) and open it.
---@param query string|nil
---@param opts {quickfix: boolean|nil}|nil
function M.search(query, opts)
  opts = opts or {}
  local options = config.get()
  local use_quickfix = opts.quickfix or options.picker == "quickfix"
  with_query(query, "ragls search: ", function(q)
    ask(protocol.SEARCH, protocol.params({ query = q, topK = options.top_k }), function(answer, client)
      show_results(answer, q, use_quickfix, client)
    end)
  end)
end

--- :Ragls context [query]: the context prompt in a scratch buffer and in a register.
---@param query string|nil
---@param opts {format: string|nil}|nil
function M.context(query, opts)
  opts = opts or {}
  local options = config.get()
  local params = { topK = options.context_top_k, format = opts.format or options.context_format }
  with_query(query, "ragls context: ", function(q)
    params.query = q
    ask(protocol.CONTEXT_PROMPT, protocol.params(params), function(answer)
      local register = config.context_register(options)
      vim.fn.setreg(register, answer.prompt)
      ui.scratch(ui.CONTEXT_BUFFER_NAME, vim.split(answer.prompt, "\n"), options.context_open)
      ui.say(("context for %q: %d results, in register %s"):format(q, #(answer.results or {}), register))
    end)
  end)
end

local function remember_status(client, answer)
  client_mod.last_status[client.id] = answer
  vim.cmd("redrawstatus")
end

--- :Ragls reindex[!]: reindex changed files (bang: everything); reports when done.
---@param full boolean|nil
function M.reindex(full)
  ui.say(full and "full reindex started" or "reindex started")
  ask(protocol.REINDEX, protocol.params({ full = full == true }), function(answer, client)
    remember_status(client, answer)
    ui.say("reindex done\n" .. table.concat(ui.status_lines(answer), "\n"))
  end)
end

--- :Ragls status: state, files, chunks, generation, last index time and skipped files per folder.
function M.status()
  ask(protocol.STATUS, protocol.params(), function(answer, client)
    remember_status(client, answer)
    ui.say(table.concat(ui.status_lines(answer), "\n"))
  end)
end

--- :Ragls symbols [query]: workspace symbols through Neovim's standard UI (an empty query lists all).
---@param query string|nil nil prompts for one
function M.symbols(query)
  if query == nil then
    vim.ui.input({ prompt = "ragls symbols: " }, function(input)
      if input then
        M.symbols(input)
      end
    end)
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_mod.attach(bufnr) or client_mod.current(bufnr)
  if not client then
    ui.say("no server for this workspace; see :checkhealth ragls", vim.log.levels.ERROR)
  elseif vim.lsp.buf_is_attached(bufnr, client.id) then
    client_mod.when_ready(client, function() vim.lsp.buf.workspace_symbol(query) end)
  else
    M.symbols_to_quickfix(client, query)
  end
end

--- workspace/symbol from one client into the quickfix list, for buffers outside the workspace.
---@param client vim.lsp.Client
---@param query string
function M.symbols_to_quickfix(client, query)
  client_mod.request(client, "workspace/symbol", { query = query }, function(err, result)
    if err then
      ui.say("workspace/symbol failed: " .. err, vim.log.levels.ERROR)
      return
    end
    local items = vim.lsp.util.symbols_to_items(result or {}, 0, client.offset_encoding)
    vim.fn.setqflist({}, " ", { title = "ragls symbols: " .. query, items = items })
    vim.cmd("botright copen")
  end)
end

-- name -> function(args: string|nil, bang: boolean)
M.subcommands = {
  search = function(args, bang) M.search(args, { quickfix = bang }) end,
  context = function(args) M.context(args) end,
  reindex = function(_, bang) M.reindex(bang) end,
  status = function() M.status() end,
  symbols = function(args) M.symbols(args) end,
}

--- Completion for :Ragls: the subcommand names.
function M.complete(arg_lead, cmdline)
  if cmdline:match("^%S+%s+%S+%s") then
    return {}
  end
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  return vim.tbl_filter(function(name) return vim.startswith(name, arg_lead) end, names)
end

--- Run :Ragls with the user command's opts (`:Ragls search! q` and `:Ragls! search q` both set bang).
function M.run(opts)
  local name, rest = (opts.args or ""):match("^%s*(%S+)%s*(.-)%s*$")
  local bang = opts.bang
  if name and name:sub(-1) == "!" then
    name, bang = name:sub(1, -2), true
  end
  local subcommand = name and M.subcommands[name]
  if not subcommand then
    ui.say(("unknown subcommand %q; use one of: %s"):format(name or "", table.concat(M.complete("", "Ragls "), ", ")),
      vim.log.levels.ERROR)
    return
  end
  subcommand(rest ~= "" and rest or nil, bang)
end

return M
