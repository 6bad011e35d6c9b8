local h = require("helpers")

--- Run `:Ragls search! query` until a quickfix item's file matches file_pattern (and its text, text_pattern:
--- a chunk of the file from before an edit may answer first).
local function search_until(query, file_pattern, text_pattern)
  local found
  h.wait(("a search for %q to find %s"):format(query, file_pattern), function()
    vim.fn.setqflist({}, "f")
    h.notes = {}
    vim.cmd("silent! cclose")
    vim.cmd("Ragls search! " .. query)
    local answered = vim.wait(5000, function()
      return #vim.fn.getqflist() > 0 or h.note_matching("no results") ~= nil
    end, 20)
    for _, item in ipairs(answered and vim.fn.getqflist() or {}) do
      local file_matches = vim.api.nvim_buf_get_name(item.bufnr):match(file_pattern)
      if file_matches and (text_pattern == nil or item.text:find(text_pattern, 1, true)) then
        found = item
        return true
      end
    end
    vim.wait(200)
    return false
  end)
  return found
end

return {
  {
    "a new file written on disk is found by search (the server watches the folder)",
    function()
      h.write("docs/migration.md", "# Migration\n\nThe quokka migration happens every spring.\n")
      local item = search_until("quokka migration", "docs/migration%.md$")
      h.eq(1, item.lnum, "the new file's first line")
      h.contains(item.text, "Migration")
    end,
  },
  {
    "an edited file's new text is found by search",
    function()
      local path = h.root .. "/src/db/pool.py"
      local text = table.concat(vim.fn.readfile(path), "\n")
      -- Far enough below the class (over the 30 lines small neighbours are packed up to) to be a chunk of its own.
      h.write("src/db/pool.py", text .. string.rep("\n", 30) .. "def drain_wombats(pool):\n    return pool.wombats.clear()\n")
      local item = search_until("drain wombats", "src/db/pool%.py$", "drain_wombats")
      h.contains(item.text, "drain_wombats")
    end,
  },
}
