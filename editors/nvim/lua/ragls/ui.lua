--- Everything the user sees: result lists (vim.ui.select or quickfix), opening a result,
--- the context scratch buffer, messages and status lines.
local M = {}

local picker = require("ragls.picker")
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

--- "[Method] AuthMiddleware.check" for a result's symbol (its kind, as LSP pickers show it), or nil.
---@param result table a RagResult
function M.symbol_text(result)
  local metadata = result.metadata or {}
  local symbol, kind = protocol.value(metadata.symbol), protocol.value(metadata.symbolKind)
  if not symbol or symbol == "" then
    return nil
  end
  if type(kind) == "string" and kind ~= "" then
    return ("[%s%s] %s"):format(kind:sub(1, 1):upper(), kind:sub(2), symbol)
  end
  return symbol
end

--- The first non-blank line of a text, without its indentation.
function M.first_line(text)
  for line in vim.gsplit(text or "", "\n", { plain = true }) do
    if line:match("%S") then
      return vim.trim(line)
    end
  end
  return ""
end

local function join(parts)
  return table.concat(vim.tbl_filter(function(part) return part and part ~= "" end, parts), "  ")
end

--- One line per result for pickers: location, symbol, score and the chunk's first line.
---@param result table a RagResult
function M.format_result(result)
  return join({ M.location_label(result), M.symbol_text(result), ("(%.4f)"):format(result.score or 0),
    M.first_line(result.content) })
end

--- A quickfix item for a result: the list shows file and lines itself, so the text is the symbol
--- and the chunk's first line (added documents have no file: their id instead).
---@param result table a RagResult
function M.quickfix_item(result)
  local uri, range = protocol.value(result.uri), protocol.value(result.range)
  local item = { text = join({ M.symbol_text(result), M.first_line(result.content) }) }
  if uri and range then
    item.filename = vim.uri_to_fname(uri)
    item.lnum = range.start.line + 1
    item.col = range.start.character + 1
    item.end_lnum = protocol.value((result.metadata or {}).endLine)
  else
    item.text = join({ result.id, item.text })
  end
  return item
end

--- Replace the quickfix list with items under a title, and open it.
---@param title string
---@param items table[]
local function open_quickfix(title, items)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  vim.cmd("botright copen")
end

--- Put results into the quickfix list (titled with the query) and open it.
---@param results table[]
---@param query string
function M.to_quickfix(results, query)
  open_quickfix("ragls: " .. query, vim.tbl_map(M.quickfix_item, results))
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

--- Open a file at an LSP range's start (the previous position stays in the jumplist).
---@param uri string
---@param range table an LSP range
---@param offset_encoding string|nil the client's position encoding (default utf-16)
function M.open_location(uri, range, offset_encoding)
  vim.cmd("normal! m'")
  vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(uri)))
  local line = math.min(range.start.line + 1, vim.api.nvim_buf_line_count(0))
  local text = vim.api.nvim_buf_get_lines(0, line - 1, line, false)[1] or ""
  vim.api.nvim_win_set_cursor(0, { line, byte_column(text, range.start.character, offset_encoding or "utf-16") })
  vim.cmd("normal! zv")
end

--- Open a result: its file at the chunk's range, or an added document's content.
---@param result table a RagResult
---@param offset_encoding string|nil the client's position encoding (default utf-16)
function M.open_result(result, offset_encoding)
  local uri, range = protocol.value(result.uri), protocol.value(result.range)
  if not (uri and range) then
    M.scratch("ragls://document/" .. result.id, vim.split(result.content or "", "\n"), "botright split")
    return
  end
  M.open_location(uri, range, offset_encoding)
end

-- Files bigger than this are previewed by the chunk's own text rather than read whole.
M.PREVIEW_MAX_BYTES = 1024 * 1024

--- A file's lines for a preview, read from disk as the index read them (a buffer's unsaved edits
--- would shift the chunk's lines); nil when it cannot be read or is too big.
local function file_lines(path)
  local stat = vim.uv.fs_stat(path)
  if not stat or stat.type ~= "file" or stat.size > M.PREVIEW_MAX_BYTES then
    return nil
  end
  local ok, lines = pcall(vim.fn.readfile, path)
  return ok and lines or nil
end

--- The last line (1-based, inclusive) an LSP range covers.
local function last_line(range)
  local finish = range["end"] or range.start
  return math.max(range.start.line + 1, finish.line + (finish.character > 0 and 1 or 0))
end

