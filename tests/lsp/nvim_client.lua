-- Neovim (0.7, headless) as the LSP client of `gradleak lsp`: open a file with a hazard, receive
-- the diagnostic, request the quick fix, apply it (Neovim sends the edit as didChange), see the
-- diagnostic cleared, then stop the client (shutdown + exit) and check the server exited 0.
-- Prints "ok <id>" / "FAIL <id> <why>" lines to stdout; run by tests/lsp/run.sh:
--   GRADLEAK=... GL_FILE=train.py nvim --headless --clean -n -c 'luafile nvim_client.lua'
local function out(s) io.stdout:write(s .. '\n') end
local failed = false
local function ok(id) out('ok ' .. id) end
local function fail(id, why)
  out('FAIL ' .. id .. ' ' .. tostring(why))
  failed = true
end
local function finish()
  vim.cmd(failed and 'cquit 1' or 'qall!')
end

local code
local id = vim.lsp.start_client({
  name = 'gradleak',
  cmd = { vim.env.GRADLEAK, 'lsp' },
  root_dir = vim.loop.cwd(),
  on_exit = function(c) code = c end,
})
if not id then
  fail('nvim-1.1', 'start_client failed')
  return finish()
end
vim.cmd('edit ' .. vim.env.GL_FILE)
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, id) -- initialize, initialized, didOpen

if not vim.wait(10000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
  fail('nvim-1.1 diagnostic received', 'no diagnostics within 10 s')
  return finish()
end
local d = vim.diagnostic.get(buf)[1]
local want_col = vim.fn.getline(d.lnum + 1):find('x.cuda()', 1, true) - 1
if d.source == 'gradleak' and d.code == 'GL201' and d.col == want_col then
  ok('nvim-1.1 diagnostic received (GL201 at ' .. (d.lnum + 1) .. ':' .. (d.col + 1) .. ')')
else
  fail('nvim-1.1 diagnostic received', vim.inspect(d))
end

-- 0.7: the diagnostic's user_data.lsp lacks `range`; the LSP form comes from here
local lspd = vim.lsp.diagnostic.get_line_diagnostics(buf, d.lnum, {}, id)[1]
local r = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = lspd.range,
  context = { diagnostics = { lspd }, only = { 'quickfix' } },
}, 5000)
local actions = r and r[id] and r[id].result or {}
local fix, noqa
for _, a in ipairs(actions) do
  if a.title:match('^GL201:') then fix = a end
  if a.title == 'Disable GL201 for this line' then noqa = a end
end
if fix and noqa then ok('nvim-1.2 quick fix and noqa action offered') else fail('nvim-1.2 quick fix offered', vim.inspect(actions)) end
if not fix then return finish() end

local client = vim.lsp.get_client_by_id(id)
vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding) -- buffer edit -> didChange
local line = vim.fn.getline(d.lnum + 1)
if line:find('x = x.cuda()', 1, true) then ok('nvim-1.3 fix applied to the buffer') else fail('nvim-1.3 fix applied', line) end
if vim.wait(10000, function() return #vim.diagnostic.get(buf) == 0 end, 20) then
  ok('nvim-1.4 diagnostic cleared after the fix')
else
  fail('nvim-1.4 diagnostic cleared', vim.inspect(vim.diagnostic.get(buf)))
end

-- hover on the fixed line shows nothing; undo the fix and hover on the finding shows the rule doc
vim.cmd('silent undo')
if vim.wait(10000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
  local dd = vim.diagnostic.get(buf)[1]
  local h = vim.lsp.buf_request_sync(buf, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = dd.lnum, character = dd.col },
  }, 5000)
  local hv = h and h[id] and h[id].result
  if hv and hv.contents and hv.contents.value:find('## What it does', 1, true) then
    ok('nvim-1.5 undo brings the finding back; hover shows the rule doc')
  else
    fail('nvim-1.5 hover', vim.inspect(h))
  end
else
  fail('nvim-1.5 undo brings the finding back', 'no diagnostics after undo')
end

client.stop() -- shutdown + exit
if vim.wait(10000, function() return code ~= nil end, 20) and code == 0 then
  ok('nvim-1.6 shutdown and exit: server exit code 0')
else
  fail('nvim-1.6 server exit', tostring(code))
end
finish()
