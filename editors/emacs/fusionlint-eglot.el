;;; fusionlint-eglot.el --- `fusionlint server' for C++/CUDA buffers through eglot  -*- lexical-binding: t; -*-
;; eglot runs one server per buffer: this makes fusionlint the server of these modes (instead of
;; clangd). Diagnostics go to Flymake, hover to eldoc; quick fixes are `eglot-code-actions'.
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((c-mode c-ts-mode c++-mode c++-ts-mode cuda-mode) . ("fusionlint" "server"))))
;; Start it in every C++ buffer (else M-x eglot):
;; (add-hook 'c++-mode-hook #'eglot-ensure)
;;; fusionlint-eglot.el ends here
