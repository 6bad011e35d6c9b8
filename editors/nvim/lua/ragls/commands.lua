--- The :Ragls subcommands: each asks the server and hands the answer to ragls.ui.
local M = {}

local client_mod = require("ragls.client")
local config = require("ragls.config")
local picker = require("ragls.picker")
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

--- :Ragls symbols[!] [query]: pick a workspace symbol of ragls (or fill the quickfix list) and open it.
--- An empty query lists symbols up to the server's cap.
---@param query string|nil nil prompts for one
---@param opts {quickfix: boolean|nil}|nil
function M.symbols(query, opts)
  opts = opts or {}
  if query == nil then
    vim.ui.input({ prompt = "ragls symbols: " }, function(input)
      if input then
        M.symbols(input, opts)
      end
    end)
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_mod.attach(bufnr) or client_mod.current(bufnr)
  if not client then
    ui.say("no server for this workspace; see :checkhealth ragls", vim.log.levels.ERROR)
    return
  end
  local use_quickfix = opts.quickfix or config.get().picker == "quickfix"
  -- Asked of ragls alone: vim.lsp.buf.workspace_symbol() would mix in every attached server's
  -- symbols, and its quickfix text ("[Method] get") drops the container.
  client_mod.request(client, "workspace/symbol", { query = query }, function(err, result)
    local symbols = protocol.value(result) or {}
    if err then
      ui.say("workspace/symbol failed: " .. err, vim.log.levels.ERROR)
    elseif #symbols == 0 then
      ui.say(("no symbols matching %q"):format(query), vim.log.levels.WARN)
    elseif use_quickfix then
      ui.symbols_to_quickfix(symbols, query)
    else
      ui.select_symbol(symbols, query, client.offset_encoding)
    end
  end)
end

-- name -> function(args: string|nil, bang: boolean)
M.subcommands = {
  search = function(args, bang) M.search(args, { quickfix = bang }) end,
  context = function(args) M.context(args) end,
  reindex = function(_, bang) M.reindex(bang) end,
  status = function() M.status() end,
  symbols = function(args, bang) M.symbols(args, { quickfix = bang }) end,
}

-- What `:Ragls` without a subcommand offers, in this order.
M.menu_items = {
  { name = "search", description = "search the index and open a result" },
  { name = "search", bang = true, description = "search, results into the quickfix list" },
  { name = "context", description = "a context prompt for a language model, into a register" },
  { name = "symbols", description = "find a workspace symbol and open it" },
  { name = "symbols", bang = true, description = "workspace symbols into the quickfix list" },
  { name = "status", description = "the index status of each folder" },
  { name = "reindex", description = "reindex changed files" },
  { name = "reindex", bang = true, description = "reindex every file" },
}

--- "search!   search, results into the quickfix list": one line of the :Ragls menu.
function M.format_menu_item(entry)
  return ("%-9s %s"):format(entry.name .. (entry.bang and "!" or ""), entry.description)
end

--- :Ragls without a subcommand: offer the subcommands through vim.ui.select and run the chosen one.
function M.menu()
  picker.select(M.menu_items, { prompt = "ragls", kind = "ragls.subcommand", format_item = M.format_menu_item },
    function(entry)
      if entry then
        M.subcommands[entry.name](nil, entry.bang == true)
      end
    end)
end

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
  if not name or name == "" then
    M.menu()
    return
  end
  local subcommand = M.subcommands[name]
  if not subcommand then
    ui.say(("unknown subcommand %q; use one of: %s"):format(name, table.concat(M.complete("", "Ragls "), ", ")),
      vim.log.levels.ERROR)
    return
  end
  subcommand(rest ~= "" and rest or nil, bang)
end

return M
