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
; ... and nested in one another (one inside a function is left alone: extract checks)
(if_statement (block [(if_statement) (try_statement) (with_statement)] @scope))
(elif_clause (block [(if_statement) (try_statement) (with_statement)] @scope))
(else_clause (block [(if_statement) (try_statement) (with_statement)] @scope))
(try_statement (block [(if_statement) (try_statement) (with_statement)] @scope))
(except_clause (block [(if_statement) (try_statement) (with_statement)] @scope))
(finally_clause (block [(if_statement) (try_statement) (with_statement)] @scope))
(with_statement (block [(if_statement) (try_statement) (with_statement)] @scope))

(class_definition
  name: (identifier) @name
  body: (block) @body) @definition.class

(function_definition
  name: (identifier) @name
  body: (block) @body) @definition.function

(type_alias_statement
  left: (type (identifier) @name)) @definition.type

; module-level assignments: one pattern (no predicates: they cost a text
; match per candidate); specs.python_refine tells __all__ (export),
; `X: TypeAlias = ...` (type) and UPPER_CASE (constant) from variables
(module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.variable))

; class attributes; an annotated one shows its type, not its value
; (`timeout: float`: python_refine makes the value the @body)
(class_definition
  body: (block
    (expression_statement
      (assignment
        left: (identifier) @name) @definition.property)))
