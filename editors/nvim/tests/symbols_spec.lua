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
    "symbols goes through vim.lsp.buf.workspace_symbol into the quickfix list",
    function()
      vim.cmd.edit(vim.fn.fnameescape(h.root .. "/web/router.js"))
      vim.cmd("Ragls symbols ConnectionPool")
      local item = find_item(h.wait_quickfix(), "ConnectionPool")
      h.truthy(item.filename:match("src/db/pool%.py$"), item.filename)
      h.eq(h.line_of("src/db/pool.py", "class ConnectionPool"), item.lnum, "symbol line")
    end,
  },
  {
    "symbols from a buffer outside the workspace still lists the workspace's symbols",
    function()
      vim.cmd.enew()
      vim.bo.buftype = "nofile"
      vim.cmd("Ragls symbols validate_token")
      local item = find_item(h.wait_quickfix(), "validate_token")
      h.truthy(item.filename:match("src/auth/middleware%.py$"), item.filename)
      h.eq(h.line_of("src/auth/middleware.py", "def validate_token"), item.lnum, "symbol line")
    end,
  },
}
