;;; ragls-consult.el --- Pick ragls search results through consult, with a preview  -*- lexical-binding: t; -*-

;;; Commentary:

;; `ragls-consult-search' is `ragls-search' through `consult--read': moving
;; over the candidates previews each chunk in its file (consult's
;; `consult-preview-key' decides when), and the choice jumps there.  Needs
;; consult (GNU ELPA, or Debian's elpa-consult); ragls.el autoloads it.

;;; Code:

(require 'ragls)
(require 'consult nil t)

(declare-function consult--read "consult")
(declare-function consult--temporary-files "consult")
(declare-function consult--jump-preview "consult")
(declare-function consult--lookup-member "consult")
(declare-function consult--marker-from-line-column "consult")

;;;###autoload
(defun ragls-consult-search (query)
  "Search for QUERY through `consult--read', previewing each result's chunk.
Returns the chosen result, as `ragls-search' does."
  (interactive (list (ragls--read-query "ragls search")))
  (unless (fboundp 'consult--read)
    (user-error "ragls-consult-search needs consult: M-x package-install RET consult, or apt install elpa-consult"))
  (let* ((answer (ragls-search-answer query))
         (results (append (plist-get answer :results) nil)))
    (if (null results)
        (progn (message "ragls: no results for %S%s" query (ragls--incomplete-note answer)) nil)
      (let* ((candidates (ragls--result-candidates results))
             (choice (consult--read candidates
                                    :prompt (ragls--search-prompt answer results)
                                    :category 'ragls-result
                                    :sort nil
                                    :require-match t
                                    :default (car candidates)
                                    :lookup #'consult--lookup-member
                                    :annotate (lambda (candidate) (car (ragls--affixate-results (list candidate))))
                                    :state (ragls-consult--state)))
             (result (and choice (ragls--candidate-item choice candidates))))
        (when result
          (ragls-visit-result result))
        result))))

(defun ragls-consult--state ()
  "Consult's state function: preview a result's chunk in its file.
Files not yet visited are opened temporarily, as `consult-grep' does."
  (let ((open (consult--temporary-files))
        (preview (consult--jump-preview)))
    (lambda (action candidate)
      (unless candidate
        (funcall open))
      (funcall preview action
               (and candidate (not (eq action 'return)) (ragls-consult--marker candidate open))))))

(defun ragls-consult--marker (candidate open)
  "A marker at the chunk of CANDIDATE's result, in the buffer OPEN gives.
nil for an added document, which has no file."
  (when-let* ((result (cdr (ragls--candidate-data candidate)))
              (uri (plist-get result :uri)))
    (consult--marker-from-line-column
     (funcall open (ragls--uri-to-path uri))
     (1+ (plist-get (plist-get (plist-get result :range) :start) :line))
     0)))

(provide 'ragls-consult)
;;; ragls-consult.el ends here
