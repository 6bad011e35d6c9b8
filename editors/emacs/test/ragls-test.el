;;; ragls-test.el --- Batch tests of ragls.el against the real server  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run from the repository root:
;;   RAGLS_SERVER_COMMAND="python -m ragls serve" \
;;     emacs --batch -Q -l editors/emacs/test/ragls-test.el -f ert-run-tests-batch-and-exit
;; Each test shares one fixture workspace and one server, created on first use
;; and removed when Emacs exits; tests of roots and of the first index make
;; folders and servers of their own.  File events reach Eglot's watchers only
;; through `read-event' in batch Emacs, so waits loop on it.  Debian's
;; elpa-vertico, elpa-marginalia and elpa-consult are loaded from
;; /usr/share/emacs/site-lisp/elpa; tests of them type into the real minibuffer
;; from a keyboard macro (`ragls-test--type-into').

;;; Code:

(setq package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
(package-initialize)

(require 'ert)
(require 'cl-lib)
(defconst ragls-test--directory (file-name-directory (or load-file-name buffer-file-name))
  "This file's directory.")
(add-to-list 'load-path (expand-file-name ".." ragls-test--directory))
(require 'ragls)

(defconst ragls-test--files
  '(("src/auth.py" . "\"\"\"Request authentication.\"\"\"


class AuthMiddleware:
    \"\"\"Checks the bearer token of every request.\"\"\"

    def check(self, request):
        # The blank lines below keep this class over the 30 lines small neighbours are packed up to.
        token = request.headers.get(\"Authorization\")

























        return validate_token(token)


def validate_token(token):
    return token is not None and token.startswith(\"Bearer \")
")
    ("src/pool.py" . "class ConnectionPool:
    def acquire(self):
        return self.connections.pop()

    def release(self, connection):
        self.connections.append(connection)
")
    ("docs/guide.md" . "# Guide

## Rate limiting

Requests over the quota get a 429 answer from the throttle.
")
    ;; A project marker, so every buffer of the fixture (src/auth.py's too) has its root as project.
    ("pyproject.toml" . "[project]
name = \"fixture\"
"))
  "The fixture workspace: relative path and content.")

(defvar ragls-test--root nil "The fixture workspace, once created.")
(defvar ragls-test--timeout 30 "Seconds any wait in these tests may take.")

(defun ragls-test--ensure ()
  "Create the workspace and start the server once; leave `default-directory' there."
  (unless ragls-test--root
    (setq ragls-test--root (file-name-as-directory (make-temp-file "ragls-emacs-" t)))
    (dolist (file ragls-test--files)
      (let ((path (expand-file-name (car file) ragls-test--root)))
        (make-directory (file-name-directory path) t)
        (with-temp-file path (insert (cdr file)))))
    (let ((command (getenv "RAGLS_SERVER_COMMAND")))
      (when (and command (not (string-empty-p command)))
        (setq ragls-server-command (split-string-and-unquote command)))))
  (setq default-directory ragls-test--root)
  (ragls-test--wait "the first index"
                    (lambda ()
                      (let ((folders (plist-get (ragls-request "rag/status") :folders)))
                        (and (> (length folders) 0) (>= (plist-get (aref folders 0) :generation) 1))))))

(defun ragls-test--wait (what predicate)
  "Dispatch events until PREDICATE is non-nil; fail naming WHAT after the timeout."
  (let ((deadline (+ (float-time) ragls-test--timeout))
        (value nil))
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (ignore-errors (read-event nil nil 0.2)))
    (or value (ert-fail (format "timed out waiting for %s" what)))))

(defun ragls-test--result-files (query)
  "The files of the results for QUERY."
  (mapcar (lambda (result) (plist-get (plist-get result :metadata) :file))
          (plist-get (ragls-request "rag/search" (list :query query :topK 100)) :results)))

(defun ragls-test--user-error-message (thunk)
  "The message of the `user-error' THUNK signals."
  (let ((err (should-error (funcall thunk) :type 'user-error)))
    (cadr err)))

(defun ragls-test--cleanup ()
  (dolist (server (hash-table-values eglot--servers-by-project))
    (dolist (connection server)
      (ignore-errors (eglot-shutdown connection))))
  (when ragls-test--root
    (ignore-errors (delete-directory ragls-test--root t))))

(add-hook 'kill-emacs-hook #'ragls-test--cleanup)

(defun ragls-test--messages (thunk)
  "Call THUNK; return (VALUE . MESSAGES), the echo-area messages it showed, in order."
  (let ((messages nil)
        (original (symbol-function 'message)))
    (cl-letf (((symbol-function 'message)
               (lambda (format-string &rest args)
                 (when format-string
                   (push (apply #'format-message format-string args) messages))
                 (apply original format-string args))))
      (let ((value (funcall thunk)))
        (cons value (nreverse messages))))))

(defun ragls-test--workspace (files)
  "A new folder holding FILES, an alist of relative path and content; return its name."
  (let ((root (file-name-as-directory (make-temp-file "ragls-emacs-" t))))
    (dolist (file files root)
      (let ((path (expand-file-name (car file) root)))
        (make-directory (file-name-directory path) t)
        (with-temp-file path (insert (cdr file)))))))

(defun ragls-test--stop-server-of (directory)
  "Shut down the ragls server of DIRECTORY's project, if one runs."
  (let ((default-directory directory))
    (ignore-errors (eglot-shutdown (ragls--find-server (ragls--project))))))

(defun ragls-test--picking (thunk)
  "Call THUNK with `completing-read' taking the first candidate.
Return (VALUE PROMPT TABLE CANDIDATES)."
  (let (prompt table candidates)
    (cl-letf (((symbol-function 'completing-read)
               (lambda (given-prompt given-table &rest _)
                 (setq prompt given-prompt table given-table candidates (all-completions "" given-table))
                 (car candidates))))
      (list (funcall thunk) prompt table candidates))))

(defun ragls-test--picked-file (thunk)
  "The file of the result THUNK picks when `completing-read' takes the first candidate."
  (plist-get (plist-get (car (ragls-test--picking thunk)) :metadata) :file))

(defun ragls-test--completions (string table metadata)
  "The candidates of TABLE that STRING finds through the completion styles, as a proper list."
  (let ((all (completion-all-completions string table nil (length string) metadata)))
    (when all (setcdr (last all) nil))
    all))

(defvar ragls-test--snapshot nil "What `ragls-test--record' saves, given by the test.")
(defvar ragls-test--snapshots nil "What the recordings saw, newest first.")

(defun ragls-test--record ()
  "Save what `ragls-test--snapshot' returns, from inside the minibuffer."
  (interactive)
  (push (funcall ragls-test--snapshot) ragls-test--snapshots))

(defun ragls-test--type-into (command &rest keys)
  "Call COMMAND from a keyboard macro that then types KEYS (strings or vectors); return its value.
Batch Emacs reads a minibuffer from stdin, except while a macro runs:
then it is the real minibuffer, with vertico's and consult's hooks.
`C-c y' in KEYS runs `ragls-test--record'."
  (let ((value nil)
        (ragls-test--snapshots nil)
        (directory default-directory))
    ;; The macro's commands run in the selected window's buffer: keep the caller's project.
    (global-set-key (kbd "C-c z") (lambda ()
                                    (interactive)
                                    (let ((default-directory directory))
                                      (setq value (funcall command)))))
    (define-key minibuffer-local-map (kbd "C-c y") #'ragls-test--record)
    (unwind-protect
        (execute-kbd-macro (apply #'vconcat (kbd "C-c z") keys))
      (global-unset-key (kbd "C-c z"))
      (define-key minibuffer-local-map (kbd "C-c y") nil))
    (list value (reverse ragls-test--snapshots))))

(defun ragls-test--require-package (feature)
  "Load FEATURE, a Debian elpa package the tests need, or fail naming it."
  (unless (require feature nil t)
    (ert-fail (format "%s is missing: apt-get install elpa-%s (tests/editors/test_emacs.py does)" feature feature))))

;;;; Tests

(ert-deftest ragls-test-status ()
  (ragls-test--ensure)
  (let* ((answer (ragls-status))
         (folder (aref (plist-get answer :folders) 0)))
    (should (equal (plist-get folder :state) "idle"))
    (should (>= (plist-get folder :files) 3))
    (should (equal (file-name-as-directory (plist-get folder :indexedPath))
                   (file-name-as-directory (file-truename ragls-test--root))))
    (with-current-buffer "*ragls status*"
      (should (string-match-p "state +idle" (buffer-string)))
      (should (string-match-p "chunks" (buffer-string))))))

(ert-deftest ragls-test-status-describes-the-shared-index ()
  (let ((shared (list :name "monorepo" :source "postgresql://reader@db/ragls" :commit "1f3c5e7a9b2d4f6e8a0c"
                      :generation 42 :files 86670 :localFiles 9 :error nil)))
    (should (equal (ragls--shared-description shared)
                   (concat "monorepo (postgresql://reader@db/ragls) at commit 1f3c5e7a9b2d, generation 42: "
                           "86670 files from it, 9 indexed here")))
    (should (equal (ragls--shared-description
                    (plist-put (plist-put (copy-sequence shared) :commit nil) :error "cannot connect"))
                   "monorepo (postgresql://reader@db/ragls): not used (cannot connect); every file is indexed here"))
    (should (string-match-p "^  shared      monorepo "
                            (ragls--folder-description (list :folder "file:///w" :sharedIndex shared))))))

(ert-deftest ragls-test-search-jumps-to-chunk ()
  (ragls-test--ensure)
  (let (offered)
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt table &rest _)
                 (setq offered (all-completions "" table))
                 (cl-find-if (lambda (c) (string-match-p "validate_token" c)) offered))))
      (let ((result (ragls-search "validate bearer token")))
        (should (equal (plist-get (plist-get result :metadata) :file) "src/auth.py"))
        (should (string-match-p "src/auth\\.py:[0-9]+-[0-9]+" (car offered)))
        (should (equal (file-truename buffer-file-name)
                       (file-truename (expand-file-name "src/auth.py" ragls-test--root))))
        (should (looking-at-p "def validate_token"))
        ;; ragls runs beside the buffer's language server: it does not manage the buffer.
        (should-not (eglot-current-server))))))

(ert-deftest ragls-test-context-into-buffer-and-kill-ring ()
  (ragls-test--ensure)
  (let ((prompt (ragls-context "How does AuthMiddleware check a request?")))
    (should (string-match-p "<tnsai-memory>" prompt))
    (should (string-match-p "src/auth.py" prompt))
    (should (string-match-p "How does AuthMiddleware check a request\\?" prompt))
    (should (equal (current-kill 0) prompt))
    (with-current-buffer "*ragls context*"
      (should (equal (buffer-string) prompt))))
  (let ((ragls-context-format "plain"))
    (should (string-match-p "\\[Relevant code context\\]" (ragls-context "connection pool")))))

(ert-deftest ragls-test-reindex ()
  (ragls-test--ensure)
  (let* ((before (plist-get (aref (plist-get (ragls-request "rag/status") :folders) 0) :generation))
         (answer (ragls-reindex t))
         (folder (aref (plist-get answer :folders) 0)))
    (should (> (plist-get folder :generation) before))
    (should (equal (plist-get folder :state) "idle"))))

(ert-deftest ragls-test-bad-input-shows-server-message ()
  (ragls-test--ensure)
  (should (string-match-p "query: must be a non-empty string"
                          (ragls-test--user-error-message (lambda () (ragls-search "")))))
  (should (string-match-p "query: must be a non-empty string"
                          (ragls-test--user-error-message (lambda () (ragls-context "   ")))))
  (let ((ragls-search-top-k 0))
    (should (string-match-p "topK: must be an integer 1\\.\\.100, got 0"
                            (ragls-test--user-error-message (lambda () (ragls-search "token"))))))
  (let ((ragls-folder "file:///nonexistent/ragls-folder"))
    (should (string-match-p "unknown workspace folder"
                            (ragls-test--user-error-message #'ragls-status)))))

(ert-deftest ragls-test-execute-command ()
  "The palette route of editors/README.md: workspace/executeCommand with the params object."
  (ragls-test--ensure)
  (let* ((server (ragls-server))
         (found (eglot-execute-command server "ragls.search" (vector '(:query "connection pool" :topK 3))))
         (status (eglot-execute-command server "ragls.status" (vector '()))))
    (should (equal (plist-get (plist-get (aref (plist-get found :results) 0) :metadata) :file) "src/pool.py"))
    (should (>= (plist-get (aref (plist-get status :folders) 0) :generation) 1))
    (let ((err (should-error (eglot-execute-command server "ragls.contextPrompt" (vector '(:query "")))
                             :type 'jsonrpc-error)))
      (should (string-match-p "query: must be a non-empty string"
                              (alist-get 'jsonrpc-error-message (cdr err)))))))

(ert-deftest ragls-test-saved-file-is-searchable-and-lock-files-are-not ()
  "Eglot's file watching keeps the index fresh; the `.#' lock file of an edit never enters it."
  (ragls-test--ensure)
  (let ((path (expand-file-name "src/billing.py" ragls-test--root))
        (create-lockfiles t))
    (with-current-buffer (find-file-noselect path)
      (insert "def compute_invoice_total(lines):\n    return sum(line.amount for line in lines)\n")
      (ragls-test--wait "the lock file" (lambda () (file-symlink-p (expand-file-name "src/.#billing.py" ragls-test--root))))
      ;; Give the server the lock file's create event before the save.
      (let ((until (+ (float-time) 1.0)))
        (while (< (float-time) until) (ignore-errors (read-event nil nil 0.1))))
      (save-buffer)
      (kill-buffer))
    (ragls-test--wait "the saved file in the results"
                      (lambda () (member "src/billing.py" (ragls-test--result-files "compute_invoice_total"))))
    ;; The lock file (a dangling symlink, reported by inotify under its target's
    ;; name on create and as src/.#billing.py on delete) is not indexed.
    (should (= (plist-get (aref (plist-get (ragls-request "rag/status") :folders) 0) :files)
               (1+ (length ragls-test--files))))
    (dolist (file (ragls-test--result-files "billing invoice root"))
      (should (file-exists-p (expand-file-name file ragls-test--root))))
    (delete-file path)
    (ragls-test--wait "the deleted file to leave the results"
                      (lambda () (not (member "src/billing.py" (ragls-test--result-files "compute_invoice_total")))))))

(ert-deftest ragls-test-limits-reach-the-server ()
  "`ragls-limits' goes out as initializationOptions; a breach fails the run, naming the setting and the count."
  (ragls-test--ensure)
  (let* ((root (file-name-as-directory (make-temp-file "ragls-emacs-limits-" t)))
         (default-directory root)
         (ragls-limits '(:preset "strict" :maxFiles 1)))
    (unwind-protect
        (progn
          (dolist (name '("a.py" "b.py"))
            (with-temp-file (expand-file-name name root) (insert "x = 1\n")))
          (let* ((folder (ragls-test--wait
                          "the failed run"
                          (lambda ()
                            (let ((folders (plist-get (ragls-request "rag/status") :folders)))
                              (and (> (length folders) 0)
                                   (equal (plist-get (aref folders 0) :state) "failed")
                                   (aref folders 0))))))
                 (text (plist-get folder :error)))
            (should (string-match-p "maxFiles limit of 1 exceeded (2 files found)" text))
            (should (string-match-p "ragls\\.limits\\.maxFiles" text))))
      (ignore-errors (eglot-shutdown (ragls--find-server (ragls--project))))
      (ignore-errors (delete-directory root t)))))

;;;; Issue 18: the root without .git, the first index, picking, symbols, counts

(ert-deftest ragls-test-root-from-nearest-project-marker ()
  "Without version control, the nearest directory holding a project marker is the root.
Starting the server says which root it indexes."
  (ragls-test--ensure)
  (let* ((root (ragls-test--workspace '(("pyproject.toml" . "[project]\nname = \"app\"\n")
                                        ("top.py" . "def top_level():\n    return 1\n")
                                        ("src/pkg/inner.py" . "def inner_helper():\n    return 2\n")
                                        ("src/pkg/other.py" . "def other_helper():\n    return 3\n")
                                        ("lib/shared.py" . "def shared_helper():\n    return 4\n")
                                        ("docs/notes.md" . "# Notes\n\nSome notes.\n")
                                        ("tools/Makefile" . "all:\n\ttrue\n")
                                        ("tools/sub/run.sh" . "echo run\n"))))
         (default-directory (expand-file-name "src/pkg/" root)))
    (unwind-protect
        (progn
          (should (equal (ragls--project) (cons 'ragls-marker root)))
          (should (equal (project-root (ragls--project)) root))
          ;; The nearest marker wins: tools/ has its own Makefile.
          (should (equal (ragls-project-marker-root (expand-file-name "tools/sub/" root))
                         (expand-file-name "tools/" root)))
          (let ((ragls-project-markers '("go.mod")))
            (should-not (ragls-project-marker-root default-directory)))
          (let* ((messages (cdr (ragls-test--messages #'ragls-server)))
                 (folder (progn (ragls-wait-for-first-index)
                                (aref (plist-get (ragls-request "rag/status") :folders) 0))))
            (should (member (format "ragls: indexing %s (the nearest pyproject.toml)" root) messages))
            (should (equal (file-name-as-directory (plist-get folder :indexedPath))
                           (file-name-as-directory (file-truename root))))
            ;; Every file of the project, not only those of the buffer's directory.
            (should (>= (plist-get folder :files) 5))
            (should (equal (ragls-test--picked-file (lambda () (ragls-search "shared_helper")))
                           "lib/shared.py"))
            (should (equal (ragls-test--picked-file (lambda () (ragls-search "top_level"))) "top.py"))))
      (ragls-test--stop-server-of default-directory)
      (ignore-errors (delete-directory root t)))))

(ert-deftest ragls-test-markers-never-make-home-a-root-and-vc-wins ()
  "A marker in the home directory makes no project; a version-control root is preferred to a marker."
  (let* ((home (ragls-test--workspace '(("Makefile" . "all:\n")
                                        ("notes/todo.txt" . "todo\n")
                                        ("app/pyproject.toml" . "")
                                        ("app/repo/.git/HEAD" . "ref: refs/heads/main\n")
                                        ("app/repo/src/main.py" . "x = 1\n"))))
         (process-environment (cons (concat "HOME=" (directory-file-name home)) process-environment)))
    (unwind-protect
        (progn
          (should-not (ragls-project-marker-root (expand-file-name "notes/" home)))
          (should (equal (ragls-project-marker-root (expand-file-name "app/" home))
                         (expand-file-name "app/" home)))
          (let ((project (project-current nil (expand-file-name "app/repo/src/" home))))
            (should (eq (car project) 'vc))
            (should (equal (file-name-as-directory (expand-file-name (project-root project)))
                           (expand-file-name "app/repo/" home)))))
      (ignore-errors (delete-directory home t)))))

(defun ragls-test--big-workspace ()
  "A new folder of 2,000 Python files (pkgN/modM.py, 20 functions each) that takes seconds to index."
  (ragls-test--workspace
   (cl-loop for module below 2000
            collect (cons (format "pkg%d/mod%d.py" (% module 20) module)
                          (mapconcat (lambda (n)
                                       (format "def function_%d_%d(value):\n    return value * %d\n\n\n" module n n))
                                     (number-sequence 0 19) "")))))

(defun ragls-test--search-first (query)
  "Search for QUERY, taking the first candidate; return (RESULT PROMPT MESSAGES)."
  (pcase-let ((`((,result ,prompt . ,_) . ,messages)
               (ragls-test--messages (lambda () (ragls-test--picking (lambda () (ragls-search query)))))))
    (list result prompt messages)))

(defun ragls-test--some-message (regexp messages)
  "Non-nil when one of MESSAGES matches REGEXP."
  (cl-some (lambda (text) (string-match-p regexp text)) messages))

(ert-deftest ragls-test-first-search-waits-for-the-first-index ()
  "A search right after the server starts waits for the first index, showing its progress.
Then it answers from the complete index."
  (ragls-test--ensure)
  (let* ((root (ragls-test--big-workspace))
         (default-directory root))
    (unwind-protect
        (pcase-let ((`(,result ,prompt ,messages) (ragls-test--search-first "function_1234_7")))
          (should (equal (plist-get (plist-get result :metadata) :file) "pkg14/mod1234.py"))
          (should-not (string-match-p "still building" prompt))
          (should (ragls-test--some-message "\\`ragls: waiting for the first index" messages))
          ;; The server's `$/progress' reports reach the echo area: "12/2000 pkg3/mod12.py (0%)".
          (should (ragls-test--some-message "waiting for the first index: [0-9]+/2000 pkg[0-9]+/mod" messages))
          (should (ragls-test--some-message "first index ready: .* 2000 files" messages)))
      (ragls-test--stop-server-of root)
      (ignore-errors (delete-directory root t)))))

(ert-deftest ragls-test-first-index-wait-is-bounded ()
  "The wait gives up after `ragls-first-index-timeout' seconds and says so.
The answer then says the index is still building."
  (ragls-test--ensure)
  (let* ((root (ragls-test--big-workspace))
         (default-directory root)
         (ragls-first-index-timeout 0.3)
         (started (float-time)))
    (unwind-protect
        (pcase-let ((`(,_ ,prompt ,messages) (ragls-test--search-first "function_7_3")))
          (should (< (- (float-time) started) 5))
          (should (member "ragls: no first index after 0.3 seconds; answering from what is indexed so far"
                          messages))
          ;; Either the prompt over the results so far, or the message that there are none yet.
          (should (ragls-test--some-message "index still building" (cons (or prompt "") messages))))
      (ragls-test--stop-server-of root)
      (ignore-errors (delete-directory root t)))))

(ert-deftest ragls-test-candidates-are-citations-with-annotations ()
  "Candidates are `file:start-end symbol'; the rank and first line are annotations.
Typing any part of a candidate finds it."
  (ragls-test--ensure)
  (pcase-let* ((`(,result ,prompt ,table ,candidates)
                (ragls-test--picking (lambda () (ragls-search "validate bearer token"))))
               (metadata (completion-metadata "" table nil))
               (affixate (completion-metadata-get metadata 'affixation-function))
               (target (cl-find-if (lambda (c) (string-match-p "validate_token" c)) candidates)))
    (should result)
    (should (string-match-p "^ragls ([0-9]+ results?): $" prompt))
    (dolist (candidate candidates)
      (should (string-match-p "\\`[a-z][^ ]*:[0-9]+-[0-9]+\\( .+\\)?\\'" candidate)))
    (should (string-match-p "\\`src/auth\\.py:[0-9]+-[0-9]+ validate_token\\'" target))
    (should (eq (completion-metadata-get metadata 'category) 'ragls-result))
    (pcase-let ((`(,text ,prefix ,suffix) (car (funcall affixate (list (car candidates))))))
      (should (equal text (car candidates)))
      (should (equal (substring-no-properties prefix) " 1. "))
      (should (string-match-p "\\`  \\S-" suffix)))
    (should (string-match-p "def validate_token(token):"
                            (funcall (completion-metadata-get metadata 'annotation-function) target)))
    ;; Typing a symbol or a line number narrows to the candidate (the category completes by substring).
    (should (member target (ragls-test--completions "validate_tok" table metadata)))
    (let ((line (progn (string-match ":\\([0-9]+\\)-" target) (match-string 1 target))))
      (should (member target (ragls-test--completions (concat ":" line "-") table metadata))))))

(ert-deftest ragls-test-vertico-and-marginalia-show-annotations ()
  "In vertico's minibuffer, typing part of a candidate finds it, shown with its rank and first line.
With marginalia on, the line shows its annotator's fields instead."
  (ragls-test--ensure)
  (ragls-test--require-package 'vertico)
  (ragls-test--require-package 'marginalia)
  (let ((ragls-test--snapshot (lambda () (substring-no-properties (overlay-get vertico--candidates-ov 'after-string))))
        (search (lambda () (ragls-search "validate bearer token"))))
    (unwind-protect
        (progn
          (vertico-mode 1)
          (pcase-let ((`(,result (,shown)) (ragls-test--type-into search "validate_tok" (kbd "C-c y RET"))))
            (should (string-match-p (concat "^ *[0-9]+\\. src/auth\\.py:[0-9]+-[0-9]+ validate_token"
                                            " +def validate_token(token):")
                                    shown))
            (should (equal (plist-get (plist-get result :metadata) :symbol) "validate_token"))
            (should (looking-at-p "def validate_token")))
          (marginalia-mode 1)
          (pcase-let ((`(,result (,shown)) (ragls-test--type-into search "validate_tok" (kbd "C-c y RET"))))
            (should (string-match-p (concat "^src/auth\\.py:[0-9]+-[0-9]+ validate_token"
                                            " +function +python +[0-9.]+ +def validate_token(token):")
                                    shown))
            (should (equal (plist-get (plist-get result :metadata) :symbol) "validate_token"))))
      (marginalia-mode -1)
      (vertico-mode -1))))

(ert-deftest ragls-test-consult-search-previews-the-chunk ()
  "`ragls-consult-search' previews the current candidate's chunk in its file while picking.
The choice jumps there."
  (ragls-test--ensure)
  (ragls-test--require-package 'vertico)
  (ragls-test--require-package 'consult)
  (let ((ragls-test--snapshot (lambda ()
                                (with-selected-window (minibuffer-selected-window)
                                  (list (buffer-name)
                                        (buffer-substring-no-properties (line-beginning-position)
                                                                        (line-end-position)))))))
    (unwind-protect
        (progn
          (vertico-mode 1)
          (switch-to-buffer (get-buffer-create "*ragls-test*"))
          (setq default-directory ragls-test--root)
          (pcase-let ((`(,result (,first ,second))
                       (ragls-test--type-into (lambda () (ragls-consult-search "connection pool validate token"))
                                              "validate_tok" (kbd "C-c y")
                                              (kbd "C-a C-k") "pool.py" (kbd "C-c y RET"))))
            (should (string-match-p "auth\\.py" (car first)))
            (should (equal (cadr first) "def validate_token(token):"))
            (should (string-match-p "pool\\.py" (car second)))
            (should (equal (cadr second) "class ConnectionPool:"))
            (should (equal (plist-get (plist-get result :metadata) :file) "src/pool.py"))
            (should (equal (file-truename buffer-file-name)
                           (file-truename (expand-file-name "src/pool.py" ragls-test--root))))
            (should (looking-at-p "class ConnectionPool"))))
      (vertico-mode -1))))

(ert-deftest ragls-test-symbols-beside-another-main-server ()
  "`ragls-symbols' asks ragls for workspace symbols while another server is the buffer's Eglot server."
  (ragls-test--ensure)
  (let* ((python (car ragls-server-command))
         (other-server (expand-file-name "other-lsp-server.py" ragls-test--directory))
         (buffer (find-file-noselect (expand-file-name "src/auth.py" ragls-test--root))))
    (unwind-protect
        (with-current-buffer buffer
          (let ((eglot-sync-connect t))
            (eglot '(python-mode) (ragls--project) 'eglot-lsp-server (list python other-server) "python"))
          (should (equal (plist-get (eglot--server-info (eglot-current-server)) :name) "other-server"))
          ;; The buffer's server answers workspace/symbol with its own symbol; ragls-symbols never shows it.
          (should (equal (plist-get (aref (jsonrpc-request (eglot-current-server) :workspace/symbol '(:query "x")) 0)
                                    :name)
                         "from_the_other_server"))
          (pcase-let ((`(,symbol ,prompt ,_ ,candidates)
                       (ragls-test--picking (lambda () (ragls-symbols "validate_token")))))
            (should (equal (plist-get symbol :name) "validate_token"))
            (should (equal (car candidates) "validate_token src/auth.py:38"))
            (should-not (cl-find-if (lambda (c) (string-match-p "from_the_other_server" c)) candidates))
            (should (string-match-p (format "\\`ragls symbols (%s): \\'"
                                            (if (= (length candidates) 1) "1 symbol" "[0-9]+ symbols"))
                                    prompt))
            (should (looking-at-p "def validate_token")))
          (pcase-let* ((`(,_ ,_ ,table ,candidates) (ragls-test--picking (lambda () (ragls-symbols "check"))))
                       (affixate (completion-metadata-get (completion-metadata "" table nil) 'affixation-function)))
            ;; A method is shown with its class, and its kind before it.
            (should (member "AuthMiddleware.check src/auth.py:7" candidates))
            (should (string-match-p "\\`Method +\\'"
                                    (cadr (assoc "AuthMiddleware.check src/auth.py:7"
                                                 (funcall affixate candidates)))))))
      (with-current-buffer buffer
        (ignore-errors (eglot-shutdown (eglot-current-server))))
      (kill-buffer buffer))))

(ert-deftest ragls-test-counts-are-singular-and-plural ()
  "One result, file or chunk is singular; other counts are plural."
  (ragls-test--ensure)
  (should (equal (ragls--folders-summary '(:folders [(:folder "f" :state "idle" :generation 1 :files 1 :chunks 1)]))
                 "f idle, generation 1, 1 file, 1 chunk"))
  (should (equal (ragls--folders-summary '(:folders [(:folder "f" :state "idle" :generation 2 :files 0 :chunks 3)]))
                 "f idle, generation 2, 0 files, 3 chunks"))
  (let ((ragls-search-top-k 1))
    (should (equal (nth 1 (ragls-test--search-first "connection pool")) "ragls (1 result): ")))
  (let ((ragls-search-top-k 2))
    (should (equal (nth 1 (ragls-test--search-first "validate bearer token")) "ragls (2 results): ")))
  (let ((ragls-context-top-k 1))
    (should (ragls-test--some-message "\\`ragls: context prompt from 1 result copied"
                                      (cdr (ragls-test--messages (lambda () (ragls-context "connection pool"))))))))

;;; ragls-test.el ends here
