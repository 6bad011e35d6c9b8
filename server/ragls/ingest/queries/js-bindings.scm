; Functions bound to names, shared by JavaScript and TypeScript (read before each language's own file).
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (class)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (class)])) @definition.function
(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function
; `res.contentType = res.type = function contentType(type) {...}`: the outer name too.
(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: (assignment_expression right: [(arrow_function) (function_expression)])) @definition.function
(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function
