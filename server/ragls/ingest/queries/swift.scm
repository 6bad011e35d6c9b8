; Symbols of Swift: class_declaration covers classes, actors, structs, enums and extensions
; (told apart by declaration_kind); protocols, functions, initializers and type aliases.
(class_declaration declaration_kind: ["class" "actor"] name: (type_identifier) @name) @definition.class
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @definition.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @definition.enum
(class_declaration declaration_kind: "extension" name: (user_type (type_identifier) @name)) @definition.impl
(protocol_declaration name: (type_identifier) @name) @definition.interface
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.function
(init_declaration "init" @name) @definition.function
(deinit_declaration "deinit" @name) @definition.function
(typealias_declaration name: (type_identifier) @name) @definition.type
