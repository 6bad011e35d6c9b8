local h = require("helpers")

local function context_buffer_text()
  local bufnr = vim.fn.bufnr("^ragls://context$")
  h.truthy(bufnr ~= -1, "the ragls://context buffer exists")
  h.truthy(vim.fn.bufwinid(bufnr) ~= -1, "the context buffer is shown")
  return table.concat(h.lines(bufnr), "\n")
end

return {
  {
    "context puts the fenced prompt into the register and a scratch buffer",
    function()
      vim.cmd("Ragls context How does auth work?")
      local prompt = h.wait('register "r"', function() return vim.fn.getreg("r") ~= "" and vim.fn.getreg("r") end)
      h.contains(prompt, "<tnsai-memory>")
      h.contains(prompt, "<document-id>src/auth/middleware.py")
      h.contains(prompt, "<entry><key>file</key><value>src/auth/middleware.py</value></entry>")
      h.truthy(vim.endswith(prompt, "<tnsai-user-message>\nHow does auth work?\n</tnsai-user-message>"), prompt)
      h.eq(prompt, context_buffer_text(), "scratch buffer = register")
      h.eq("nofile", vim.bo[vim.fn.bufnr("^ragls://context$")].buftype, "scratch buftype")
      h.wait_note('context for "How does auth work%?": %d+ results, in register r')
    end,
  },
  {
    "context_format = plain gives the plain layout (setup{} wins over vim.g.ragls)",
    function()
      require("ragls").setup({ context_format = "plain", register = "p" })
      vim.fn.setreg("p", "")
      vim.cmd("Ragls context connection pool")
      local prompt = h.wait('register "p"', function() return vim.fn.getreg("p") ~= "" and vim.fn.getreg("p") end)
      h.truthy(vim.startswith(prompt, "[Relevant code context]"), prompt)
      h.truthy(prompt:match("%-%-%- file: src/db/pool%.py %(lines %d+%-%d+%) %-%-%-"), prompt)
      h.truthy(vim.endswith(prompt, "[User question]\nconnection pool"), prompt)
      h.eq(prompt, context_buffer_text(), "the reused scratch buffer holds the new prompt")
    end,
  },
  {
    'the "+" register falls back to the unnamed register without a clipboard provider',
    function()
      local config = require("ragls.config")
      local options = vim.tbl_extend("force", config.defaults, { register = "+" })
      local expected = vim.fn.has("clipboard") == 1 and "+" or '"'
      h.eq(expected, config.context_register(options), "register")
    end,
  },
}
