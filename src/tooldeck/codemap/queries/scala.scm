; tooldeck codemap query: Scala.

(import_declaration) @import

(package_clause name: (_) @name) @definition.module

(class_definition
  name: (identifier) @name
  body: (template_body) @body) @definition.class

(class_definition
  name: (identifier) @name) @definition.class

(object_definition
  name: (identifier) @name
  body: (template_body) @body) @definition.class

(object_definition
  name: (identifier) @name) @definition.class

(trait_definition
  name: (identifier) @name
  body: (template_body) @body) @definition.trait

(trait_definition
  name: (identifier) @name) @definition.trait

(enum_definition
  name: (identifier) @name
  body: (enum_body) @body) @definition.enum

(function_definition
  name: (identifier) @name
  body: (_) @body) @definition.function

(function_declaration
  name: (identifier) @name) @definition.function

(type_definition
  name: (type_identifier) @name) @definition.type

(template_body
  (val_definition pattern: (identifier) @name) @definition.property)

(template_body
  (var_definition pattern: (identifier) @name) @definition.property)

(template_body
  (val_declaration name: (identifier) @name) @definition.property)

(compilation_unit
  (val_definition pattern: (identifier) @name) @definition.constant)

(compilation_unit
  (var_definition pattern: (identifier) @name) @definition.variable)
