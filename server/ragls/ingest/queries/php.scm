; Symbols of PHP: braced namespaces, classes, interfaces, traits, enums, functions and methods.
(namespace_definition name: (namespace_name) @name body: (compound_statement)) @definition.namespace
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method
