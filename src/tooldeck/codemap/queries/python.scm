; tooldeck codemap query: Python.
; Captures: @definition.<kind> on the definition node, @name on its name,
; @body on the part the signature stops before, @import on import statements.
; When two patterns capture the same node, the earlier pattern wins.

(import_statement) @import
(import_from_statement) @import

; blocks that may define things (`if TYPE_CHECKING:`, `try: ... except ImportError:`):
; searched on their own when deeper than the outline pass (not inside functions)
(module [(if_statement) (try_statement) (with_statement)] @scope)
(class_definition body: (block [(if_statement) (try_statement) (with_statement)] @scope))

(class_definition
  name: (identifier) @name
  body: (block) @body) @definition.class

(function_definition
  name: (identifier) @name
  body: (block) @body) @definition.function

(type_alias_statement
  left: (type (identifier) @name)) @definition.type

(module
  (expression_statement
    (assignment
      left: (identifier) @name
      type: (type) @_t) @definition.type)
  (#match? @_t "TypeAlias$"))

(module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.export)
  (#eq? @name "__all__"))

(module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.variable))

; annotated class attributes show their type, not their value: `prop timeout: float`
(class_definition
  body: (block
    (expression_statement
      (assignment
        left: (identifier) @name
        type: (_)
        right: (_) @body) @definition.property)))

(class_definition
  body: (block
    (expression_statement
      (assignment
        left: (identifier) @name) @definition.property)))
