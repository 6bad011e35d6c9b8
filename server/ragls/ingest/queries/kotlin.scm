; Symbols of Kotlin: classes, interfaces, enum classes, objects, functions and type aliases.
; One declaration can match several patterns; the first pattern wins, so `enum` comes before `class`.
((class_declaration (modifiers (class_modifier) @_modifier) name: (identifier) @name) @definition.enum
  (#eq? @_modifier "enum"))
(class_declaration "interface" name: (identifier) @name) @definition.interface
(class_declaration "class" name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.object
(companion_object name: (identifier) @name) @definition.object
(function_declaration name: (identifier) @name) @definition.function
(type_alias type: (identifier) @name) @definition.type
