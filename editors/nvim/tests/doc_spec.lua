local h = require("helpers")

local plugin_dir = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")

local function doc_text()
  return table.concat(vim.fn.readfile(plugin_dir .. "/doc/ragls.txt"), "\n")
end

return {
  {
    "the vimdoc has a tag for every option, subcommand, mapping and API function",
    function()
      local doc = doc_text()
      for name in pairs(require("ragls.config").defaults) do
        h.contains(doc, "*ragls-option-" .. name .. "*")
      end
      for name in pairs(require("ragls.commands").subcommands) do
        h.contains(doc, "*:Ragls-" .. name .. "*")
      end
      local mappings = 0
      for _, map in ipairs(vim.api.nvim_get_keymap("n")) do
        local lhs = map.lhsraw and vim.fn.keytrans(map.lhsraw) or map.lhs
        if lhs:match("^<Plug>%(ragls") then
          h.contains(doc, "*" .. lhs .. "*")
          mappings = mappings + 1
        end
      end
      h.eq(7, mappings, "<Plug> mappings found")
      for name, value in pairs(require("ragls")) do
        if type(value) == "function" and not name:match("^on_") then
          h.contains(doc, "*ragls." .. name .. "()*")
        end
      end
    end,
  },
  {
    ":help ragls opens the manual at its top, and its contents list every section",
    function()
      local copy = h.tmp .. "/help"
      vim.fn.mkdir(copy .. "/doc", "p")
      vim.fn.writefile(vim.fn.readfile(plugin_dir .. "/doc/ragls.txt"), copy .. "/doc/ragls.txt")
      vim.cmd.helptags(vim.fn.fnameescape(copy .. "/doc"))
      vim.opt.runtimepath:prepend(copy)
      local ok, err = pcall(vim.cmd.help, "ragls")
      local opened = { name = vim.api.nvim_buf_get_name(0), line = vim.fn.line("."), top = vim.fn.line("w0") }
      vim.cmd("silent! helpclose")
      vim.opt.runtimepath:remove(copy)
      assert(ok, err)
      h.eq(copy .. "/doc/ragls.txt", opened.name, "the help file")
      h.eq({ 1, 1 }, { opened.line, opened.top }, "cursor line and first shown line")
      local doc = doc_text()
      local contents = h.truthy(doc:match("%*ragls%-contents%*\n(.-)\n====="), "a CONTENTS section")
      local sections = 0
      for number, tag in doc:gmatch("\n(%d+)%. [%u ]+%s%*(ragls%-[%w-]+)%*\n") do
        sections = sections + 1
        h.truthy(contents:match("\n%s*" .. number .. "%. [^\n]*|" .. vim.pesc(tag) .. "|"),
          ("section %s (%s) is in the contents:\n%s"):format(number, tag, contents))
      end
      h.eq(10, sections, "numbered sections")
    end,
  },
  {
    "the tags file that helptags writes into doc/ is ignored by git",
    function()
      local result = vim.system({ "git", "check-ignore", "-q", "doc/tags" }, { cwd = plugin_dir }):wait()
      h.eq(0, result.code, "git check-ignore doc/tags (exit 0: ignored; 1: not ignored) " .. (result.stderr or ""))
    end,
  },
  {
    "helptags accepts the vimdoc (no duplicate tags)",
    function()
      local copy = h.tmp .. "/doc"
      vim.fn.mkdir(copy, "p")
      vim.fn.writefile(vim.fn.readfile(plugin_dir .. "/doc/ragls.txt"), copy .. "/ragls.txt")
      vim.cmd.helptags(vim.fn.fnameescape(copy))
      local tags = table.concat(vim.fn.readfile(copy .. "/tags"), "\n")
      h.contains(tags, ":Ragls-search\tragls.txt")
    end,
  },
  {
    "protocol.lua lists the 9 rag/* methods and the 4 ragls.* commands",
    function()
      local protocol = require("ragls.protocol")
      h.eq(9, #protocol.methods, "methods")
      h.eq(4, #protocol.commands, "commands")
      for _, method in ipairs(protocol.methods) do
        h.truthy(method:match("^rag/%a+$"), method)
      end
    end,
  },
}
