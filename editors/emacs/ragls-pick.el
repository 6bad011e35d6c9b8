;;; ragls-pick.el --- Picking ragls results and symbols in the minibuffer  -*- lexical-binding: t; -*-

;;; Commentary:

;; Candidates are plain text a user can type: `file:start-end symbol' for
;; search results, `Container.name file:line' for symbols.  The rank, the first
;; line and the kind are annotations, given through the completion table's
;; metadata (`affixation-function' and `annotation-function'), so the
;; *Completions* buffer and vertico show them; marginalia gets annotators for
;; the categories `ragls-result' and `ragls-symbol'.  Part of ragls.el.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

(declare-function ragls-citation "ragls")

(defun ragls--result-candidates (results)
  "Completion candidates for RESULTS: `file:start-end symbol' strings.
Each carries its rank and result as text properties."
  (ragls--candidates results
                     (lambda (result)
                       (let ((symbol (plist-get (plist-get result :metadata) :symbol)))
                         (concat (ragls-citation result) (if symbol (concat " " symbol) ""))))))

(defun ragls--candidates (items describe)
  "Candidates for ITEMS: the text DESCRIBE gives each, made unique.
Each carries the text properties `ragls-rank' and `ragls-item'."
  (let ((seen (make-hash-table :test #'equal)))
    (cl-loop for item in items
             for rank from 1
             collect (let* ((text (funcall describe item))
                            (copies (puthash text (1+ (gethash text seen 0)) seen)))
                       (propertize (if (> copies 1) (format "%s <%d>" text copies) text)
                                   'ragls-rank rank 'ragls-item item)))))

(defun ragls--pick (prompt candidates category affixate)
  "Read one of CANDIDATES with PROMPT in the server's order; return its item.
CATEGORY names the completion category; AFFIXATE is its affixation function."
  (let* ((table (ragls--completion-table candidates category affixate))
         (choice (completing-read prompt table nil t nil nil (car candidates))))
    (ragls--candidate-item choice candidates)))

(defun ragls--completion-table (candidates category affixate)
  "A completion table over CANDIDATES in their order, with CATEGORY and AFFIXATE.
Its metadata gives both an affixation function and an annotation
function, so the *Completions* buffer, vertico and marginalia (through
CATEGORY) all show the rank and the annotation."
  (let ((metadata `(metadata (category . ,category)
                             (display-sort-function . identity)
                             (cycle-sort-function . identity)
                             (affixation-function . ,affixate)
                             (annotation-function
                              . ,(lambda (candidate) (nth 2 (car (funcall affixate (list candidate)))))))))
    (lambda (string predicate action)
      (if (eq action 'metadata)
          metadata
        (complete-with-action action candidates string predicate)))))

(defun ragls--candidate-item (choice candidates)
  "The item of the candidate among CANDIDATES whose text is CHOICE, or nil."
  (when-let ((candidate (car (member choice candidates))))
    (get-text-property 0 'ragls-item candidate)))

(defun ragls--candidate-data (candidate)
  "The rank and item CANDIDATE carries, as (RANK . ITEM)."
  (cons (get-text-property 0 'ragls-rank candidate) (get-text-property 0 'ragls-item candidate)))

(defun ragls--affixate-results (candidates)
  "Affixations of result CANDIDATES: the rank before, the first line after."
  (mapcar (lambda (candidate)
            (pcase-let ((`(,rank . ,result) (ragls--candidate-data candidate)))
              (list candidate
                    (if rank (propertize (format "%2d. " rank) 'face 'shadow) "")
                    (if result
                        (concat "  " (propertize (ragls--first-line result) 'face 'completions-annotations))
                      ""))))
          candidates))

(defun ragls--first-line (result)
  "The first line of RESULT's content, shortened to 70 columns."
  (let ((line (car (split-string (string-trim (or (plist-get result :content) "")) "\n"))))
    (truncate-string-to-width (or line "") 70 nil nil "...")))

(defun ragls-annotate-result (candidate)
  "Marginalia's annotation of a result CANDIDATE.
Its kind, language, score and first line."
  (when-let ((result (cdr (ragls--candidate-data candidate))))
    (let ((metadata (plist-get result :metadata)))
      (concat "  " (propertize (or (plist-get metadata :symbolKind) (plist-get metadata :source) "")
                               'face 'font-lock-type-face)
              "  " (or (plist-get metadata :language) "")
              (format "  %.3f  " (or (plist-get result :score) 0))
              (propertize (ragls--first-line result) 'face 'completions-annotations)))))

(defun ragls-annotate-symbol (candidate)
  "Marginalia's annotation of a ragls symbol CANDIDATE: kind and container."
  (when-let ((symbol (cdr (ragls--candidate-data candidate))))
    (concat "  " (propertize (ragls--symbol-kind-name symbol) 'face 'font-lock-type-face)
            (if (plist-get symbol :containerName) (concat "  in " (plist-get symbol :containerName)) ""))))

;; Any part of a candidate finds it (as for `xref-location'): a file name, a line, a symbol.
;; A user who emptied the defaults (as orderless setups do) keeps their own styles.
(when completion-category-defaults
  (dolist (category '(ragls-result ragls-symbol))
    (add-to-list 'completion-category-defaults `(,category (styles substring basic)))))

(with-eval-after-load 'marginalia
  (defvar marginalia-annotator-registry)
  (add-to-list 'marginalia-annotator-registry '(ragls-result ragls-annotate-result builtin none))
  (add-to-list 'marginalia-annotator-registry '(ragls-symbol ragls-annotate-symbol builtin none)))

(defun ragls--symbol-kind-name (symbol)
  "The LSP kind of SYMBOL in words, such as \"Function\"."
  (let ((kind (plist-get symbol :kind)))
    (or (and (boundp 'eglot--symbol-kind-names) (alist-get kind eglot--symbol-kind-names))
        (format "kind %s" kind))))

(provide 'ragls-pick)
;;; ragls-pick.el ends here
