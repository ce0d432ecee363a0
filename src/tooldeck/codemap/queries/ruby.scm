; tooldeck codemap query: Ruby.

((call
   method: (identifier) @_req
   arguments: (argument_list . (string (string_content) @import)))
 (#any-of? @_req "require" "require_relative" "load"))

(class
  name: (_) @name
  body: (body_statement) @body) @definition.class

(class
  name: (_) @name
  !body) @definition.class

(module
  name: (_) @name
  body: (body_statement) @body) @definition.module

(module
  name: (_) @name
  !body) @definition.module

(method
  name: (_) @name
  body: (_) @body) @definition.function

(method
  name: (_) @name
  !body) @definition.function

(singleton_method
  name: (_) @name
  body: (_) @body) @definition.function

(singleton_method
  name: (_) @name
  !body) @definition.function

((call
   method: (identifier) @_attr
   arguments: (argument_list (simple_symbol) @name)) @definition.property
 (#any-of? @_attr "attr_reader" "attr_writer" "attr_accessor"))

(assignment
  left: (constant) @name) @definition.constant
