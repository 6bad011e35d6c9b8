local h = require("helpers")

local function checkhealth()
  vim.cmd("silent checkhealth ragls")
  return table.concat(h.lines(0), "\n")
end

return {
  {
    "checkhealth reports Neovim, the config, the server version, the client and the last status",
    function()
      local report = checkhealth()
      h.truthy(report:match("OK Neovim 0%.1%d"), report)
      h.contains(report, "OK config is valid")
      h.truthy(report:match("OK ragls %d+%.%d+%.%d+"), report)
      h.truthy(report:match("OK client %d+ attached to %d+ buffer"), report)
      h.contains(report, h.root .. ": idle")
      h.contains(report, "generation")
      h.not_contains(report, "ERROR")
    end,
  },
  {
    "checkhealth names a bad option and how to fix it",
    function()
      vim.g.ragls = vim.tbl_extend("force", h.base_options(), { context_format = "xml" })
      local report = checkhealth()
      h.truthy(report:match("ERROR invalid option context_format: expected [^\n]*got xml"), report)
      h.contains(report, "vim.g.ragls.context_format")
    end,
  },
  {
    "checkhealth says when the server command is missing, with the fix",
    function()
      vim.g.ragls = vim.tbl_extend("force", h.base_options(), { cmd = { "ragls-no-such-command", "serve" } })
      local report = checkhealth()
      h.contains(report, 'server command "ragls-no-such-command" not found')
      h.contains(report, "pip install ragls")
    end,
  },
  {
    "the version check has a timeout",
    function()
      local hanging = { cmd = { "sh", "-c", "sleep 30", "serve" }, timeout_ms = 300 }
      vim.g.ragls = vim.tbl_extend("force", h.base_options(), hanging)
      local started = vim.uv.now()
      local report = checkhealth()
      h.truthy(vim.uv.now() - started < 10000, "checkhealth returned promptly")
      h.contains(report, "did not answer within 300 ms")
    end,
  },
}
