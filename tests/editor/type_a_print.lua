-- Run by run.sh inside Neovim, with model.py open and the README's set-up loaded: what a user
-- does, checked at each step. Any failure exits Neovim with status 1 and says why on stderr.

local buf = vim.api.nvim_get_current_buf()

local function fail(message)
  io.stderr:write("tests/editor: " .. message .. "\n")
  vim.cmd("cquit 1")
end

local function wait_for(what, condition)
  if not vim.wait(20000, condition, 20) then
    fail("timed out waiting for " .. what)
  end
end

local function text()
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, true), "\n")
end

local function tcfix_findings()
  return vim.tbl_filter(function(d)
    return d.source == "tcfix"
  end, vim.diagnostic.get(buf))
end

local function steps()
  wait_for("tcfix to start and attach", function()
    local clients = vim.lsp.buf_get_clients(buf)
    return #vim.tbl_filter(function(c)
      return c.name == "tcfix" and c.initialized
    end, vim.tbl_values(clients)) == 1
  end)
  -- The clean file has nothing to report: give the server a moment to say so, then check.
  vim.wait(300)
  if #tcfix_findings() ~= 0 then
    fail("findings in the clean file: " .. vim.inspect(tcfix_findings()))
  end

  -- Type the print above `return x` (line 7), in insert mode, key by key; no auto-indent, so
  -- the typed spaces are the indentation.
  vim.bo[buf].autoindent = false
  vim.bo[buf].indentexpr = ""
  vim.api.nvim_win_set_cursor(0, { 7, 0 })
  -- replace_termcodes escapes the emoji's 0x80 byte, which typeahead would read as a key code.
  local keys = vim.api.nvim_replace_termcodes('O        print("é😀", x.shape)<Esc>', true, false, true)
  vim.api.nvim_feedkeys(keys, "xt", false)
  if not text():find('        print("é😀", x.shape)\n        return x', 1, true) then
    fail("the typing went wrong:\n" .. text())
  end

  -- Mid-typing the buffer may not parse, and the server shows that as a syntax error: wait for
  -- the finding on the typed line, alone.
  wait_for("the TCF101 diagnostic", function()
    local found = tcfix_findings()
    return #found == 1 and found[1].code == "TCF101"
  end)
  local finding = tcfix_findings()[1]
  if finding.code ~= "TCF101" or finding.lnum ~= 6 or finding.col ~= 8 then
    fail("unexpected diagnostic: " .. vim.inspect(finding))
  end

  -- Hover on the print: the rule's documentation.
  vim.api.nvim_win_set_cursor(0, { 7, 10 })
  local tcfix = vim.tbl_filter(function(c)
    return c.name == "tcfix"
  end, vim.lsp.get_active_clients())[1]
  local hover = tcfix.request_sync("textDocument/hover", vim.lsp.util.make_position_params(), 10000, buf)
  local shown = hover and hover.result and hover.result.contents.value or ""
  if not shown:find("# TCF101 print-in-compiled-code", 1, true) then
    fail("no documentation on hover: " .. vim.inspect(hover))
  end

  -- The quick fix, as a user picks it from the list `code_action()` offers on the line.
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = vim.tbl_map(function(item)
      return opts.format_item(item)
    end, items)
    for _, item in ipairs(items) do
      if item[2].isPreferred then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end
  vim.api.nvim_win_set_cursor(0, { 7, 10 })
  vim.lsp.buf.code_action()
  wait_for("the quick fix to be applied", function()
    return text():find("is_compiling", 1, true) ~= nil
  end)
  local expected = '    def forward(self, x):\n'
    .. '        if not torch.compiler.is_compiling():\n'
    .. '            print("é😀", x.shape)\n'
    .. '        return x'
  if not text():find(expected, 1, true) then
    fail("the fixed buffer is not as expected:\n" .. text() .. "\noffered: " .. vim.inspect(offered))
  end

  wait_for("the diagnostic to go away after the fix", function()
    return #tcfix_findings() == 0
  end)
end

local ok, err = pcall(steps)
if not ok then
  fail(tostring(err))
end
-- `shutdown` and `exit`, as when Neovim quits: the server must go away on its own.
vim.lsp.stop_client(vim.lsp.get_active_clients())
wait_for("tcfix to shut down", function()
  return #vim.lsp.get_active_clients() == 0
end)
vim.cmd("qall!")
