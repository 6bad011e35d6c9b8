;;; ragls.el --- Search a project's retrieval index through the ragls language server  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9") (jsonrpc "1.0.14"))
;; Keywords: tools, languages
;; URL: https://github.com/ragls/ragls

;;; Commentary:

;; ragls indexes every file of a project (code chunks cut at symbol boundaries,
;; Markdown sections, plain text) and answers questions with ranked chunks.
;; This package talks to it through Eglot and jsonrpc:
;;
;;   M-x ragls-search    ask a question, pick a result, jump to the chunk
;;   M-x ragls-context   a context prompt for a question: a buffer and the kill ring
;;   M-x ragls-reindex   re-walk the project (C-u: re-read every file)
;;   M-x ragls-status    what is indexed
;;
;; The commands use the ragls server Eglot already runs for the project (when
;; `eglot-server-programs' maps a mode to "ragls serve"), or start one beside
;; your usual language server.  By default it manages no buffers, so pyright,
;; gopls and others keep theirs.  Eglot watches the project's files for it.
;;
;; Setup:
;;   (add-to-list 'load-path "/path/to/ragls/editors/emacs")
;;   (require 'ragls)
;;   (setq ragls-server-command '("ragls" "serve"))   ; the default

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)
(require 'project)
(require 'subr-x)

(defgroup ragls nil
  "Retrieval over the current project through the ragls language server."
  :group 'tools
  :prefix "ragls-")

(defcustom ragls-server-command '("ragls" "serve")
  "Command that starts the ragls language server on stdio."
  :type '(repeat string))

(defcustom ragls-managed-modes '(ragls)
  "Major modes whose buffers the ragls server manages when this package starts it.
The default names no real mode: ragls then runs beside the language
server Eglot uses for those buffers (Eglot gives a buffer one server)."
  :type '(repeat symbol))

(defcustom ragls-search-top-k 10
  "How many results `ragls-search' asks for (1..100)."
  :type 'integer)

(defcustom ragls-context-top-k 5
  "How many chunks of evidence `ragls-context' asks for (1..100)."
  :type 'integer)

(defcustom ragls-context-format "fenced"
  "Layout of `ragls-context' prompts.
\"fenced\" wraps the evidence in the untrusted-context fence; \"plain\"
is the older layout."
  :type '(choice (const "fenced") (const "plain")))

(defcustom ragls-request-timeout 30
  "Seconds to wait for an answer to a search, prompt or status request."
  :type 'number)

(defcustom ragls-reindex-timeout 600
  "Seconds to wait for `ragls-reindex', which answers when the run has finished."
  :type 'number)

(defvar ragls-folder nil
  "Workspace-folder URI that requests are limited to; nil means every folder.")

(defvar ragls-search-history nil
  "Queries given to `ragls-search' and `ragls-context'.")

(defclass ragls-lsp-server (eglot-lsp-server) ()
  :documentation "An Eglot connection to a ragls language server.")

;;;; Connection

(defun ragls-server ()
  "The live ragls server for the current project, started when there is none."
  (let ((project (ragls--project)))
    (or (ragls--find-server project)
        (ragls--start project)
        (user-error "ragls: could not start %s" (string-join ragls-server-command " ")))))

(defun ragls-request (method &optional params timeout)
  "Send METHOD with PARAMS to the ragls server and return its result.
METHOD is a string such as \"rag/search\"; PARAMS is a plist.  Wait at
most TIMEOUT seconds (default `ragls-request-timeout').  A request the
server rejects signals a `user-error' with the server's message."
  (let ((server (ragls-server))
        (method (if (keywordp method) method (intern (concat ":" method)))))
    (condition-case err
        (jsonrpc-request server method params :timeout (or timeout ragls-request-timeout))
      (jsonrpc-error
       (user-error "ragls: %s" (or (alist-get 'jsonrpc-error-message (cdr err)) (cadr err)))))))

(defun ragls--project ()
  "The current project, or a transient one for `default-directory'."
  (or (project-current nil) (cons 'transient (expand-file-name default-directory))))

(defun ragls--ragls-server-p (server)
  "Non-nil when SERVER is a live connection to ragls."
  (and server
       (jsonrpc-running-p server)
       (or (cl-typep server 'ragls-lsp-server)
           (equal (plist-get (eglot--server-info server) :name) "ragls"))))

(defun ragls--find-server (project)
  "The ragls server of the current buffer or of PROJECT, if one is running."
  (let ((current (eglot-current-server)))
    (if (ragls--ragls-server-p current)
        current
      (cl-find-if #'ragls--ragls-server-p (gethash project eglot--servers-by-project)))))

(defun ragls--start (project)
  "Start ragls for PROJECT through Eglot, waiting for the handshake."
  (let ((eglot-sync-connect t))
    ;; From a temporary buffer, so Eglot never mistakes this buffer's own
    ;; language server for the one to replace.
    (with-temp-buffer
      (setq default-directory (file-name-as-directory (project-root project)))
      (eglot ragls-managed-modes project 'ragls-lsp-server ragls-server-command "ragls"))
    (ragls--find-server project)))

(defun ragls--params (&rest plist)
  "Return PLIST without its nil values, leaving the defaults to the server."
  (let (params)
    (while plist
      (when (cadr plist)
        (setq params (append params (list (car plist) (cadr plist)))))
      (setq plist (cddr plist)))
    params))

;;;; Search

;;;###autoload
(defun ragls-search (query)
  "Search the project's index for QUERY, pick a result and jump to its chunk.
Returns the chosen result (a plist shaped as PROTOCOL.md's RagResult)."
  (interactive (list (ragls--read-query "ragls search")))
  (let* ((answer (ragls-request "rag/search"
                                (ragls--params :query query :topK ragls-search-top-k :folder ragls-folder)))
         (results (append (plist-get answer :results) nil)))
    (if (null results)
        (progn (message "ragls: no results for %S%s" query (ragls--incomplete-note answer)) nil)
      (let* ((candidates (cl-loop for result in results
                                  for rank from 1
                                  collect (cons (ragls--describe-result rank result) result)))
             (choice (completing-read (format "ragls (%d results%s): " (length results)
                                              (ragls--incomplete-note answer))
                                      (ragls--ordered-table (mapcar #'car candidates))
                                      nil t nil nil (caar candidates)))
             (result (cdr (assoc choice candidates))))
        (when result
          (ragls-visit-result result))
        result))))

(defun ragls-visit-result (result)
  "Show RESULT: visit its file at the chunk, or show an added document."
  (let ((uri (plist-get result :uri)))
    (if (null uri)
        (ragls--show-document result)
      (when (fboundp 'xref-push-marker-stack)
        (xref-push-marker-stack))
      (find-file (ragls--uri-to-path uri))
      (goto-char (point-min))
      (forward-line (plist-get (plist-get (plist-get result :range) :start) :line))
      (ignore-errors (recenter 0)))))

(defun ragls-citation (result)
  "The file:START-END citation of RESULT (1-based lines), or document:ID."
  (let ((metadata (plist-get result :metadata)))
    (if (plist-get metadata :file)
        (format "%s:%s-%s" (plist-get metadata :file)
                (plist-get metadata :startLine) (plist-get metadata :endLine))
      (format "document:%s" (plist-get result :id)))))

(defun ragls--describe-result (rank result)
  "One completion line for RESULT at RANK: citation, symbol and first line."
  (let* ((metadata (plist-get result :metadata))
         (symbol (plist-get metadata :symbol))
         (first-line (car (split-string (string-trim (or (plist-get result :content) "")) "\n"))))
    (format "%2d. %s%s  %s" rank (ragls-citation result)
            (if symbol (concat "  " symbol) "")
            (truncate-string-to-width (or first-line "") 70 nil nil "..."))))

(defun ragls--ordered-table (candidates)
  "Return a completion table over CANDIDATES in the server's ranking."
  (lambda (string predicate action)
    (if (eq action 'metadata)
        '(metadata (display-sort-function . identity) (cycle-sort-function . identity))
      (complete-with-action action candidates string predicate))))

(defun ragls--show-document (result)
  "Show an added document RESULT in a buffer."
  (with-current-buffer (get-buffer-create "*ragls document*")
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert (format "%s\n\n%s\n" (ragls-citation result) (plist-get result :content)))
      (goto-char (point-min))
      (special-mode))
    (pop-to-buffer (current-buffer))))

(defun ragls--uri-to-path (uri)
  "The file name of a file URI."
  (if (fboundp 'eglot-uri-to-path)
      (funcall 'eglot-uri-to-path uri)
    (eglot--uri-to-path uri)))

(defun ragls--incomplete-note (answer)
  "A note when ANSWER came before the first index finished."
  (if (eq (plist-get answer :complete) :json-false) ", index still building" ""))

(defun ragls--read-query (prompt)
  "Read a query with PROMPT, offering the region or the symbol at point."
  (let ((default (if (use-region-p)
                     (buffer-substring-no-properties (region-beginning) (region-end))
                   (thing-at-point 'symbol t))))
    (read-string (format-prompt prompt default) nil 'ragls-search-history default)))

;;;; Context prompt

;;;###autoload
(defun ragls-context (query)
  "Build a context prompt for QUERY, show it and put it on the kill ring.
Return the prompt."
  (interactive (list (ragls--read-query "ragls context")))
  (let* ((answer (ragls-request "rag/contextPrompt"
                                (ragls--params :query query :topK ragls-context-top-k
                                               :format ragls-context-format :folder ragls-folder)))
         (prompt (plist-get answer :prompt))
         (results (append (plist-get answer :results) nil)))
    (with-current-buffer (get-buffer-create "*ragls context*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert prompt)
        (goto-char (point-min))
        (text-mode))
      (display-buffer (current-buffer)))
    (kill-new prompt)
    (message "ragls: context prompt from %d results copied to the kill ring%s" (length results)
             (if results (concat ": " (mapconcat #'ragls-citation results ", ")) ""))
    prompt))

;;;; Index

;;;###autoload
(defun ragls-reindex (&optional full)
  "Re-walk the project and wait for the run to finish.
With prefix arg FULL, re-read every file.  Return the server's answer,
a plist with :folders."
  (interactive "P")
  (message "ragls: reindexing%s..." (if full " (full)" ""))
  (let ((answer (ragls-request "rag/reindex"
                               (ragls--params :folder ragls-folder :full (and full t))
                               ragls-reindex-timeout)))
    (message "ragls: reindexed: %s" (ragls--folders-summary answer))
    answer))

;;;###autoload
(defun ragls-status ()
  "Show what is indexed in the *ragls status* buffer and return the answer."
  (interactive)
  (let ((answer (ragls-request "rag/status" (ragls--params :folder ragls-folder))))
    (with-current-buffer (get-buffer-create "*ragls status*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (dolist (folder (append (plist-get answer :folders) nil))
          (insert (ragls--folder-description folder) "\n"))
        (goto-char (point-min))
        (special-mode))
      (display-buffer (current-buffer)))
    (message "ragls: %s" (ragls--folders-summary answer))
    answer))

(defun ragls--folders-summary (answer)
  "Summarize each folder of ANSWER's :folders on one line."
  (mapconcat (lambda (folder)
               (format "%s %s, generation %s, %s files, %s chunks"
                       (plist-get folder :folder) (plist-get folder :state)
                       (plist-get folder :generation) (plist-get folder :files) (plist-get folder :chunks)))
             (append (plist-get answer :folders) nil)
             "; "))

(defun ragls--folder-description (folder)
  "Describe FOLDER, a FolderStatus plist, in a few lines."
  (let ((skipped (plist-get folder :skipped))
        (skipped-text nil))
    (while skipped
      (push (format "%s %s" (substring (symbol-name (car skipped)) 1) (cadr skipped)) skipped-text)
      (setq skipped (cddr skipped)))
    (concat
     (format "%s\n" (plist-get folder :folder))
     (format "  state       %s\n" (plist-get folder :state))
     (format "  generation  %s\n" (plist-get folder :generation))
     (format "  files       %s\n" (plist-get folder :files))
     (format "  chunks      %s\n" (plist-get folder :chunks))
     (format "  documents   %s\n" (plist-get folder :documents))
     (format "  indexed at  %s\n" (or (plist-get folder :lastIndexedAt) "never"))
     (format "  skipped     %s\n" (if skipped-text (string-join (nreverse skipped-text) ", ") "none"))
     (if (plist-get folder :error) (format "  error       %s\n" (plist-get folder :error)) ""))))

(provide 'ragls)
;;; ragls.el ends here
