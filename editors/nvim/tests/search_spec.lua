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
    "search lists results with file, lines, symbol and score through vim.ui.select",
    function()
      local seen = h.stub_select(nil)
      vim.cmd("Ragls search bearer token")
      h.wait("vim.ui.select", function() return seen.lines end)
      local text = table.concat(seen.lines, "\n")
      h.truthy(text:match("src/auth/middleware%.py:%d+%-%d+  validate_token  %(%d%.%d+%)"), text)
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
      h.truthy(first.lnum >= 1 and first.text:match("docs/guide%.md:%d+%-%d+"), first.text)
      h.eq("qf", vim.bo.filetype, "the quickfix window is open")
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
}
