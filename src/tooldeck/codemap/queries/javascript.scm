; inherits: ecma
; tooldeck codemap query: JavaScript (the shared ECMAScript patterns, plus class fields).

(field_definition
  property: (_) @name) @definition.property
