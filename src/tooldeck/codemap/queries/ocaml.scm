; tooldeck codemap query: OCaml implementations (.ml).

(open_module module: (_) @import)

(value_definition
  (let_binding
    pattern: (value_name) @name
    (parameter)
    body: (_) @body) @definition.function)

(value_definition
  (let_binding
    pattern: (value_name) @name
    body: (fun_expression) @body) @definition.function)

(value_definition
  (let_binding
    pattern: (value_name) @name
    body: (function_expression) @body) @definition.function)

(value_definition
  (let_binding
    pattern: (value_name) @name) @definition.constant)

(type_definition
  (type_binding
    name: (type_constructor) @name) @definition.type)

(exception_definition
  (constructor_declaration (constructor_name) @name)) @definition.type

(module_definition
  (module_binding
    (module_name) @name
    body: (_) @body) @definition.module)

(module_definition
  (module_binding
    (module_name) @name) @definition.module)

(module_type_definition
  (module_type_name) @name
  body: (_) @body) @definition.interface

(module_type_definition
  (module_type_name) @name) @definition.interface

(value_specification
  (value_name) @name) @definition.function

(class_definition
  (class_binding
    (class_name) @name
    body: (_) @body) @definition.class)

(method_definition
  (method_name) @name
  body: (_) @body) @definition.function

(instance_variable_definition
  (instance_variable_name) @name) @definition.property
