-- Run the specs in a real headless Neovim against the real server:
--   nvim --clean --headless -l tests/run.lua [spec-file-name-pattern]
-- The exit code is the number of failed cases. Environment:
--   RAGLS_TEST_SERVER_CMD  JSON list, the server command (default ["ragls", "serve"])
--   RAGLS_TEST_WAIT_MS     the timeout of each wait (default 30000)
--   RAGLS_TEST_TIMEOUT_S   a watchdog for the whole run (default 300)
local tests_dir = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local plugin_dir = vim.fn.fnamemodify(tests_dir, ":h")
vim.opt.runtimepath:prepend(plugin_dir)
package.path = tests_dir .. "/?.lua;" .. package.path
vim.cmd.runtime("plugin/ragls.lua")

local helpers = require("helpers")

local function say(text)
  io.stdout:write(text, "\n")
  io.stdout:flush()
end

-- The whole run has a deadline even if something blocks outside a helper's wait.
local watchdog_s = tonumber(vim.env.RAGLS_TEST_TIMEOUT_S) or 300
vim.uv.new_timer():start(watchdog_s * 1000, 0, function()
  io.stdout:write(("watchdog: the specs did not finish within %d s\n"):format(watchdog_s))
  os.exit(125)
end)

local function spec_files(pattern)
  local files = vim.fn.glob(tests_dir .. "/*_spec.lua", false, true)
  table.sort(files)
  return vim.tbl_filter(function(file) return not pattern or file:find(pattern, 1, true) end, files)
end

local function run_case(name, fn)
  helpers.reset()
  local started = vim.uv.hrtime()
  local ok, err = xpcall(fn, debug.traceback)
  local deprecation = ok and helpers.note_matching("deprecated")
  if deprecation then
    ok, err = false, "Neovim warned: " .. deprecation.message
  end
  local ms = (vim.uv.hrtime() - started) / 1e6
  say(("%s %s (%d ms)"):format(ok and "ok  " or "FAIL", name, ms))
  if not ok then
    say("    " .. tostring(err):gsub("\n", "\n    "))
    for _, note in ipairs(helpers.notes) do
      say("    message: " .. note.message:gsub("\n", "\n      "))
    end
  end
  return ok
end

local function main()
  helpers.create_workspace()
  helpers.reset()
  local ok, err = xpcall(helpers.start, debug.traceback)
  if not ok then
    say("FAIL starting the server: " .. tostring(err))
    return 1
  end
  local passed, failed = 0, 0
  for _, file in ipairs(spec_files(arg[1])) do
    say("# " .. vim.fn.fnamemodify(file, ":t"))
    for _, case in ipairs(dofile(file)) do
      if run_case(case[1], case[2]) then
        passed = passed + 1
      else
        failed = failed + 1
      end
    end
  end
  say(("%d passed, %d failed"):format(passed, failed))
  return failed
end

local failures = main()
helpers.teardown()
os.exit(failures)
