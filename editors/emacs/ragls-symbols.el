;;; ragls-symbols.el --- Find symbols through ragls beside the buffer's own language server  -*- lexical-binding: t; -*-

;;; Commentary:

;; `ragls-symbols' sends `workspace/symbol' to the project's ragls server (the
;; one Eglot runs, or one started beside the buffer's usual server), so it
;; works whichever server Eglot gives the buffer.  ragls.el autoloads it.

;;; Code:

(require 'ragls)

;;;###autoload
(defun ragls-symbols (query)
  "Find the functions, classes, methods and headings whose names match QUERY.
Asks the project's ragls server (`workspace/symbol'), whichever server
Eglot gives the buffer, then jumps to the one picked.  An empty QUERY
lists symbols up to the server's cap.  Returns the chosen WorkspaceSymbol."
  (interactive (list (ragls--read-query "ragls symbols")))
  (let* ((server (ragls-server))
         (symbols (append (progn (ragls-wait-for-first-index server)
                                 (ragls--send server :workspace/symbol (list :query query)))
                          nil)))
    (if (null symbols)
        (progn (message "ragls: no symbols match %S" query) nil)
      (let* ((root (file-name-as-directory (project-root (eglot--project server))))
             (candidates (ragls--candidates symbols (lambda (symbol) (ragls--describe-symbol symbol root))))
             (symbol (ragls--pick (format "ragls symbols (%s): " (ragls--count (length symbols) "symbol"))
                                  candidates 'ragls-symbol #'ragls--affixate-symbols)))
        (when symbol
          (let ((location (plist-get symbol :location)))
            (ragls--visit (plist-get location :uri)
                          (or (plist-get (plist-get (plist-get location :range) :start) :line) 0))))
        symbol))))

(defun ragls--describe-symbol (symbol root)
  "SYMBOL as `Container.name file:line', the file relative to ROOT."
  (let* ((name (plist-get symbol :name))
         (container (plist-get symbol :containerName))
         (location (plist-get symbol :location))
         (file (file-relative-name (ragls--uri-to-path (plist-get location :uri)) root))
         (line (plist-get (plist-get (plist-get location :range) :start) :line)))
    (format "%s %s%s"
            (if (and container (not (string-prefix-p (concat container ".") name)))
                (concat container "." name)
              name)
            file (if line (format ":%d" (1+ line)) ""))))

(defun ragls--affixate-symbols (candidates)
  "Affixations of symbol CANDIDATES: the kind before."
  (mapcar (lambda (candidate)
            (let ((symbol (cdr (ragls--candidate-data candidate))))
              (list candidate
                    (if symbol (propertize (format "%-9s " (ragls--symbol-kind-name symbol)) 'face 'shadow) "")
                    "")))
          candidates))

(provide 'ragls-symbols)
;;; ragls-symbols.el ends here
