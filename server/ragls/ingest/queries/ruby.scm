; Symbols of Ruby: modules, classes (`A::B` named B), and methods, `def self.x` included.
(module name: [(constant) @name (scope_resolution name: (_) @name)]) @definition.module
(class name: [(constant) @name (scope_resolution name: (_) @name)]) @definition.class
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function
