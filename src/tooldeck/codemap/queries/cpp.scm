; inherits: c
; tooldeck codemap query: C++ (the C patterns above, plus classes, namespaces, templates).

(class_specifier
  name: (_) @name
  body: (field_declaration_list) @body) @definition.class

(namespace_definition
  name: (_) @name
  body: (declaration_list) @body) @definition.module

(alias_declaration
  name: (type_identifier) @name) @definition.type

(function_definition
  declarator: (function_declarator
    declarator: [(field_identifier) (qualified_identifier) (destructor_name) (operator_name)] @name)
  body: (_) @body) @definition.function

(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name)] @name))
  body: (_) @body) @definition.function

(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [(field_identifier) (qualified_identifier)] @name))
  body: (_) @body) @definition.function

(field_declaration
  declarator: (function_declarator
    declarator: [(field_identifier) (destructor_name) (operator_name)] @name)) @definition.function

(declaration
  declarator: (function_declarator
    declarator: [(destructor_name) (qualified_identifier) (operator_name)] @name)) @definition.function

(translation_unit (using_declaration) @import)
