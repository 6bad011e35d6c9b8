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
;;   M-x ragls-search          ask a question, pick a result, jump to the chunk
;;   M-x ragls-consult-search  the same through consult, previewing each chunk
;;   M-x ragls-symbols         find a function, class or heading by name
;;   M-x ragls-context         a context prompt for a question: a buffer and the kill ring
;;   M-x ragls-reindex         re-walk the project (C-u: re-read every file)
;;   M-x ragls-status          what is indexed
;;
;; The commands use the ragls server Eglot already runs for the project (when
;; `eglot-server-programs' maps a mode to "ragls serve"), or start one beside
;; your usual language server.  By default it manages no buffers, so pyright,
;; gopls and others keep theirs.  Eglot watches the project's files for it.
;; Outside version control, the project is the nearest directory holding one
;; of `ragls-project-markers'.  A search, prompt or symbol lookup made before
;; the first index has finished waits for it (`ragls-first-index-timeout').
;; Candidates are `file:start-end symbol' with the rank and first line as
;; annotations, so vertico, marginalia and the *Completions* buffer show them.
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

(require 'ragls-project)
(require 'ragls-pick)

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

(defcustom ragls-first-index-timeout 60
  "Seconds a search, prompt or symbol lookup waits for the project's first index.
While the server builds it, the echo area shows its progress; after
this many seconds the request answers from what is indexed so far.
0 never waits."
  :type 'number)

(defcustom ragls-limits nil
  "Limits of one index run, sent to the server as its `limits' setting.
A plist of positive integers keyed by :maxFiles, :maxEntries,
:maxDecodedBytes, :maxDepth and :maxFileBytes, and optionally :preset
\"default\" or \"strict\", e.g. (:maxFiles 400000).  nil leaves the
server's defaults, which fit a workspace of 100,000 files and 2 GB
\(250,000 files, 4 GiB of decoded text); \"strict\" starts from the
seeds' limits for shared machines (4,096 files, 64 MiB).  A folder over a
limit fails its run at once with a message naming the setting, e.g.
`ragls.limits.maxFiles'.  It applies to servers this package starts."
  :type '(plist :key-type (choice (const :maxFiles) (const :maxEntries) (const :maxDecodedBytes)
                                  (const :maxDepth) (const :maxFileBytes) (const :preset))
                :value-type (choice integer (const "default") (const "strict"))))

(defcustom ragls-reranker nil
  "The server's `reranker' setting: nil (off) or a plist naming a provider.
The top fused results are reordered by a cross-encoder, either a local
ONNX export, e.g. (:provider \"onnx\" :path \"~/models/bge-reranker-base\"),
or an HTTP /rerank endpoint (TEI, Jina, Cohere, vLLM, llama.cpp), e.g.
\(:provider \"http\" :url \"http://127.0.0.1:8080\" :model \"bge-reranker-v2-m3\").
Optional keys: :topN (30), :timeout (seconds), :apiKey.  It applies to
servers this package starts."
  :type '(choice (const :tag "Off" nil) (plist :key-type symbol :value-type sexp)))

(defcustom ragls-query-expansion nil
  "The server's `queryExpansion' setting: nil (off) or a plist.
An OpenAI-compatible chat endpoint rewrites the question and each rewrite
is searched too, e.g. (:url \"http://127.0.0.1:11434\" :model \"qwen2.5-coder\").
Optional keys: :count (3), :timeout (5 seconds, then the plain search
answers), :apiKey.  It applies to servers this package starts."
  :type '(choice (const :tag "Off" nil) (plist :key-type symbol :value-type sexp)))

(defcustom ragls-recency nil
  "The server's `recency' setting: nil (off) or a plist.
Recently changed files rank higher: each score times
floor + (1 - floor) x 0.5^(age / halfLifeDays), the age since the
file's last commit (its mtime where git does not track it), e.g.
\(:enabled t :halfLifeDays 30 :floor 0.8), the defaults once enabled.
It applies to servers this package starts."
  :type '(choice (const :tag "Off" nil) (plist :key-type symbol :value-type sexp)))

(defcustom ragls-open-files-boost nil
  "Non-nil: the server ranks files open in the editor as just changed.
They keep their whole score; other files count their recency factor.
The server learns which files are open from the buffers its Eglot
session manages (`ragls-managed-modes').  It applies to servers this
package starts."
  :type 'boolean)

(defvar ragls-folder nil
  "Workspace-folder URI that requests are limited to; nil means every folder.")

(defvar ragls-search-history nil
  "Queries given to `ragls-search' and `ragls-context'.")

(defclass ragls-lsp-server (eglot-lsp-server)
  ((progress :initform nil :accessor ragls--progress
             :documentation "The value of the last `$/progress' report, nil once it has ended."))
  :documentation "An Eglot connection to a ragls language server.")

(defvar ragls--indexed-servers (make-hash-table :test #'eq :weakness 'key)
  "Servers whose first index has finished, so requests no longer ask.")

(defconst ragls--poll-seconds 0.2
  "How often the wait for the first index asks the server's status.")

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
  (ragls--send (ragls-server) method params timeout))

(defun ragls--send (server method params &optional timeout)
  "Send METHOD with PARAMS to SERVER, as `ragls-request' does."
  (let ((method (if (keywordp method) method (intern (concat ":" method)))))
    (condition-case err
        (jsonrpc-request server method params :timeout (or timeout ragls-request-timeout))
      (jsonrpc-error
       (user-error "ragls: %s" (or (alist-get 'jsonrpc-error-message (cdr err)) (cadr err)))))))

(defun ragls--indexed-request (method params)
  "Send METHOD with PARAMS once the first index is there or the wait gave up."
  (let ((server (ragls-server)))
    (ragls-wait-for-first-index server)
    (ragls--send server method params)))

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

(cl-defmethod eglot-initialization-options ((_server ragls-lsp-server))
  "The server's settings: `ragls-limits', `ragls-reranker', `ragls-query-expansion',
`ragls-recency' and `ragls-open-files-boost', when set."
  (or (append (and ragls-limits (list :limits ragls-limits))
              (and ragls-reranker (list :reranker ragls-reranker))
              (and ragls-query-expansion (list :queryExpansion ragls-query-expansion))
              (and ragls-recency (list :recency ragls-recency))
              (and ragls-open-files-boost (list :openFilesBoost t)))
      eglot--{}))

(cl-defmethod eglot-client-capabilities :around ((_server ragls-lsp-server))
  "Eglot's capabilities with work-done progress, which the first-index wait shows."
  (let* ((capabilities (copy-sequence (cl-call-next-method)))
         (window (copy-sequence (plist-get capabilities :window))))
    (plist-put capabilities :window (plist-put window :workDoneProgress t))))

(cl-defmethod eglot-handle-request
  ((_server ragls-lsp-server) (_method (eql window/workDoneProgress/create)) &key _token &allow-other-keys)
  "Accept the server's progress token."
  nil)

(cl-defmethod eglot-handle-notification
  ((server ragls-lsp-server) (_method (eql $/progress)) &key _token value &allow-other-keys)
  "Keep the progress VALUE of SERVER's index run for the echo area."
  (setf (ragls--progress server) (unless (equal (plist-get value :kind) "end") value))
  (cl-call-next-method))

(defun ragls--start (project)
  "Start ragls for PROJECT through Eglot, waiting for the handshake.
Say which root it indexes and how that root was found."
  (let ((eglot-sync-connect t)
        (root (file-name-as-directory (project-root project))))
    ;; From a temporary buffer, so Eglot never mistakes this buffer's own
    ;; language server for the one to replace.
    (with-temp-buffer
      (setq default-directory root)
      (eglot ragls-managed-modes project 'ragls-lsp-server ragls-server-command "ragls"))
    (message "ragls: indexing %s (%s)" (abbreviate-file-name root) (ragls-project-describe project))
    (ragls--find-server project)))

(defun ragls-wait-for-first-index (&optional server)
  "Wait until SERVER (default: the project's ragls) has its first index.
Show the progress in the echo area; give up after
`ragls-first-index-timeout' seconds.  Return non-nil when indexed."
  (let ((server (or server (ragls-server))))
    (or (gethash server ragls--indexed-servers)
        (let* ((started (float-time))
               (deadline (+ started ragls-first-index-timeout))
               (folders (ragls--status-folders server))
               (waited (and (> ragls-first-index-timeout 0) (not (ragls--first-index-done-p folders)))))
          (while (and waited (not (ragls--first-index-done-p folders)) (< (float-time) deadline))
            (message "ragls: waiting for the first index%s... %ds"
                     (ragls--progress-note server) (round (- (float-time) started)))
            (accept-process-output nil ragls--poll-seconds)
            (setq folders (ragls--status-folders server)))
          (cond ((ragls--first-index-done-p folders)
                 (when waited
                   (message "ragls: first index ready: %s" (ragls--folders-summary (list :folders folders))))
                 (puthash server t ragls--indexed-servers))
                (t (when waited
                     (message "ragls: no first index after %s; answering from what is indexed so far"
                              (ragls--count ragls-first-index-timeout "second")))
                   nil))))))

(defun ragls--status-folders (server)
  "The FolderStatus plists of SERVER, as a list."
  (append (plist-get (ragls--send server :rag/status (ragls--params :folder ragls-folder)) :folders) nil))

(defun ragls--first-index-done-p (folders)
  "Non-nil when every folder of FOLDERS has committed an index or failed."
  (cl-every (lambda (folder)
              (or (>= (or (plist-get folder :generation) 0) 1)
                  (equal (plist-get folder :state) "failed")))
            folders))

(defun ragls--progress-note (server)
  "The last progress report of SERVER, like \": 12/84 src/a.py (14%)\", or \"\"."
  (let ((value (and (cl-typep server 'ragls-lsp-server) (ragls--progress server))))
    (if (and value (plist-get value :message))
        (format ": %s%s" (plist-get value :message)
                (if (plist-get value :percentage) (format " (%s%%)" (plist-get value :percentage)) ""))
      "")))

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
Candidates are `file:start-end symbol', with the rank and the chunk's
first line as annotations.  Returns the chosen result (a plist shaped
as PROTOCOL.md's RagResult)."
  (interactive (list (ragls--read-query "ragls search")))
  (let* ((answer (ragls-search-answer query))
         (results (append (plist-get answer :results) nil)))
    (if (null results)
        (progn (message "ragls: no results for %S%s" query (ragls--incomplete-note answer)) nil)
      (let* ((candidates (ragls--result-candidates results))
             (result (ragls--pick (ragls--search-prompt answer results) candidates 'ragls-result
                                  #'ragls--affixate-results)))
        (when result
          (ragls-visit-result result))
        result))))

(autoload 'ragls-consult-search "ragls-consult"
  "Search for QUERY through `consult--read', previewing each result's chunk." t)

(autoload 'ragls-symbols "ragls-symbols"
  "Find the functions, classes, methods and headings whose names match QUERY." t)

(defun ragls-search-answer (query)
  "The server's answer to a search for QUERY, once the first index is there."
  (ragls--indexed-request "rag/search"
                          (ragls--params :query query :topK ragls-search-top-k :folder ragls-folder)))

(defun ragls--search-prompt (answer results)
  "The minibuffer prompt for picking one of RESULTS of ANSWER."
  (format "ragls (%s%s): " (ragls--count (length results) "result") (ragls--incomplete-note answer)))

(defun ragls-visit-result (result)
  "Show RESULT: visit its file at the chunk, or show an added document."
  (let ((uri (plist-get result :uri)))
    (if (null uri)
        (ragls--show-document result)
      (ragls--visit uri (plist-get (plist-get (plist-get result :range) :start) :line)))))

(defun ragls--visit (uri line)
  "Visit the file of URI at LINE (0-based); `M-,' comes back."
  (when (fboundp 'xref-push-marker-stack)
    (xref-push-marker-stack))
  (find-file (ragls--uri-to-path uri))
  (goto-char (point-min))
  (forward-line line)
  (ignore-errors (recenter 0)))

(defun ragls-citation (result)
  "The file:START-END citation of RESULT (1-based lines), or document:ID."
  (let ((metadata (plist-get result :metadata)))
    (if (plist-get metadata :file)
        (format "%s:%s-%s" (plist-get metadata :file)
                (plist-get metadata :startLine) (plist-get metadata :endLine))
      (format "document:%s" (plist-get result :id)))))

;;;; Display

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
  (let* ((answer (ragls--indexed-request "rag/contextPrompt"
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
    (message "ragls: context prompt from %s copied to the kill ring%s" (ragls--count (length results) "result")
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
               (format "%s %s, generation %s, %s, %s"
                       (plist-get folder :folder) (plist-get folder :state) (plist-get folder :generation)
                       (ragls--count (plist-get folder :files) "file")
                       (ragls--count (plist-get folder :chunks) "chunk")))
             (append (plist-get answer :folders) nil)
             "; "))

(defun ragls--count (count noun)
  "COUNT and NOUN, plural unless COUNT is 1: \"1 result\", \"3 results\"."
  (format "%s %s%s" count noun (if (eql count 1) "" "s")))

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
     (let ((shared (plist-get folder :sharedIndex)))
       (if shared (format "  shared      %s\n" (ragls--shared-description shared)) ""))
     (if (plist-get folder :error) (format "  error       %s\n" (plist-get folder :error)) ""))))

(defun ragls--shared-description (shared)
  "Describe SHARED, a FolderStatus's :sharedIndex plist: its commit, its files in use, the files indexed here."
  (let ((where (format "%s (%s)" (plist-get shared :name) (plist-get shared :source)))
        (commit (plist-get shared :commit))
        (problem (plist-get shared :error)))
    (if (not (stringp commit))
        (format "%s: not used (%s); every file is indexed here" where problem)
      (format "%s at commit %s, generation %s: %s from it, %s indexed here%s"
              where (substring commit 0 (min 12 (length commit))) (plist-get shared :generation)
              (ragls--count (plist-get shared :files) "file") (plist-get shared :localFiles)
              (if (stringp problem) (format "; not answering now (%s)" problem) "")))))

(provide 'ragls)
;;; ragls.el ends here
