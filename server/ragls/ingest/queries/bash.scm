; Symbols of Bash: function definitions, `f() { }` and `function f { }` alike.
(function_definition name: (word) @name) @definition.function
