; Symbols of Lua: `function f`, `local function f`, `function M.f` / `function M:f` (named as written),
; and functions assigned to a name.
(function_declaration name: [(identifier) (dot_index_expression)] @name) @definition.function
(function_declaration name: (method_index_expression) @name) @definition.method
(assignment_statement
  (variable_list . name: [(identifier) (dot_index_expression)] @name)
  (expression_list . value: (function_definition))) @definition.function
