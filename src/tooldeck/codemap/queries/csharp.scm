; tooldeck codemap query: C#.

(using_directive) @import

(namespace_declaration
  name: (_) @name
  body: (declaration_list) @body) @definition.module

(file_scoped_namespace_declaration
  name: (_) @name) @definition.module

(class_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.class

(record_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.class

(record_declaration
  name: (identifier) @name
  !body) @definition.class

(struct_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.struct

(interface_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.interface

(enum_declaration
  name: (identifier) @name
  body: (enum_member_declaration_list) @body) @definition.enum

(delegate_declaration
  name: (identifier) @name) @definition.type

(method_declaration
  name: (identifier) @name
  body: (_) @body) @definition.function

(method_declaration
  name: (identifier) @name
  !body) @definition.function

(constructor_declaration
  name: (identifier) @name
  body: (_) @body) @definition.function

(destructor_declaration
  name: (identifier) @name
  body: (_) @body) @definition.function

(operator_declaration
  body: (_) @body) @definition.function

(property_declaration
  name: (identifier) @name) @definition.property

(field_declaration
  (modifier) @_m
  (variable_declaration (variable_declarator name: (identifier) @name))
  (#eq? @_m "const")) @definition.constant

(field_declaration
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.property

(event_field_declaration
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.property
