; tooldeck codemap query: PHP.

(namespace_use_declaration) @import
((function_call_expression
   function: (name) @_inc
   arguments: (arguments . (argument (string (string_content) @import))))
 (#any-of? @_inc "require" "require_once" "include" "include_once"))
(require_expression (string (string_content) @import))
(require_once_expression (string (string_content) @import))
(include_expression (string (string_content) @import))
(include_once_expression (string (string_content) @import))

(namespace_definition
  name: (namespace_name) @name) @definition.module

(class_declaration
  name: (name) @name
  body: (declaration_list) @body) @definition.class

(interface_declaration
  name: (name) @name
  body: (declaration_list) @body) @definition.interface

(trait_declaration
  name: (name) @name
  body: (declaration_list) @body) @definition.trait

(enum_declaration
  name: (name) @name
  body: (enum_declaration_list) @body) @definition.enum

(function_definition
  name: (name) @name
  body: (compound_statement) @body) @definition.function

(method_declaration
  name: (name) @name
  body: (compound_statement) @body) @definition.function

(method_declaration
  name: (name) @name
  !body) @definition.function

(property_declaration
  (property_element name: (variable_name) @name)) @definition.property

(const_declaration
  (const_element (name) @name)) @definition.constant
