; tooldeck codemap query: OCaml interfaces (.mli).

(open_module_signature module: (_) @import)

(value_specification
  (value_name) @name) @definition.function

(type_definition
  (type_binding
    name: (type_constructor) @name) @definition.type)

(exception_definition
  (constructor_declaration (constructor_name) @name)) @definition.type

(module_definition
  (module_binding
    (module_name) @name
    module_type: (signature) @body) @definition.module)

(module_definition
  (module_binding
    (module_name) @name) @definition.module)

(module_type_definition
  (module_type_name) @name
  body: (_) @body) @definition.interface

(module_type_definition
  (module_type_name) @name) @definition.interface
