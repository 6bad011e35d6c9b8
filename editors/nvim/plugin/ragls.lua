-- ragls: the :Ragls command, <Plug> mappings and autostart. No default keymaps.
if vim.g.loaded_ragls then
  return
end
vim.g.loaded_ragls = true

vim.api.nvim_create_user_command("Ragls", function(opts)
  require("ragls.commands").run(opts)
end, {
  nargs = "*",
  bang = true,
  desc = "ragls: search, context, reindex, status, symbols (no argument: a menu of them)",
  complete = function(arg_lead, cmdline)
    return require("ragls.commands").complete(arg_lead, cmdline)
  end,
})

local plug_maps = {
  ["<Plug>(ragls-menu)"] = "",
  ["<Plug>(ragls-search)"] = "search",
  ["<Plug>(ragls-search-quickfix)"] = "search!",
  ["<Plug>(ragls-context)"] = "context",
  ["<Plug>(ragls-reindex)"] = "reindex",
  ["<Plug>(ragls-status)"] = "status",
  ["<Plug>(ragls-symbols)"] = "symbols",
}
for lhs, subcommand in pairs(plug_maps) do
  vim.keymap.set("n", lhs, "<Cmd>" .. vim.trim("Ragls " .. subcommand) .. "<CR>", {
    desc = vim.trim("ragls " .. subcommand),
  })
end

local group = vim.api.nvim_create_augroup("ragls", { clear = true })
vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
  group = group,
  callback = function(event)
    require("ragls").on_buffer(event.buf)
  end,
})
vim.api.nvim_create_autocmd("LspProgress", {
  group = group,
  callback = function(event)
    require("ragls").on_progress(event)
  end,
})
