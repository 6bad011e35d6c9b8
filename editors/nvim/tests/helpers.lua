--- Shared spec helpers: the fixture workspace, the real server, waiting with timeouts,
--- captured messages, and small assertions.
local M = {}

M.WAIT_MS = tonumber(vim.env.RAGLS_TEST_WAIT_MS) or 30000

M.FIXTURE = {
  ["src/auth/middleware.py"] = [[
"""Request authentication."""


class AuthMiddleware:
    """Checks the bearer token of every request."""

    def check(self, request):
        # The blank lines below keep this class over the 30 lines small neighbours are packed up to.
        token = request.headers.get("Authorization")

























        return validate_token(token)


def validate_token(token):
    return token is not None and token.startswith("Bearer ")
]],
  ["src/db/pool.py"] = [[
class ConnectionPool:
    def acquire(self):
        return self.connections.pop()

    def release(self, connection):
        self.connections.append(connection)
]],
  ["web/router.js"] = [[
function matchRoute(path, routes) {
  return routes.find((route) => route.pattern.test(path));
}

class Router {
  dispatch(request) {
    return matchRoute(request.url, this.routes);
  }
}
]],
  ["docs/guide.md"] = [[
# Guide

## Installing

Run the installer with pip.

## Rate limiting

Requests over the quota get a 429 answer from the throttle.
]],
  ["notes.txt"] = "Plain text notes about the deployment calendar.\n",
  [".gitignore"] = "secret_notes.txt\n",
  ["secret_notes.txt"] = "the launch code is swordfish\n",
  [".git/HEAD"] = "ref: refs/heads/main\n",
}

M.notes = {}
M.inputlist_calls = {}
local original = { notify = vim.notify, select = vim.ui.select, input = vim.ui.input }

--- Write text to path (relative to the workspace), creating folders.
function M.write(relative, text)
  local path = M.root .. "/" .. relative
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  local file = assert(io.open(path, "w"))
  file:write(text)
  file:close()
  return path
end

--- The server command: RAGLS_TEST_SERVER_CMD (a JSON list), else `ragls serve`.
function M.server_cmd()
  local raw = vim.env.RAGLS_TEST_SERVER_CMD
  return raw and raw ~= "" and vim.json.decode(raw) or { "ragls", "serve" }
end

--- The options every spec starts from. No dense vectors: with ragls[dense] installed they join
--- once the background embedder has finished, and then every query, even nonsense, finds
--- something (cosine similarity is never zero), so results would depend on timing.
function M.base_options()
  return {
    cmd = M.server_cmd(),
    settings = { cacheDir = M.tmp .. "/cache", embedding = "none" },
    register = "r",
    timeout_ms = M.WAIT_MS,
  }
end

--- Create the fixture workspace in a temp dir and make it the cwd.
function M.create_workspace()
  M.tmp = vim.fn.tempname()
  M.root = M.tmp .. "/workspace"
  for relative, text in pairs(M.FIXTURE) do
    M.write(relative, text)
  end
  M.root = vim.fs.normalize(vim.uv.fs_realpath(M.root))
  vim.cmd.cd(vim.fn.fnameescape(M.root))
end

--- Wait until condition() is truthy; error naming what was awaited after timeout_ms.
function M.wait(what, condition, timeout_ms)
  timeout_ms = timeout_ms or M.WAIT_MS
  local value
  local ok = vim.wait(timeout_ms, function()
    value = condition()
    return value
  end, 20)
  if not ok then
    error(("timed out after %d ms waiting for %s"):format(timeout_ms, what), 2)
  end
  return value
end

--- Start the server on a workspace file and wait for its first index (generation >= 1).
function M.start()
  local client_mod = require("ragls.client")
  vim.cmd.edit(vim.fn.fnameescape(M.root .. "/src/auth/middleware.py"))
  local client = M.wait("a ragls client", function() return client_mod.all()[1] end)
  M.wait("the first index", function()
    local answer = client_mod.request_sync(client, "rag/status", vim.empty_dict(), 2000)
    return answer and answer.folders[1] and answer.folders[1].generation >= 1
  end)
  return client
