local h = require("helpers")

local function by_file(file)
  return function(items)
    for _, item in ipairs(items) do
      if item.metadata.file == file then
        return item
      end
    end
  end
end

return {
  {
    "search lists results with file, lines, symbol, score and first line through vim.ui.select",
    function()
      local seen = h.stub_select(nil)
      vim.cmd("Ragls search bearer token")
      h.wait("vim.ui.select", function() return seen.lines end)
      local text = table.concat(seen.lines, "\n")
      local line = h.line_of("src/auth/middleware.py", "def validate_token")
      h.contains(text, ("src/auth/middleware.py:%d-%d  [Function] validate_token  ("):format(line, line + 1))
      h.truthy(text:match("%(%d%.%d+%)  def validate_token%(token%):"), text)
      h.eq("ragls.result", seen.opts.kind, "select kind")
    end,
  },
  {
    "choosing a result opens its file at the chunk's first line",
    function()
      local seen = h.stub_select(by_file("src/db/pool.py"))
      vim.cmd("Ragls search connection pool release")
      h.wait("the result's file", function() return vim.api.nvim_buf_get_name(0):match("src/db/pool%.py$") end)
      local chosen = by_file("src/db/pool.py")(seen.items)
      h.eq(chosen.range.start.line + 1, vim.api.nvim_win_get_cursor(0)[1], "cursor line")
      h.eq(chosen.metadata.startLine, vim.api.nvim_win_get_cursor(0)[1], "cursor line = startLine")
    end,
  },
  {
    "search! fills the quickfix list with file and line of each result",
    function()
      vim.cmd("Ragls search! rate limiting quota")
      local items = h.wait_quickfix()
      h.eq("ragls: rate limiting quota", vim.fn.getqflist({ title = true }).title, "quickfix title")
      local first = items[1]
      h.truthy(first.filename:match("docs/guide%.md$"), "first result is the guide, got " .. first.filename)
      h.eq(h.line_of("docs/guide.md", "## Rate limiting"), first.lnum, "line")
      h.eq("[Heading] Guide > Rate limiting  ## Rate limiting", first.text, "text: the symbol and the first line")
      h.eq("qf", vim.bo.filetype, "the quickfix window is open")
    end,
  },
  {
    "quickfix lines name file and lines once: the text is the symbol and the chunk's first line",
    function()
      vim.cmd("Ragls search! bearer token validate")
      local items = h.wait_quickfix()
      for _, item in ipairs(items) do
        h.not_contains(item.text, vim.fn.fnamemodify(item.filename, ":t"))
        h.truthy(not item.text:match("%(%d%.%d+%)"), "no score in " .. item.text)
      end
      local line = h.line_of("src/auth/middleware.py", "def validate_token")
      local item = vim.tbl_filter(function(i) return i.lnum == line end, items)[1]
      h.truthy(item, "the validate_token chunk is listed")
      h.eq("[Function] validate_token  def validate_token(token):", item.text, "text")
      h.eq(line + 1, item.end_lnum, "end line")
      local shown = vim.api.nvim_buf_get_lines(vim.fn.getqflist({ qfbufnr = true }).qfbufnr, 0, -1, false)
      local row = h.truthy(vim.tbl_filter(function(l) return l:find("validate_token", 1, true) end, shown)[1], "row")
      h.eq(("src/auth/middleware.py|%d-%d col 1| [Function] validate_token  def validate_token(token):"):format(
        line, line + 1), row, "the quickfix window's line")
    end,
  },
  {
    "the picker option sends results to the quickfix list; :Ragls! search is the same as search!",
    function()
      vim.g.ragls = vim.tbl_extend("force", h.base_options(), { picker = "quickfix" })
      vim.cmd("Ragls search router dispatch")
      local items = h.wait_quickfix()
      h.truthy(items[1].filename:match("web/router%.js$"), items[1].filename)
      h.reset()
      vim.cmd("Ragls! search validate token")
      h.truthy(h.wait_quickfix()[1].filename:match("middleware%.py$"), "bang form")
    end,
  },
  {
    "search without a query prompts for one",
    function()
      local prompted
      vim.ui.input = function(opts, on_confirm)
        prompted = opts.prompt
        on_confirm("connection acquire")
      end
      local seen = h.stub_select(nil)
      vim.cmd("Ragls search")
      h.wait("vim.ui.select", function() return seen.lines end)
      h.eq("ragls search: ", prompted, "prompt")
      h.contains(table.concat(seen.lines, "\n"), "src/db/pool.py")
    end,
  },
  {
    "a search without results says so",
    function()
      vim.cmd("Ragls search xyzzyplughfrobnicate")
      h.wait_note('no results for "xyzzyplughfrobnicate"')
    end,
  },
  {
    "without a picker plugin, results open in a floating picker with a preview of the chunk; <CR> opens one",
    function()
      local origin = vim.api.nvim_get_current_win()
      vim.cmd("Ragls search connection pool release")
      local windows = h.wait_picker()
      h.eq({}, h.inputlist_calls, "Neovim's inputlist prompt was not used")
      h.truthy(vim.api.nvim_win_get_config(windows.list).relative ~= "", "the list is a floating window")
      h.eq(windows.list, vim.api.nvim_get_current_win(), "the list has the focus")
      local list_buf = vim.api.nvim_win_get_buf(windows.list)
      local rows = h.lines(list_buf)
      local function shown_location(row)
        local file, first, last = rows[row]:match("^(%S+):(%d+)%-(%d+)")
        return file, tonumber(first), tonumber(last)
      end
      local function check_preview(row)
        local file, first, last = shown_location(row)
        h.truthy(file, "a file location in " .. rows[row])
        local preview_buf = vim.api.nvim_win_get_buf(windows.preview)
        h.eq(vim.fn.readfile(h.root .. "/" .. file), h.lines(preview_buf), "the preview shows " .. file)
        local marks = vim.api.nvim_buf_get_extmarks(preview_buf, require("ragls.picker").NAMESPACE, 0, -1, {})
        h.eq(first - 1, marks[1][2], "the highlight starts at the chunk")
        h.eq(last - first + 1, #marks, "every line of the chunk is highlighted")
        h.eq(first, vim.api.nvim_win_get_cursor(windows.preview)[1], "the preview is scrolled to the chunk")
        local title = vim.api.nvim_win_get_config(windows.preview).title
        h.contains(vim.inspect(title), ("%s:%d-%d"):format(file, first, last))
      end
      h.truthy(#rows >= 2, "two results or more: " .. vim.inspect(rows))
      check_preview(1)
      local second = 2
      while second < #rows and shown_location(second) == shown_location(1) do
        second = second + 1
      end
      vim.api.nvim_win_set_cursor(windows.list, { second, 0 })
      vim.api.nvim_exec_autocmds("CursorMoved", { buffer = list_buf })
      check_preview(second)
      local file, first = shown_location(second)
      vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
      h.eq(nil, require("ragls.picker").windows(), "the picker closed")
      h.eq(false, vim.api.nvim_win_is_valid(windows.preview), "the preview closed")
      h.eq(origin, vim.api.nvim_get_current_win(), "back in the window the search started from")
      h.truthy(vim.api.nvim_buf_get_name(0):match(vim.pesc(file) .. "$"), "opened " .. file)
      h.eq(first, vim.api.nvim_win_get_cursor(0)[1], "at the chunk's first line")
    end,
  },
  {
    "q closes the floating picker without choosing",
    function()
      local before = vim.api.nvim_buf_get_name(0)
      vim.cmd("Ragls search router dispatch")
      local windows = h.wait_picker()
      h.eq({}, h.inputlist_calls, "Neovim's inputlist prompt was not used")
      vim.api.nvim_feedkeys("q", "x", false)
      h.eq(nil, require("ragls.picker").windows(), "the picker closed")
      h.eq(false, vim.api.nvim_win_is_valid(windows.list), "the list closed")
      h.eq(before, vim.api.nvim_buf_get_name(0), "nothing opened")
    end,
  },
}
