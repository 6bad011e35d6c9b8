; Symbols of C++: C's, plus classes, namespaces, aliases, and out-of-class definitions like
; `Foo::bar` or `ns::Foo::bar`, named by their last part.
(function_definition
  declarator: (function_declarator
    declarator: [
      (identifier) @name
      (field_identifier) @name
      (destructor_name) @name
      (operator_name) @name
      (qualified_identifier name: [(identifier) (destructor_name) (operator_name)] @name)
      (qualified_identifier
        name: (qualified_identifier name: [(identifier) (destructor_name) (operator_name)] @name))
      (qualified_identifier
        name: (qualified_identifier
          name: (qualified_identifier name: [(identifier) (destructor_name) (operator_name)] @name)))
    ])) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [
        (identifier) @name
        (field_identifier) @name
        (operator_name) @name
        (qualified_identifier name: [(identifier) (operator_name)] @name)
        (qualified_identifier name: (qualified_identifier name: [(identifier) (operator_name)] @name))
      ]))) @definition.function
(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [
        (identifier) @name
        (field_identifier) @name
        (operator_name) @name
        (qualified_identifier name: [(identifier) (operator_name)] @name)
        (qualified_identifier name: (qualified_identifier name: [(identifier) (operator_name)] @name))
      ]))) @definition.function
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace
(type_definition declarator: (type_identifier) @name) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