end

local function capture(message, level)
  M.notes[#M.notes + 1] = { message = message, level = level }
end

--- Use Neovim's own vim.notify (messages in :messages, errors raised as errors) until the next reset.
function M.use_real_notify()
  vim.notify = original.notify
end

--- Forget test doubles, options, messages and extra windows between specs.
function M.reset()
  vim.notify = capture
  vim.ui.select, vim.ui.input = original.select, original.input
  -- Neovim's own vim.ui.select asks with inputlist(), which would wait for keys forever here.
  M.inputlist_calls = {}
  vim.fn.inputlist = function(choices)
    M.inputlist_calls[#M.inputlist_calls + 1] = choices
    return 0
  end
  M.notes = {}
  vim.g.ragls = M.base_options()
  require("ragls.config").setup(nil)
  require("ragls.picker").close()
  vim.cmd("silent! cclose | silent! only! | silent! tabonly!")
  vim.fn.setqflist({}, "f")
  vim.fn.setreg("r", "")
end

--- Stop the servers and remove the temp dir.
function M.teardown()
  local client_mod = require("ragls.client")
  client_mod.stop_all()
  pcall(M.wait, "the servers to stop", function() return #client_mod.all() == 0 end, 5000)
  vim.notify = original.notify
  if M.tmp then
    vim.fn.delete(M.tmp, "rf")
  end
end

--- The first captured message matching a Lua pattern, or nil.
function M.note_matching(pattern)
  for _, note in ipairs(M.notes) do
    if note.message:match(pattern) then
      return note
    end
  end
end

--- Wait for a captured message matching pattern.
function M.wait_note(pattern, timeout_ms)
  return M.wait("a message matching " .. pattern, function() return M.note_matching(pattern) end, timeout_ms)
end

--- Replace vim.ui.select; choose(items) returns the item to pick (or nil to cancel).
function M.stub_select(choose)
  local seen = {}
  vim.ui.select = function(items, opts, on_choice)
    seen.items, seen.opts = items, opts
    seen.lines = vim.tbl_map(opts.format_item, items)
    on_choice(choose and choose(items) or nil)
  end
  return seen
end

--- The floating picker's windows ({ list = win, preview = win }), waiting for it to open.
function M.wait_picker(timeout_ms)
  return M.wait("ragls's floating picker", function() return require("ragls.picker").windows() end, timeout_ms)
end

--- Wait for a non-empty quickfix list; returns its items with file names filled in.
function M.wait_quickfix(timeout_ms)
  local items = M.wait("quickfix items", function()
    local list = vim.fn.getqflist()
    return #list > 0 and list or nil
  end, timeout_ms)
  for _, item in ipairs(items) do
    item.filename = vim.api.nvim_buf_get_name(item.bufnr)
  end
  return items
end

--- The lines of a buffer.
function M.lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr or 0, 0, -1, false)
end

function M.eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(("%s: expected %s, got %s"):format(what or "value", vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

function M.truthy(value, what)
  if not value then
    error(what or "expected a truthy value", 2)
  end
  return value
end

--- Assert that text contains needle (plain), showing the text on failure.
function M.contains(text, needle)
  if not text:find(needle, 1, true) then
    error(("expected to find %q in:\n%s"):format(needle, text), 2)
  end
end

function M.not_contains(text, needle)
  if text:find(needle, 1, true) then
    error(("expected no %q in:\n%s"):format(needle, text), 2)
  end
end

--- The 1-based line of the first line of a workspace file containing needle.
function M.line_of(relative, needle)
  for index, line in ipairs(vim.fn.readfile(M.root .. "/" .. relative)) do
    if line:find(needle, 1, true) then
      return index
    end
  end
  error(("no %q in %s"):format(needle, relative), 2)
end

return M
