; tooldeck codemap query: Go.

(import_spec path: (_) @import)

(function_declaration
  name: (identifier) @name
  body: (block) @body) @definition.function

(function_declaration
  name: (identifier) @name
  !body) @definition.function

(method_declaration
  name: (field_identifier) @name
  body: (block) @body) @definition.method

(type_spec
  name: (type_identifier) @name
  type: (struct_type (field_declaration_list) @body)) @definition.struct

(type_spec
  name: (type_identifier) @name
  type: (interface_type)) @definition.interface

(type_spec
  name: (type_identifier) @name) @definition.type

(type_alias
  name: (type_identifier) @name) @definition.type

(field_declaration_list
  (field_declaration
    name: (field_identifier) @name) @definition.property)

(interface_type
  (method_elem
    name: (field_identifier) @name) @definition.function)

(source_file
  (const_declaration
    (const_spec name: (identifier) @name) @definition.constant))

(source_file
  (var_declaration
    (var_spec name: (identifier) @name) @definition.variable))

(package_clause
  (package_identifier) @name) @definition.module
