; tooldeck codemap query: patterns shared by JavaScript, TypeScript and TSX.
; Captures: @definition.<kind>, @name, @body, @import (see python.scm).

(import_statement source: (string) @import)
(call_expression
  function: (identifier) @_req
  arguments: (arguments . (string) @import)
  (#eq? @_req "require"))

(class_declaration
  name: (_) @name
  body: (class_body) @body) @definition.class

(function_declaration
  name: (identifier) @name
  body: (statement_block) @body) @definition.function

(generator_function_declaration
  name: (identifier) @name
  body: (statement_block) @body) @definition.function

(method_definition
  name: (_) @name
  body: (statement_block) @body) @definition.function

; const f = (...) => ..., const f = function (...) {...}
(program
  [(lexical_declaration
     (variable_declarator
       name: (identifier) @name
       value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)])) @definition.function
   (export_statement
     declaration: (lexical_declaration
       (variable_declarator
         name: (identifier) @name
         value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)])) @definition.function)])

(program
  [(lexical_declaration
     (variable_declarator name: (identifier) @name)) @definition.constant
   (export_statement
     declaration: (lexical_declaration
       (variable_declarator name: (identifier) @name)) @definition.constant)]
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(program
  [(lexical_declaration
     (variable_declarator name: (identifier) @name)) @definition.variable
   (variable_declaration
     (variable_declarator name: (identifier) @name)) @definition.variable
   (export_statement
     declaration: [(lexical_declaration (variable_declarator name: (identifier) @name))
                   (variable_declaration (variable_declarator name: (identifier) @name))] @definition.variable)])

(program
  (export_statement
    (export_clause (export_specifier name: (_) @name))) @definition.export)

(program
  (export_statement
    value: (identifier) @name) @definition.export)

(program
  (expression_statement
    (assignment_expression
      left: (member_expression
        object: (identifier) @_m
        property: (property_identifier) @name) @_lhs) @definition.export)
  (#eq? @_m "module")
  (#eq? @name "exports"))
