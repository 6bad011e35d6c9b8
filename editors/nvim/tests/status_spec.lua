local h = require("helpers")

local function current_status()
  local client_mod = require("ragls.client")
  local answer = assert(client_mod.request_sync(client_mod.current(), "rag/status", vim.empty_dict(), 5000))
  return answer.folders[1]
end

return {
  {
    "status shows state, files, chunks, generation, last index time and skipped reasons",
    function()
      vim.cmd("Ragls status")
      local message = h.wait_note("generation").message
      h.contains(message, h.root .. ": idle")
      h.truthy(message:match("files (%d+), chunks (%d+), documents 0, generation (%d+)"), message)
      h.truthy(message:match("last indexed %d%d%d%d%-%d%d%-%d%dT"), message)
      h.truthy(message:match("skipped: .*ignored %d+"), message)
    end,
  },
  {
    "status says which shared index a folder started from, and why one is not used",
    function()
      local ui = require("ragls.ui")
      local shared = {
        name = "monorepo",
        source = "postgresql://reader@db/ragls",
        commit = "1f3c5e7a9b2d4f6e8a0c",
        generation = 42,
        files = 86670,
        localFiles = 9,
        error = vim.NIL,
      }
      local lines = ui.folder_status_lines(vim.tbl_extend("force", current_status(), { sharedIndex = shared }))
      h.truthy(
        vim.tbl_contains(
          lines,
          "  shared index monorepo (postgresql://reader@db/ragls) at commit 1f3c5e7a9b2d, generation 42: "
            .. "86670 files from it, 9 indexed here"
        ),
        table.concat(lines, "\n")
      )
      local down = vim.tbl_extend("force", shared, { commit = vim.NIL, generation = vim.NIL, error = "cannot connect" })
      h.eq(
        "  shared index monorepo (postgresql://reader@db/ragls): not used (cannot connect); every file is indexed here",
        ui.shared_index_line(down),
        "a shared index not in use"
      )
    end,
  },
  {
    "require('ragls').status() gives a statusline text",
    function()
      vim.cmd.edit(vim.fn.fnameescape(h.root .. "/src/db/pool.py"))
      vim.cmd("Ragls status")
      h.wait_note("generation")
      local text = require("ragls").status()
      h.truthy(text:match("^ragls: idle, %d+ files$"), text)
      vim.cmd.enew()
      h.truthy(require("ragls").status():match("^ragls: "), "a buffer without the client shows the running one")
    end,
  },
  {
    "reindex! runs a full index with LspProgress and a new generation",
    function()
      local kinds, titles = {}, {}
      local autocmd = vim.api.nvim_create_autocmd("LspProgress", {
        callback = function(event)
          local client = vim.lsp.get_client_by_id(event.data.client_id)
          if client and client.name == "ragls" then
            kinds[#kinds + 1] = event.data.params.value.kind
            titles[#titles + 1] = event.data.params.value.title
          end
        end,
      })
      local before = current_status().generation
      vim.cmd("Ragls reindex!")
      h.wait_note("^ragls: full reindex started")
      local done = h.wait_note("reindex done").message
      vim.api.nvim_del_autocmd(autocmd)
      h.truthy(current_status().generation > before, "a new generation after reindex!")
      h.contains(done, "generation")
      h.eq("begin", kinds[1], "first progress kind")
      h.truthy(vim.tbl_contains(kinds, "end"), "progress ended: " .. vim.inspect(kinds))
      h.truthy(titles[1]:match("^Indexing"), "progress title " .. tostring(titles[1]))
    end,
  },
  {
    "reindex (incremental) answers when the run has finished",
    function()
      vim.cmd("Ragls reindex")
      h.wait_note("^ragls: reindex started")
      h.contains(h.wait_note("reindex done").message, "idle")
    end,
  },
}
