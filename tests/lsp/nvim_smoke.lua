-- Headless Neovim against `tfc lsp` (run by tests/lsp_client.rs): open a flow, wait for the
-- server's diagnostics, jump to a definition; print what happened and quit with 0 on success.
-- $TFC_BIN is the server, $TFC_LSP_FLOW the flow file (its placeholder {steps.scan…} is on
-- line 3, the phase id "scan" on line 2).
local function finish(ok, msg)
  io.stdout:write(msg .. "\n")
  vim.cmd(ok and "qa!" or "cq!")
end

vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("TFC_LSP_FLOW")))
local start = vim.lsp.start or function(config)
  local id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(0, id)
  return id
end
local id = start({
  name = "tfc",
  cmd = { os.getenv("TFC_BIN"), "lsp" },
  root_dir = vim.fn.fnamemodify(os.getenv("TFC_LSP_FLOW"), ":h"),
})
if not id then
  return finish(false, "the client did not start")
end

local got = vim.wait(20000, function()
  return #vim.diagnostic.get(0) > 0
end, 50)
if not got then
  return finish(false, "no diagnostics")
end
local d = vim.diagnostic.get(0)[1]
io.stdout:write(string.format("DIAGNOSTIC %s %d:%d %s\n", d.source or "", d.lnum, d.col, (d.message:gsub("\n", " | "))))

-- On the `scan` of {steps.scan.output}: definition goes to line 2, the id.
local line = vim.api.nvim_buf_get_lines(0, 2, 3, false)[1]
local col = line:find("{steps.scan", 1, true)
vim.api.nvim_win_set_cursor(0, { 3, col + 7 })
vim.lsp.buf.definition()
local moved = vim.wait(10000, function()
  return vim.api.nvim_win_get_cursor(0)[1] == 2
end, 50)
local cur = vim.api.nvim_win_get_cursor(0)
if not moved then
  return finish(false, string.format("definition did not jump: cursor at %d:%d", cur[1], cur[2]))
end
local text = vim.api.nvim_buf_get_lines(0, 1, 2, false)[1]
finish(true, string.format("DEFINITION %d:%d %s", cur[1], cur[2], text:sub(cur[2] + 1, cur[2] + 4)))
