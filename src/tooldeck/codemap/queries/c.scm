; tooldeck codemap query: C (also the base of the C++ query).

(preproc_include path: (_) @import)

(function_definition
  declarator: (function_declarator
    declarator: (identifier) @name)
  body: (compound_statement) @body) @definition.function

(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (identifier) @name))
  body: (compound_statement) @body) @definition.function

(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator
      declarator: (function_declarator
        declarator: (identifier) @name)))
  body: (compound_statement) @body) @definition.function

; prototypes; declarations inside function bodies are dropped by extraction
(declaration
  declarator: [(function_declarator declarator: (identifier) @name)
               (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))]) @definition.function

(type_definition
  type: (struct_specifier body: (field_declaration_list) @body)
  declarator: (type_identifier) @name) @definition.struct

(type_definition
  type: (union_specifier body: (field_declaration_list) @body)
  declarator: (type_identifier) @name) @definition.struct

(type_definition
  type: (enum_specifier body: (enumerator_list) @body)
  declarator: (type_identifier) @name) @definition.enum

(type_definition
  declarator: (_) @name) @definition.type

(struct_specifier
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.struct

(union_specifier
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.struct

(enum_specifier
  name: (type_identifier) @name
  body: (enumerator_list) @body) @definition.enum

(field_declaration_list
  (field_declaration
    declarator: [(field_identifier) @name
                 (pointer_declarator declarator: (field_identifier) @name)
                 (array_declarator declarator: (field_identifier) @name)]) @definition.property)

(preproc_def
  name: (identifier) @name) @definition.constant

(preproc_function_def
  name: (identifier) @name) @definition.macro

(declaration
  (type_qualifier) @_const
  declarator: (init_declarator declarator: (identifier) @name)
  (#eq? @_const "const")) @definition.constant

(declaration
  declarator: [(init_declarator declarator: (identifier) @name)
               (identifier) @name
               (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
               (pointer_declarator declarator: (identifier) @name)
               (array_declarator declarator: (identifier) @name)
               (init_declarator declarator: (array_declarator declarator: (identifier) @name))]) @definition.variable
