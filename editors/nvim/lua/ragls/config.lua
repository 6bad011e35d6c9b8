--- Options: defaults, overlaid by `vim.g.ragls`, overlaid by `require("ragls").setup{}`.
--- Each option is validated with vim.validate under pcall; a bad value is reported once, as a
--- warning with its fix, and replaced by its default.
local M = {}

local protocol = require("ragls.protocol")

---@class ragls.Config
M.defaults = {
  cmd = { "ragls", "serve" },
  root_markers = { ".git" },
  root_dir = nil, -- string, or function(bufnr) -> string|nil
  workspace_folders = {},
  autostart = true,
  settings = {}, -- the server's: weights, embedding, reranker, recency, ... (PROTOCOL.md "Configuration")
  limits = {},
  picker = "select",
  top_k = 10,
  context_top_k = 5,
  context_format = "fenced",
  register = "+",
  context_open = "botright split",
  timeout_ms = 10000,
}

local setup_options = {}
local reported = {}

local function is_string_list(value, allow_empty)
  if type(value) ~= "table" or (not allow_empty and #value == 0) then
    return false
  end
  for index, item in pairs(value) do
    if type(index) ~= "number" or type(item) ~= "string" or item == "" then
      return false
    end
  end
  return true
end

local function one_of(choices)
  return function(value)
    return vim.tbl_contains(choices, value)
  end, table.concat(vim.tbl_map(vim.inspect, choices), " or ")
end

local function integer_in(low, high)
  return function(value)
    return type(value) == "number" and value % 1 == 0 and value >= low and value <= high
  end, ("an integer %d..%d"):format(low, high)
end

local function is_limits(value)
  if type(value) ~= "table" then
    return false
  end
  for key, item in pairs(value) do
    if key == "preset" then
      if not vim.tbl_contains(protocol.LIMIT_PRESETS, item) then
        return false
      end
    elseif not vim.tbl_contains(protocol.LIMITS, key) or type(item) ~= "number" or item % 1 ~= 0 or item < 1 then
      return false
    end
  end
  return true
end

-- name -> { validator function, what a valid value is }
local rules = {
  cmd = { function(v) return is_string_list(v, false) end, 'a non-empty list of strings like { "ragls", "serve" }' },
  root_markers = { function(v) return is_string_list(v, true) end, 'a list of file names like { ".git" }' },
  root_dir = {
    function(v) return v == nil or type(v) == "string" or vim.is_callable(v) end,
    "a directory path or a function(bufnr) returning one",
  },
  workspace_folders = { function(v) return is_string_list(v, true) end, "a list of directory paths" },
  autostart = { function(v) return type(v) == "boolean" end, "true or false" },
  settings = { function(v) return type(v) == "table" end, "a table of server settings (see PROTOCOL.md)" },
  limits = {
    is_limits,
    ('a table of positive integers keyed by %s, and optionally preset = "default" or "strict"'):format(
      table.concat(protocol.LIMITS, ", ")
    ),
  },
  picker = { one_of({ "select", "quickfix" }) },
  top_k = { integer_in(1, protocol.MAX_TOP_K) },
  context_top_k = { integer_in(1, protocol.MAX_TOP_K) },
  context_format = { one_of(protocol.FORMATS) },
  register = {
    function(v) return type(v) == "string" and v:match('^[%w"%+%*]$') ~= nil end,
    'a register name such as "+", \'"\' or "a"',
  },
  context_open = { function(v) return type(v) == "string" and v ~= "" end, 'an Ex command such as "botright split"' },
  timeout_ms = { integer_in(1, 600000) },
}

--- Validate one value with vim.validate (0.11+ takes positional arguments, 0.10 a spec table).
---@return string|nil error
local function validate(name, value, rule)
  local ok, err
  if vim.fn.has("nvim-0.11") == 1 then
    ok, err = pcall(vim.validate, name, value, rule[1], rule[2])
  else
    ok, err = pcall(vim.validate, { [name] = { value, rule[1], rule[2] } })
  end
  return not ok and tostring(err) or nil
end

local function problem_for(name, err)
  local where = ("vim.g.ragls.%s or setup{ %s = ... }"):format(name, name)
  local message = tostring(err):gsub("^.-:%d+: ", "")
  return ("invalid option %s; using the default %s. Fix: set %s to %s"):format(
    message,
    vim.inspect(M.defaults[name]),
    where,
    rules[name][2]
  )
end

--- The raw user options: vim.g.ragls overlaid by setup{} (whole values replace, lists included).
local function raw_options()
  local global = vim.g.ragls
  local problems = {}
  if global ~= nil and type(global) ~= "table" then
    problems[#problems + 1] = ("vim.g.ragls must be a table, got %s; ignored. Fix: vim.g.ragls = { ... }"):format(
      type(global)
    )
    global = {}
  end
  return vim.tbl_extend("force", global or {}, setup_options), problems
end

--- The effective config and the list of problems found in the user's options.
---@return ragls.Config config
---@return string[] problems
function M.resolve()
  local raw, problems = raw_options()
  local config = vim.deepcopy(M.defaults)
  for name, value in pairs(raw) do
    local rule = rules[name]
    if not rule then
      problems[#problems + 1] = ("unknown option %s; ignored. Fix: remove it (see :help ragls-options)"):format(name)
    else
      local err = validate(name, value, rule)
      if err then
        problems[#problems + 1] = problem_for(name, err)
      else
        config[name] = value
      end
    end
  end
  table.sort(problems)
  return config, problems
end

--- The effective config; the problems not reported yet are reported in one warning.
--- A warning, not an error: an error message from inside an autocommand (the BufReadPost that
--- starts the server) shows "Error detected while processing BufReadPost Autocommands", and
--- aborts the script or mapping that opened the file, while the defaults work.
---@return ragls.Config
function M.get()
  local config, problems = M.resolve()
  local new_problems = vim.tbl_filter(function(problem) return not reported[problem] end, problems)
  if #new_problems > 0 then
    for _, problem in ipairs(new_problems) do
      reported[problem] = true
    end
    vim.notify("ragls: " .. table.concat(new_problems, "\nragls: "), vim.log.levels.WARN)
  end
  return config
end

--- Remember options given to setup{} (they win over vim.g.ragls).
---@param options table|nil
function M.setup(options)
  setup_options = options or {}
end

--- The register the context prompt goes to: "+" needs a clipboard provider, else '"'.
---@param config ragls.Config
---@return string
function M.context_register(config)
  local register = config.register
  if (register == "+" or register == "*") and vim.fn.has("clipboard") == 0 then
    return '"'
  end
  return register
end

return M
