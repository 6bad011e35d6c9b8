; Symbols of Go: functions, methods (contained by their receiver's type: `SecureJSON.Render`), and named types.
; A lone `type X ...` is captured as the whole declaration so the doc comment above it belongs to it;
; in a grouped `type ( ... )` each spec is its own symbol.
(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [(type_identifier) @receiver
             (pointer_type (type_identifier) @receiver)
             (generic_type type: (type_identifier) @receiver)
             (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name) @definition.method
(method_declaration name: (field_identifier) @name) @definition.method
((type_declaration (type_spec name: (type_identifier) @name type: (struct_type))) @definition.struct
  (#not-match? @definition.struct "^type\\s*\\("))
((type_declaration (type_spec name: (type_identifier) @name type: (interface_type))) @definition.interface
  (#not-match? @definition.interface "^type\\s*\\("))
((type_declaration
  (type_spec
    name: (type_identifier) @name
    type: [(type_identifier) (qualified_type) (generic_type) (pointer_type) (function_type) (map_type)
           (slice_type) (array_type) (channel_type)])) @definition.type
  (#not-match? @definition.type "^type\\s*\\("))
((type_declaration (type_alias name: (type_identifier) @name)) @definition.type
  (#not-match? @definition.type "^type\\s*\\("))
(type_declaration "(" (type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct)
(type_declaration "(" (type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface)
(type_declaration "("
  (type_spec
    name: (type_identifier) @name
    type: [(type_identifier) (qualified_type) (generic_type) (pointer_type) (function_type) (map_type)
           (slice_type) (array_type) (channel_type)]) @definition.type)
(type_declaration "(" (type_alias name: (type_identifier) @name) @definition.type)
