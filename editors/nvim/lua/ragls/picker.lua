--- Every choice goes through vim.ui.select, so the user's picker (telescope-ui-select, fzf-lua,
--- snacks, dressing, mini.pick...) takes over. While vim.ui.select is still Neovim's own (an
--- inputlist prompt without a preview), a choice that has previews is shown in ragls's own
--- floating picker instead: a list, and below it the file of the item under the cursor, scrolled
--- to the chunk, which is highlighted (as telescope, fzf-lua and snacks preview a location).
local M = {}

M.NAMESPACE = vim.api.nvim_create_namespace("ragls.preview")
-- The highlight of the previewed chunk's lines; link it to another group to change it.
M.RANGE_HIGHLIGHT = "RaglsPreviewRange"

---@class ragls.Preview
---@field lines string[] what the preview window shows
---@field title string the preview window's title, e.g. "src/app.py:12-30"
---@field filetype string|nil for highlighting
---@field focus integer[]|nil { first, last }: 1-based lines to highlight and scroll to

---@class ragls.SelectOpts
---@field prompt string
---@field kind string the vim.ui.select kind, e.g. "ragls.result"
---@field format_item fun(item: any): string
---@field preview (fun(item: any): ragls.Preview)|nil

-- The open floating picker, if any: { items, opts, on_choice, list_win, preview_win, ... }.
local active = nil

--- Whether vim.ui.select is still Neovim's own (defined in the runtime's lua/vim/ui.lua).
---@return boolean
function M.is_builtin_select()
  local info = debug.getinfo(vim.ui.select, "S")
  return info ~= nil and info.source:match("vim[/\\]ui%.lua$") ~= nil
end

--- Let the user choose one of items: through vim.ui.select, or, while that is Neovim's own and
--- opts.preview is given, through the floating picker with a preview.
---@param items any[]
---@param opts ragls.SelectOpts
---@param on_choice fun(item: any|nil, index: integer|nil)
function M.select(items, opts, on_choice)
  if opts.preview and M.is_builtin_select() then
    M.open(items, opts, on_choice)
  else
    vim.ui.select(items, { prompt = opts.prompt, kind = opts.kind, format_item = opts.format_item }, on_choice)
  end
end

--- The windows of the open floating picker ({ list = win, preview = win }), or nil.
function M.windows()
  return active and { list = active.list_win, preview = active.preview_win } or nil
end

local function geometry(n_items)
  local columns, lines = vim.o.columns, vim.o.lines - vim.o.cmdheight
  local width = math.max(20, math.floor(columns * 0.9) - 2)
  local total = math.max(8, math.floor(lines * 0.85))
  local list_height = math.max(1, math.min(n_items, math.floor(total / 3)))
  local preview_height = math.max(1, total - list_height - 4)
  local row = math.max(0, math.floor((lines - total) / 2) - 1)
  local col = math.max(0, math.floor((columns - width - 2) / 2))
  local base = { relative = "editor", col = col, width = width, border = "rounded", style = "minimal" }
  return vim.tbl_extend("force", base, { row = row, height = list_height }),
    vim.tbl_extend("force", base, { row = row + list_height + 2, height = preview_height, focusable = false })
end

local function scratch_buffer()
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.bo[bufnr].bufhidden = "wipe"
  return bufnr
end

local function set_lines(bufnr, lines)
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
end

local function close(state)
  for _, win in ipairs({ state.list_win, state.preview_win }) do
    if win and vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  if vim.api.nvim_win_is_valid(state.origin) then
    vim.api.nvim_set_current_win(state.origin)
  end
end

--- Close the picker and answer on_choice once: the item at index, or nil when cancelled.
local function finish(state, index)
  if state.done then
    return
  end
  state.done = true
  if active == state then
    active = nil
  end
  close(state)
  state.on_choice(index and state.items[index] or nil, index)
end

--- Close the floating picker, if one is open, as if cancelled.
function M.close()
  if active then
    finish(active, nil)
  end
end

local function highlight_language(bufnr, filetype)
  pcall(vim.treesitter.stop, bufnr)
  vim.bo[bufnr].syntax = ""
  if not filetype or filetype == "" then
    return
  end
  local lang = vim.treesitter.language.get_lang(filetype) or filetype
  if not pcall(vim.treesitter.start, bufnr, lang) then
    vim.bo[bufnr].syntax = filetype
  end
end

