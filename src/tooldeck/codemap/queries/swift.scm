; tooldeck codemap query: Swift.

(import_declaration (identifier) @import)

(class_declaration
  declaration_kind: "class"
  name: (_) @name
  body: (_) @body) @definition.class

(class_declaration
  declaration_kind: "actor"
  name: (_) @name
  body: (_) @body) @definition.class

(class_declaration
  declaration_kind: "struct"
  name: (_) @name
  body: (_) @body) @definition.struct

(class_declaration
  declaration_kind: "enum"
  name: (_) @name
  body: (_) @body) @definition.enum

(class_declaration
  declaration_kind: "extension"
  name: (_) @name
  body: (_) @body) @definition.impl

(protocol_declaration
  name: (_) @name
  body: (protocol_body) @body) @definition.interface

; bare pattern: constraining function_declaration's children makes this query
; take about a second to compile; extraction reads its name and body fields
(function_declaration) @definition.function

(protocol_function_declaration
  name: (simple_identifier) @name) @definition.function

(init_declaration
  "init" @name
  body: (function_body) @body) @definition.function

(protocol_property_declaration
  name: (pattern bound_identifier: (simple_identifier) @name)) @definition.property

(class_body
  (property_declaration
    name: (pattern bound_identifier: (simple_identifier) @name)) @definition.property)

(enum_class_body
  (property_declaration
    name: (pattern bound_identifier: (simple_identifier) @name)) @definition.property)

(source_file
  (property_declaration
    name: (pattern bound_identifier: (simple_identifier) @name)) @definition.variable)

(typealias_declaration
  name: (type_identifier) @name) @definition.type
