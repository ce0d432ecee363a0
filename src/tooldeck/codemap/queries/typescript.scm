; inherits: ecma
; tooldeck codemap query: TypeScript and TSX (the shared ECMAScript patterns, plus types).

(interface_declaration
  name: (_) @name
  body: (interface_body) @body) @definition.interface

(property_signature
  name: (_) @name) @definition.property

(method_signature
  name: (_) @name) @definition.function

(abstract_method_signature
  name: (_) @name) @definition.function

(function_signature
  name: (identifier) @name) @definition.function

(public_field_definition
  name: (_) @name) @definition.property

(abstract_class_declaration
  name: (_) @name
  body: (class_body) @body) @definition.class

(type_alias_declaration
  name: (_) @name) @definition.type

(enum_declaration
  name: (_) @name
  body: (enum_body) @body) @definition.enum

(internal_module
  name: (_) @name
  body: (statement_block) @body) @definition.module

(module
  name: (_) @name
  body: (statement_block) @body) @definition.module
