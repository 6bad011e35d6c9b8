;;; ragls-test.el --- Batch tests of ragls.el against the real server  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run from the repository root:
;;   RAGLS_SERVER_COMMAND="python -m ragls serve" \
;;     emacs --batch -Q -l editors/emacs/test/ragls-test.el -f ert-run-tests-batch-and-exit
;; Each test shares one fixture workspace and one server, created on first use
;; and removed when Emacs exits.  File events reach Eglot's watchers only
;; through `read-event' in batch Emacs, so waits loop on it.

;;; Code:

(setq package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
(package-initialize)

(require 'ert)
(require 'cl-lib)
(add-to-list 'load-path (expand-file-name ".." (file-name-directory (or load-file-name buffer-file-name))))
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

;;; ragls-test.el ends here
