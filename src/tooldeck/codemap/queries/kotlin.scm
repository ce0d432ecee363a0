; tooldeck codemap query: Kotlin.

(import) @import

(package_header (qualified_identifier) @name) @definition.module

(class_declaration
  "interface"
  name: (identifier) @name
  (class_body) @body) @definition.interface

(class_declaration
  "interface"
  name: (identifier) @name) @definition.interface

(class_declaration
  (modifiers (class_modifier) @_enum)
  name: (identifier) @name
  (enum_class_body) @body
  (#eq? @_enum "enum")) @definition.enum

(class_declaration
  name: (identifier) @name
  (class_body) @body) @definition.class

(class_declaration
  name: (identifier) @name
  (enum_class_body) @body) @definition.class

(class_declaration
  name: (identifier) @name) @definition.class

(object_declaration
  name: (identifier) @name
  (class_body) @body) @definition.class

(object_declaration
  name: (identifier) @name) @definition.class

(companion_object
  "companion" @name
  (class_body) @body) @definition.class

(function_declaration
  name: (identifier) @name
  (function_body) @body) @definition.function

(function_declaration
  name: (identifier) @name) @definition.function

(source_file
  (property_declaration
    (modifiers (property_modifier) @_const)
    (variable_declaration (identifier) @name)
    (#eq? @_const "const")) @definition.constant)

(source_file
  (property_declaration
    (variable_declaration (identifier) @name)) @definition.variable)

(class_body
  (property_declaration
    (variable_declaration (identifier) @name)) @definition.property)

(type_alias
  type: (identifier) @name) @definition.type
