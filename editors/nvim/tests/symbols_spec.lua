local h = require("helpers")

local function find_item(items, pattern)
  for _, item in ipairs(items) do
    if item.text:match(pattern) then
      return item
    end
  end
  local texts = vim.tbl_map(function(item) return item.text end, items)
  error(("no quickfix item matching %s in %s"):format(pattern, vim.inspect(texts)))
end

return {
  {
    "symbols! fills the quickfix list with ragls's symbols, each with its kind and container",
    function()
      vim.cmd.edit(vim.fn.fnameescape(h.root .. "/web/router.js"))
      vim.cmd("Ragls symbols! ConnectionPool")
      local item = find_item(h.wait_quickfix(), "ConnectionPool")
      h.truthy(item.filename:match("src/db/pool%.py$"), item.filename)
      h.eq(h.line_of("src/db/pool.py", "class ConnectionPool"), item.lnum, "symbol line")
      h.eq("ragls symbols: ConnectionPool", vim.fn.getqflist({ title = true }).title, "title")
      h.reset()
      vim.cmd("Ragls symbols! check")
      local method = find_item(h.wait_quickfix(), "check")
      h.eq("[Method] check  (AuthMiddleware)", method.text, "a method shows its class")
      h.eq(h.line_of("src/auth/middleware.py", "def check"), method.lnum, "method line")
    end,
  },
  {
    "symbols go through vim.ui.select (kind ragls.symbol); choosing one opens its definition",
    function()
      vim.cmd.edit(vim.fn.fnameescape(h.root .. "/web/router.js"))
      local seen = h.stub_select(function(items)
        for _, symbol in ipairs(items) do
          if symbol.name == "acquire" then
            return symbol
          end
        end
      end)
      vim.cmd("Ragls symbols acquire")
      h.wait("vim.ui.select", function() return seen.lines end)
      h.eq("ragls.symbol", seen.opts.kind, "kind")
      local line = h.line_of("src/db/pool.py", "def acquire")
      h.contains(table.concat(seen.lines, "\n"), ("[Method] acquire  (ConnectionPool)  src/db/pool.py:%d"):format(line))
      h.wait("the symbol's file", function() return vim.api.nvim_buf_get_name(0):match("src/db/pool%.py$") end)
      h.eq(line, vim.api.nvim_win_get_cursor(0)[1], "cursor on the definition")
      h.eq(0, #vim.fn.getqflist(), "no quickfix list")
    end,
  },
  {
    "without a picker plugin, symbols open in the floating picker with the definition previewed",
    function()
      local line = h.line_of("src/auth/middleware.py", "def validate_token")
      vim.cmd("Ragls symbols validate_token")
      local windows = h.wait_picker()
      h.eq({}, h.inputlist_calls, "Neovim's inputlist prompt was not used")
      local first_row = h.lines(vim.api.nvim_win_get_buf(windows.list))[1]
      h.eq(("[Function] validate_token  src/auth/middleware.py:%d"):format(line), first_row, "the list's first line")
      local preview_buf = vim.api.nvim_win_get_buf(windows.preview)
      h.eq(vim.fn.readfile(h.root .. "/src/auth/middleware.py"), h.lines(preview_buf), "the preview shows the file")
      local marks = vim.api.nvim_buf_get_extmarks(preview_buf, require("ragls.picker").NAMESPACE, 0, -1, {})
      h.eq(line - 1, marks[1] and marks[1][2], "the definition is highlighted")
      h.eq(2, #marks, "both lines of the definition")
      vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
      h.truthy(vim.api.nvim_buf_get_name(0):match("src/auth/middleware%.py$"), "opened the file")
      h.eq(line, vim.api.nvim_win_get_cursor(0)[1], "at the definition")
    end,
  },
  {
    "symbols from a buffer outside the workspace still lists the workspace's symbols",
    function()
      vim.g.ragls = vim.tbl_extend("force", h.base_options(), { picker = "quickfix" })
      vim.cmd.enew()
      vim.bo.buftype = "nofile"
      vim.cmd("Ragls symbols validate_token")
      local item = find_item(h.wait_quickfix(), "validate_token")
      h.truthy(item.filename:match("src/auth/middleware%.py$"), item.filename)
      h.eq(h.line_of("src/auth/middleware.py", "def validate_token"), item.lnum, "symbol line")
      h.eq("[Function] validate_token", item.text, "a top-level function has no container")
    end,
  },
}
