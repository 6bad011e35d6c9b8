; Symbols of Python: classes, and functions (nested in a class they become methods).
(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
