; tooldeck codemap query: Java.

(import_declaration) @import

(class_declaration
  name: (identifier) @name
  body: (class_body) @body) @definition.class

(record_declaration
  name: (identifier) @name
  body: (class_body) @body) @definition.class

(interface_declaration
  name: (identifier) @name
  body: (interface_body) @body) @definition.interface

(annotation_type_declaration
  name: (identifier) @name
  body: (annotation_type_body) @body) @definition.interface

(enum_declaration
  name: (identifier) @name
  body: (enum_body) @body) @definition.enum

(method_declaration
  name: (identifier) @name
  body: (block) @body) @definition.function

(method_declaration
  name: (identifier) @name
  !body) @definition.function

(constructor_declaration
  name: (identifier) @name
  body: (constructor_body) @body) @definition.function

(field_declaration
  (modifiers "static" "final")
  declarator: (variable_declarator name: (identifier) @name)) @definition.constant

(field_declaration
  declarator: (variable_declarator name: (identifier) @name)) @definition.property

(constant_declaration
  declarator: (variable_declarator name: (identifier) @name)) @definition.constant

(package_declaration
  [(identifier) (scoped_identifier)] @name) @definition.module
