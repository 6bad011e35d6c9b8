local h = require("helpers")

return {
  {
    "a bad option is reported once with its fix and falls back to its default",
    function()
      vim.g.ragls = vim.tbl_extend("force", h.base_options(), { picker = "telescope", top_k = 0, colour = "red" })
      local config = require("ragls.config").get()
      h.eq("select", config.picker, "picker default")
      h.eq(10, config.top_k, "top_k default")
      local picker = h.wait_note("invalid option picker").message
      h.contains(picker, "got telescope")
      h.contains(picker, 'Fix: set vim.g.ragls.picker or setup{ picker = ... } to "select" or "quickfix"')
      h.contains(h.wait_note("invalid option top_k").message, "an integer 1..100")
      h.contains(h.wait_note("unknown option colour").message, "Fix: remove it")
      h.eq(vim.log.levels.ERROR, h.note_matching("picker").level, "level")
      local count = #h.notes
      require("ragls.config").get()
      h.eq(count, #h.notes, "reported once")
    end,
  },
  {
    "vim.g.ragls that is not a table is reported",
    function()
      vim.g.ragls = "fast"
      require("ragls.config").get()
      h.wait_note("vim.g.ragls must be a table, got string")
    end,
  },
  {
    "a missing server command gives a clear message",
    function()
      vim.g.ragls = vim.tbl_extend("force", h.base_options(), { cmd = { "ragls-not-installed", "serve" } })
      local other = h.tmp .. "/other"
      vim.fn.mkdir(other, "p")
      h.eq(nil, require("ragls.client").ensure(other), "no client")
      local message = h.wait_note("ragls%-not%-installed").message
      h.contains(message, "was not found or is not executable")
      h.contains(message, "pip install ragls")
    end,
  },
  {
    "every workspace buffer attaches to the one client, whatever its filetype",
    function()
      local client_mod = require("ragls.client")
      local ids = {}
      for _, file in ipairs({ "docs/guide.md", "notes.txt", "web/router.js", ".gitignore" }) do
        vim.cmd.edit(vim.fn.fnameescape(h.root .. "/" .. file))
        local attached = h.wait(file .. " attached", function()
          return vim.lsp.get_clients({ name = "ragls", bufnr = 0 })[1]
        end)
        ids[attached.id] = true
      end
      h.eq(1, vim.tbl_count(ids), "one client for the workspace")
      h.eq(1, #client_mod.all(), "one ragls client running")
      vim.cmd("help")
      h.eq(nil, vim.lsp.get_clients({ name = "ragls", bufnr = 0 })[1], "help buffers are not attached")
    end,
  },
  {
    "the root is the nearest .git, root_markers = {} uses the cwd, root_dir overrides both",
    function()
      local client_mod = require("ragls.client")
      vim.cmd.edit(vim.fn.fnameescape(h.root .. "/src/db/pool.py"))
      local cwd = vim.fn.getcwd()
      vim.cmd.cd(vim.fn.fnameescape(h.root .. "/src"))
      local ok, err = pcall(function()
        h.eq(h.root, client_mod.root_for(0), ".git root")
        vim.g.ragls = vim.tbl_extend("force", h.base_options(), { root_markers = {} })
        h.eq(h.root .. "/src", client_mod.root_for(0), "cwd root")
        require("ragls").setup({ root_dir = function() return h.tmp end })
        h.eq(h.tmp, client_mod.root_for(0), "root_dir function")
      end)
      vim.cmd.cd(vim.fn.fnameescape(cwd))
      assert(ok, err)
    end,
  },
  {
    "the client gets the workspace folders, the settings and the command",
    function()
      local client = require("ragls.client").current()
      h.eq(vim.uri_from_fname(h.root), client.workspace_folders[1].uri, "workspace folder")
      h.eq(h.tmp .. "/cache", client.config.settings.ragls.cacheDir, "settings.ragls")
      h.eq(h.tmp .. "/cache", client.config.init_options.cacheDir, "init_options")
      local lsp_config = require("ragls.client").lsp_config(h.root, vim.tbl_extend("force",
        require("ragls.config").defaults, { workspace_folders = { h.tmp, h.root } }))
      h.eq({ vim.uri_from_fname(h.root), vim.uri_from_fname(h.tmp) },
        vim.tbl_map(function(f) return f.uri end, lsp_config.workspace_folders), "extra folders, no duplicates")
    end,
  },
  {
    ":Ragls completes its subcommands and names them for an unknown one",
    function()
      h.eq({ "context", "reindex", "search", "status", "symbols" }, vim.fn.getcompletion("Ragls ", "cmdline"), "all")
      h.eq({ "search", "status", "symbols" }, vim.fn.getcompletion("Ragls s", "cmdline"), "prefix")
      h.eq({}, vim.fn.getcompletion("Ragls search ", "cmdline"), "no completion after the subcommand")
      vim.cmd("Ragls frobnicate")
      h.wait_note('unknown subcommand "frobnicate"; use one of: context, reindex, search, status, symbols')
    end,
  },
  {
    "<Plug> mappings exist and no default keymaps are set",
    function()
      for _, name in ipairs({ "search", "search-quickfix", "context", "reindex", "status", "symbols" }) do
        local rhs = vim.fn.maparg("<Plug>(ragls-" .. name .. ")", "n")
        h.truthy(rhs:match("Ragls"), name .. " mapping: " .. rhs)
      end
      for _, mode in ipairs({ "n", "x", "i" }) do
        for _, map in ipairs(vim.api.nvim_get_keymap(mode)) do
          local is_plug = map.lhs:match("^<Plug>") or map.lhs:match("^\128\253S")
          h.truthy(is_plug or not (map.rhs or ""):match("Ragls"), "default keymap " .. map.lhs)
        end
      end
    end,
  },
}
