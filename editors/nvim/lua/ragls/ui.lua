--- Everything the user sees: result lists (vim.ui.select or quickfix), opening a result,
--- the context scratch buffer, messages and status lines.
local M = {}

local protocol = require("ragls.protocol")

M.CONTEXT_BUFFER_NAME = "ragls://context"

--- Tell the user something through vim.notify (so notification plugins show it).
---@param message string
---@param level integer|nil a vim.log.levels value
function M.say(message, level)
  vim.notify("ragls: " .. message, level or vim.log.levels.INFO)
end

--- "file:15-45" for a result, or its id when it is an added document.
---@param result table a RagResult
function M.location_label(result)
  local metadata = result.metadata or {}
  if metadata.file and metadata.startLine then
    return ("%s:%d-%d"):format(metadata.file, metadata.startLine, metadata.endLine or metadata.startLine)
  end
  return result.id
end

--- One line per result: location, symbol and score.
---@param result table a RagResult
function M.format_result(result)
  local symbol = protocol.value((result.metadata or {}).symbol)
  local parts = { M.location_label(result) }
  if symbol and symbol ~= "" then
    parts[#parts + 1] = symbol
  end
  parts[#parts + 1] = ("(%.4f)"):format(result.score or 0)
  return table.concat(parts, "  ")
end

local function first_line(text)
  return ((text or ""):match("^%s*([^\n]*)") or "")
end

--- A quickfix item for a result (added documents have no file and only text).
---@param result table a RagResult
function M.quickfix_item(result)
  local item = { text = M.format_result(result) .. "  " .. first_line(result.content) }
  local uri, range = protocol.value(result.uri), protocol.value(result.range)
  if uri and range then
    item.filename = vim.uri_to_fname(uri)
    item.lnum = range.start.line + 1
    item.col = range.start.character + 1
    item.end_lnum = protocol.value((result.metadata or {}).endLine)
  end
  return item
end

--- Put results into the quickfix list (titled with the query) and open it.
---@param results table[]
---@param query string
function M.to_quickfix(results, query)
  local items = vim.tbl_map(M.quickfix_item, results)
  vim.fn.setqflist({}, " ", { title = "ragls: " .. query, items = items })
  vim.cmd("botright copen")
end

--- Show a read-only scratch buffer with lines, reusing the one named name.
---@param name string
---@param lines string[]
---@param open_command string Ex command that opens a window, e.g. "botright split"
---@return integer bufnr
function M.scratch(name, lines, open_command)
  local bufnr = vim.fn.bufnr("^" .. vim.pesc(name) .. "$")
  if bufnr == -1 then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
    vim.bo[bufnr].bufhidden = "hide"
    vim.bo[bufnr].filetype = "markdown"
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  local window = vim.fn.bufwinid(bufnr)
  if window == -1 then
    vim.cmd(open_command)
    vim.api.nvim_win_set_buf(0, bufnr)
  else
    vim.api.nvim_set_current_win(window)
  end
  return bufnr
end

--- The byte column of a position's character (counted in encoding units) on a line.
local function byte_column(text, character, encoding)
  if encoding == "utf-8" then
    return math.min(character, #text)
  end
  local ok, column
  if vim.fn.has("nvim-0.11") == 1 then
    ok, column = pcall(vim.str_byteindex, text, encoding, character, false)
  else
    ok, column = pcall(vim.str_byteindex, text, character, encoding == "utf-16")
  end
  return ok and column or 0
end

--- Open a result: its file at the chunk's range (kept in the jumplist), or an added document's content.
---@param result table a RagResult
---@param offset_encoding string|nil the client's position encoding (default utf-16)
function M.open_result(result, offset_encoding)
  local uri, range = protocol.value(result.uri), protocol.value(result.range)
  if not (uri and range) then
    M.scratch("ragls://document/" .. result.id, vim.split(result.content or "", "\n"), "botright split")
    return
  end
  vim.cmd("normal! m'")
  vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(uri)))
  local line = math.min(range.start.line + 1, vim.api.nvim_buf_line_count(0))
  local text = vim.api.nvim_buf_get_lines(0, line - 1, line, false)[1] or ""
  vim.api.nvim_win_set_cursor(0, { line, byte_column(text, range.start.character, offset_encoding or "utf-16") })
  vim.cmd("normal! zv")
end

--- Let the user pick a result with vim.ui.select (telescope, fzf-lua... replace it) and open it.
---@param results table[]
---@param query string
---@param offset_encoding string
function M.select(results, query, offset_encoding)
  vim.ui.select(results, {
    prompt = ("ragls: %s"):format(query),
    kind = "ragls.result",
    format_item = M.format_result,
  }, function(choice)
    if choice then
      M.open_result(choice, offset_encoding)
    end
  end)
end

local function skipped_text(skipped)
  local parts = {}
  for reason, count in pairs(protocol.value(skipped) or {}) do
    parts[#parts + 1] = ("%s %d"):format(reason, count)
  end
  table.sort(parts)
  return #parts > 0 and table.concat(parts, ", ") or "none"
end

--- Lines describing one FolderStatus.
---@param status table
---@return string[]
function M.folder_status_lines(status)
  local lines = {
    ("%s: %s"):format(protocol.value(status.indexedPath) or status.folder, status.state),
    ("  files %d, chunks %d, documents %d, generation %d"):format(
      status.files or 0,
      status.chunks or 0,
      status.documents or 0,
      status.generation or 0
    ),
    ("  last indexed %s"):format(protocol.value(status.lastIndexedAt) or "never"),
    ("  skipped: %s"):format(skipped_text(status.skipped)),
  }
  local vectors = protocol.value(status.vectors)
  if vectors then
    lines[#lines + 1] = ("  vectors: %s, %d/%d embedded"):format(vectors.model, vectors.embedded, vectors.total)
  end
  local err = protocol.value(status.error)
  if err then
    lines[#lines + 1] = "  error: " .. tostring(err)
  end
  return lines
end

--- Lines describing a rag/status answer.
---@param answer table {folders = FolderStatus[]}
---@return string[]
function M.status_lines(answer)
  local lines = {}
  for _, status in ipairs(answer.folders or {}) do
    vim.list_extend(lines, M.folder_status_lines(status))
  end
  if #lines == 0 then
    lines[1] = "no folders"
  end
  return lines
end

return M