--- The preview of a location: the whole file with the range as focus, or fallback_lines alone.
local function location_preview(uri, range, title, fallback_lines, last)
  local path = vim.uri_to_fname(uri)
  local lines = file_lines(path)
  local filetype = vim.filetype.match({ filename = path })
  if lines then
    local focus = { range.start.line + 1, last or last_line(range) }
    return { lines = lines, title = title, filetype = filetype, focus = focus }
  end
  return { lines = fallback_lines, title = title, filetype = filetype, focus = { 1, #fallback_lines } }
end

--- The preview of a result: its file scrolled to the chunk (highlighted); an added document's content.
---@param result table a RagResult
---@return ragls.Preview
function M.result_preview(result)
  local uri, range = protocol.value(result.uri), protocol.value(result.range)
  local content_lines = vim.split(result.content or "", "\n", { plain = true })
  if not (uri and range) then
    return { lines = content_lines, title = result.id, filetype = nil }
  end
  local end_line = protocol.value((result.metadata or {}).endLine)
  return location_preview(uri, range, M.location_label(result), content_lines, end_line)
end

--- Let the user pick a result (vim.ui.select, or ragls's picker with a preview) and open it.
---@param results table[]
---@param query string
---@param offset_encoding string
function M.select(results, query, offset_encoding)
  picker.select(results, {
    prompt = ("ragls: %s"):format(query),
    kind = "ragls.result",
    format_item = M.format_result,
    preview = M.result_preview,
  }, function(choice)
    if choice then
      M.open_result(choice, offset_encoding)
    end
  end)
end

--- "[Method] check  (AuthMiddleware)": a workspace symbol's kind, name and container, as LSP pickers show it.
---@param symbol table a WorkspaceSymbol or SymbolInformation
function M.symbol_label(symbol)
  local kind = vim.lsp.protocol.SymbolKind[symbol.kind] or "Unknown"
  local container = protocol.value(symbol.containerName)
  local label = ("[%s] %s"):format(kind, symbol.name)
  if container and container ~= "" then
    label = ("%s  (%s)"):format(label, container)
  end
  return label
end

local function symbol_range(symbol)
  local location = symbol.location or {}
  return location.range or { start = { line = 0, character = 0 } }
end

--- One line per symbol for pickers: its label, then its file (relative to the cwd) and line.
---@param symbol table a WorkspaceSymbol or SymbolInformation
function M.format_symbol(symbol)
  local path = vim.fn.fnamemodify(vim.uri_to_fname(symbol.location.uri), ":.")
  return ("%s  %s:%d"):format(M.symbol_label(symbol), path, symbol_range(symbol).start.line + 1)
end

--- The preview of a symbol: its file scrolled to the definition (highlighted).
---@param symbol table a WorkspaceSymbol or SymbolInformation
---@return ragls.Preview
function M.symbol_preview(symbol)
  local range = symbol_range(symbol)
  local title = ("%s:%d"):format(vim.fn.fnamemodify(vim.uri_to_fname(symbol.location.uri), ":."), range.start.line + 1)
  return location_preview(symbol.location.uri, range, title, { "(cannot read the file)" })
end

--- A quickfix item for a symbol; the text is its label (the list shows file and line itself).
---@param symbol table a WorkspaceSymbol or SymbolInformation
function M.symbol_quickfix_item(symbol)
  local range = symbol_range(symbol)
  return {
    filename = vim.uri_to_fname(symbol.location.uri),
    lnum = range.start.line + 1,
    col = range.start.character + 1,
    text = M.symbol_label(symbol),
  }
end

--- Put symbols into the quickfix list (titled with the query) and open it.
---@param symbols table[]
---@param query string
function M.symbols_to_quickfix(symbols, query)
  open_quickfix("ragls symbols: " .. query, vim.tbl_map(M.symbol_quickfix_item, symbols))
end

--- Let the user pick a symbol (vim.ui.select, or ragls's picker with a preview) and open it.
---@param symbols table[]
---@param query string
---@param offset_encoding string
function M.select_symbol(symbols, query, offset_encoding)
  picker.select(symbols, {
    prompt = ("ragls symbols: %s"):format(query),
    kind = "ragls.symbol",
    format_item = M.format_symbol,
    preview = M.symbol_preview,
  }, function(choice)
    if choice then
      M.open_location(choice.location.uri, symbol_range(choice), offset_encoding)
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

--- The shared index a folder started from: its commit, its files in use, the files indexed here.
---@param shared table a FolderStatus's sharedIndex
---@return string
function M.shared_index_line(shared)
  local where = ("  shared index %s (%s)"):format(shared.name, shared.source)
  local commit = protocol.value(shared.commit)
  local err = protocol.value(shared.error)
  if not commit then
    return ("%s: not used (%s); every file is indexed here"):format(where, tostring(err))
  end
  local lost = err and ("; not answering now (%s)"):format(err) or ""
  return ("%s at commit %s, generation %d: %d files from it, %d indexed here%s"):format(
    where,
    commit:sub(1, 12),
    protocol.value(shared.generation) or 0,
    shared.files or 0,
    shared.localFiles or 0,
    lost
  )
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
  local shared = protocol.value(status.sharedIndex)
  if shared then
    lines[#lines + 1] = M.shared_index_line(shared)
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
