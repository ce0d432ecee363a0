; tooldeck codemap query: Bash.

((command
   name: (command_name) @_src
   argument: (_) @import)
 (#any-of? @_src "source" "."))

(function_definition
  name: (word) @name
  body: (_) @body) @definition.function

(program
  (variable_assignment
    name: (variable_name) @name) @definition.variable)

(program
  (declaration_command
    (variable_assignment
      name: (variable_name) @name) @definition.variable))
