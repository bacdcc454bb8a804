-- Neovim 0.11+: `fusionlint server` next to clangd. Put this in init.lua (or the vim.lsp.config
-- table alone in ~/.config/nvim/lsp/fusionlint.lua, then vim.lsp.enable('fusionlint')).
vim.lsp.config('fusionlint', {
  cmd = { 'fusionlint', 'server' },  -- add -I DIR, -D NAME=VALUE, -p build/ as for `fusionlint check`
  filetypes = { 'c', 'cpp', 'cuda' },
  root_markers = { 'fusionlint.toml', '.fusionlint.toml', 'pyproject.toml', 'compile_commands.json', '.git' },
})
vim.lsp.enable('fusionlint')
