--- The wire contract (PROTOCOL.md v1) as the plugin sees it: method and command names,
--- plus the few helpers that turn wire values into Lua values.
local M = {}

M.SEARCH = "rag/search"
M.CONTEXT_PROMPT = "rag/contextPrompt"
M.STATUS = "rag/status"
M.REINDEX = "rag/reindex"
M.ADD_DOCUMENT = "rag/addDocument"
M.REMOVE_DOCUMENT = "rag/removeDocument"
M.GET_DOCUMENT = "rag/getDocument"
M.LIST_DOCUMENTS = "rag/listDocuments"
M.CLEAR = "rag/clear"

-- Every rag/* method of PROTOCOL.md; a tidy test compares this list with the spec.
M.methods = {
  "rag/search",
  "rag/contextPrompt",
  "rag/status",
  "rag/reindex",
  "rag/addDocument",
  "rag/removeDocument",
  "rag/getDocument",
  "rag/listDocuments",
  "rag/clear",
}

-- The workspace/executeCommand commands of PROTOCOL.md.
M.commands = {
  "ragls.search",
  "ragls.contextPrompt",
  "ragls.reindex",
  "ragls.status",
}

M.FORMATS = { "fenced", "plain" }
M.MAX_TOP_K = 100
-- The settings' `limits` keys (PROTOCOL.md "Configuration"), and the presets `limits.preset` names.
M.LIMITS = { "maxDecodedBytes", "maxFiles", "maxEntries", "maxDepth", "maxFileBytes" }
M.LIMIT_PRESETS = { "default", "strict" }

-- The oldest server whose wire this plugin speaks; checked by :checkhealth.
M.MIN_SERVER_VERSION = "0.1.0"

--- A params object that is sent as `{}` even when empty (an empty Lua table encodes as `[]`).
---@param fields table|nil
---@return table
function M.params(fields)
  local params = vim.empty_dict()
  for key, value in pairs(fields or {}) do
    params[key] = value
  end
  return params
end

--- A wire value with JSON null (vim.NIL) turned into nil.
function M.value(value)
  if value == vim.NIL then
    return nil
  end
  return value
end

return M
