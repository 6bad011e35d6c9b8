local h = require("helpers")

return {
  {
    "bad options are reported once, in one warning with their fixes, and fall back to their defaults",
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
      h.eq(vim.log.levels.WARN, h.note_matching("picker").level, "level")
      h.eq(1, #h.notes, "one warning for the three problems")
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
      h.eq(vim.log.levels.WARN, h.note_matching("ragls%-not%-installed").level, "a warning")
    end,
  },
  {
    "a bad option while a file opens is a warning, not an error that stops the :edit (BufReadPost)",
    function()
      -- Values no other case uses, so the problems have not been reported before.
      vim.g.ragls = vim.tbl_extend("force", h.base_options(), { top_k = 4242, picker = "fzf4242" })
      local path = h.root .. "/docs/guide.md"
      if vim.fn.bufnr(path) ~= -1 then
        vim.cmd.bwipeout({ vim.fn.bufnr(path), bang = true })
      end
      vim.cmd("messages clear")
      h.use_real_notify()
      local ok, err = pcall(vim.cmd.edit, vim.fn.fnameescape(path))
      local messages = vim.fn.execute("messages")
      h.reset()
      h.truthy(ok, "opening the file failed: " .. tostring(err))
      h.contains(messages, "ragls: invalid option picker")
      h.contains(messages, "got 4242")
      h.not_contains(messages, "Error detected")
      h.truthy(vim.api.nvim_buf_get_name(0):match("docs/guide%.md$"), "the file is open")
      h.wait("the buffer attached with the defaults", function()
        return vim.lsp.get_clients({ name = "ragls", bufnr = 0 })[1]
      end)
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
    "the limits option is validated and reaches the server over settings.limits, key by key",
    function()
      local config_mod = require("ragls.config")
      vim.g.ragls = vim.tbl_extend("force", h.base_options(), { limits = { maxFiles = 0, maxSize = 3 } })
      h.eq({}, config_mod.get().limits, "limits default")
      h.contains(h.wait_note("invalid option limits").message, 'preset = "default" or "strict"')
      local options = vim.tbl_extend("force", config_mod.defaults, {
        settings = { limits = { maxDepth = 9, maxFiles = 10 } },
        limits = { preset = "strict", maxFiles = 100000 },
      })
      vim.g.ragls = options
      local resolved, problems = config_mod.resolve()
      h.eq({}, problems, "no problems")
      local lsp_config = require("ragls.client").lsp_config(h.root, resolved)
      h.eq({ maxDepth = 9, maxFiles = 100000, preset = "strict" }, lsp_config.init_options.limits, "init_options")
      h.eq(lsp_config.init_options.limits, lsp_config.settings.ragls.limits, "settings.ragls")
      h.eq(nil, require("ragls.client").lsp_config(h.root, config_mod.defaults).init_options.limits, "none by default")
    end,
  },
  {
    ":Ragls without a subcommand offers the subcommands through vim.ui.select and runs the chosen one",
    function()
      local seen = h.stub_select(function(items)
        for _, item in ipairs(items) do
          if item.name == "status" then
            return item
          end
        end
      end)
      vim.cmd("Ragls")
      h.wait("vim.ui.select", function() return seen.lines end)
      h.eq("ragls.subcommand", seen.opts.kind, "kind")
      h.eq({ "search", "search!", "context", "symbols", "symbols!", "status", "reindex", "reindex!" },
        vim.tbl_map(function(line) return line:match("^(%S+)") end, seen.lines), "the menu")
      h.contains(table.concat(seen.lines, "\n"), "search!   search, results into the quickfix list")
      h.wait_note("generation")
      h.eq(nil, h.note_matching("unknown subcommand"), "no unknown subcommand")
      h.eq(1, #vim.fn.getcompletion("Ragls sea", "cmdline"), "completion still works")
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
      for _, name in ipairs({ "menu", "search", "search-quickfix", "context", "reindex", "status", "symbols" }) do
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
