;;; ragls-project.el --- Project roots found by marker files, for folders outside version control  -*- lexical-binding: t; -*-

;;; Commentary:

;; project.el finds a project through version control only, so in a folder
;; without `.git' Eglot (and ragls with it) falls back to the buffer's own
;; directory and indexes a fraction of the project.  This file adds a finder to
;; `project-find-functions', after the version-control one: the nearest
;; directory above the buffer holding one of `ragls-project-markers' becomes
;; the project.  Part of ragls.el; `(require 'ragls)' loads it.

;;; Code:

(require 'cl-lib)
(require 'project)

(defcustom ragls-project-markers
  '("pyproject.toml" "package.json" "go.mod" "Cargo.toml" "setup.py" "Makefile")
  "Files that mark a project's root where no version control is found.
The nearest directory above a buffer that holds one of them is its
project for project.el, Eglot and ragls (never your home directory or
\"/\").  A version-control root is preferred wherever there is one; nil
turns the fallback off."
  :type '(repeat string)
  :group 'ragls)

;;;###autoload
(defun ragls-project-find-by-marker (directory)
  "The project of DIRECTORY found by `ragls-project-markers', or nil.
Meant for `project-find-functions'; the project is (ragls-marker . ROOT)."
  (when-let ((root (ragls-project-marker-root directory)))
    (cons 'ragls-marker root)))

(defun ragls-project-marker-root (directory)
  "The nearest directory at or above DIRECTORY holding a project marker, or nil."
  (when-let ((found (and ragls-project-markers
                         (locate-dominating-file directory #'ragls-project--marker-in))))
    (let ((root (file-name-as-directory (expand-file-name found))))
      (unless (member root (list (file-name-as-directory (expand-file-name "~"))
                                 (file-name-as-directory (expand-file-name "/" root))))
        root))))

(defun ragls-project-marker-file (directory)
  "The first of `ragls-project-markers' that DIRECTORY holds, or nil."
  (cl-find-if (lambda (marker) (file-exists-p (expand-file-name marker directory)))
              ragls-project-markers))

(defun ragls-project-describe (project)
  "How PROJECT's root was found, in a few words for a message."
  (pcase project
    (`(ragls-marker . ,root)
     (format "the nearest %s" (or (ragls-project-marker-file root) "project marker")))
    (`(transient . ,_)
     "no version control or project marker found: this directory only")
    (_ "the version-control root")))

(cl-defmethod project-root ((project (head ragls-marker)))
  "The directory that holds PROJECT's marker file."
  (cdr project))

(defun ragls-project--marker-in (directory)
  "Non-nil when DIRECTORY holds one of `ragls-project-markers'."
  (and (file-directory-p directory) (ragls-project-marker-file directory)))

;; After `project-try-vc' (depth 90), so version control keeps its roots.
(add-hook 'project-find-functions #'ragls-project-find-by-marker 90)

(provide 'ragls-project)
;;; ragls-project.el ends here