local function show_focus(state, focus)
  local bufnr, line_count = state.preview_buf, vim.api.nvim_buf_line_count(state.preview_buf)
  vim.api.nvim_buf_clear_namespace(bufnr, M.NAMESPACE, 0, -1)
  if not focus then
    vim.api.nvim_win_call(state.preview_win, function() vim.fn.winrestview({ topline = 1, lnum = 1 }) end)
    return
  end
  local first = math.max(1, math.min(focus[1], line_count))
  local last = math.max(first, math.min(focus[2] or first, line_count))
  for line = first, last do
    vim.api.nvim_buf_set_extmark(bufnr, M.NAMESPACE, line - 1, 0, { line_hl_group = M.RANGE_HIGHLIGHT })
  end
  vim.api.nvim_win_call(state.preview_win, function()
    vim.fn.winrestview({ topline = math.max(1, first - 2), lnum = first, col = 0 })
  end)
end

--- Show the preview of the item at index (once per change of item).
local function update_preview(state, index)
  local item = state.items[index]
  if state.done or not item or index == state.previewed then
    return
  end
  state.previewed = index
  state.previews[index] = state.previews[index] or state.opts.preview(item)
  local preview = state.previews[index]
  set_lines(state.preview_buf, preview.lines)
  if preview.filetype ~= state.filetype then
    state.filetype = preview.filetype
    highlight_language(state.preview_buf, preview.filetype)
  end
  vim.api.nvim_win_set_config(state.preview_win, { title = " " .. preview.title .. " ", title_pos = "center" })
  show_focus(state, preview.focus)
end

local function scroll_preview(state, keys)
  vim.api.nvim_win_call(state.preview_win, function()
    vim.cmd.normal({ vim.api.nvim_replace_termcodes(keys, true, false, true), bang = true })
  end)
end

local function set_keymaps(state)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = state.list_buf, nowait = true, desc = "ragls picker: " .. desc })
  end
  map("<CR>", function() finish(state, vim.api.nvim_win_get_cursor(state.list_win)[1]) end, "choose")
  for _, lhs in ipairs({ "q", "<Esc>", "<C-c>" }) do
    map(lhs, function() finish(state, nil) end, "cancel")
  end
  map("<C-d>", function() scroll_preview(state, "<C-d>") end, "scroll the preview down")
  map("<C-u>", function() scroll_preview(state, "<C-u>") end, "scroll the preview up")
end

local function set_autocmds(state)
  local group = vim.api.nvim_create_augroup("ragls.picker", { clear = true })
  vim.api.nvim_create_autocmd("CursorMoved", {
    group = group,
    buffer = state.list_buf,
    callback = function() update_preview(state, vim.api.nvim_win_get_cursor(state.list_win)[1]) end,
  })
  -- Leaving the list (another window, a mouse click) cancels; windows cannot close inside WinLeave.
  vim.api.nvim_create_autocmd("WinLeave", {
    group = group,
    buffer = state.list_buf,
    once = true,
    callback = function() vim.schedule(function() finish(state, nil) end) end,
  })
end

--- The floating picker: a list of items and a preview of the one under the cursor.
--- <CR> chooses, q, <Esc> or <C-c> cancel, <C-d> and <C-u> scroll the preview.
---@param items any[]
---@param opts ragls.SelectOpts
---@param on_choice fun(item: any|nil, index: integer|nil)
function M.open(items, opts, on_choice)
  M.close()
  vim.api.nvim_set_hl(0, M.RANGE_HIGHLIGHT, { link = "Visual", default = true })
  local state = { items = items, opts = opts, on_choice = on_choice, previews = {} }
  state.origin = vim.api.nvim_get_current_win()
  active = state
  state.list_buf, state.preview_buf = scratch_buffer(), scratch_buffer()
  set_lines(state.list_buf, vim.tbl_map(function(item)
    return (opts.format_item(item):gsub("\n", " "))
  end, items))
  vim.bo[state.list_buf].filetype = "ragls-picker"
  local list_config, preview_config = geometry(#items)
  state.preview_win = vim.api.nvim_open_win(state.preview_buf, false, vim.tbl_extend("force", preview_config, {
    title = " preview ",
    title_pos = "center",
  }))
  state.list_win = vim.api.nvim_open_win(state.list_buf, true, vim.tbl_extend("force", list_config, {
    title = " " .. opts.prompt .. " ",
    title_pos = "center",
    footer = " <CR> open  q close  <C-d>/<C-u> scroll the preview ",
    footer_pos = "right",
  }))
  vim.w[state.list_win].ragls_picker = "list"
  vim.w[state.preview_win].ragls_picker = "preview"
  vim.wo[state.list_win].cursorline = true
  vim.wo[state.list_win].wrap = false
  vim.wo[state.preview_win].number = true
  vim.wo[state.preview_win].wrap = false
  set_keymaps(state)
  set_autocmds(state)
  update_preview(state, 1)
end

return M
