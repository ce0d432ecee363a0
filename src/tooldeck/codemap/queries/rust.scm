; tooldeck codemap query: Rust.

(use_declaration) @import
(extern_crate_declaration) @import

(function_item
  name: (identifier) @name
  body: (block) @body) @definition.function

(function_signature_item
  name: (identifier) @name) @definition.function

(struct_item
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.struct

(struct_item
  name: (type_identifier) @name
  !body) @definition.struct

(struct_item
  name: (type_identifier) @name
  body: (ordered_field_declaration_list)) @definition.struct

(union_item
  name: (type_identifier) @name
  body: (_) @body) @definition.struct

(struct_item
  body: (field_declaration_list
    (field_declaration
      name: (field_identifier) @name) @definition.property))

(union_item
  body: (field_declaration_list
    (field_declaration
      name: (field_identifier) @name) @definition.property))

(enum_item
  name: (type_identifier) @name
  body: (enum_variant_list) @body) @definition.enum

(trait_item
  name: (type_identifier) @name
  body: (declaration_list) @body) @definition.trait

(impl_item
  type: (_) @name
  body: (declaration_list) @body) @definition.impl

(mod_item
  name: (identifier) @name
  body: (declaration_list) @body) @definition.module

(mod_item
  name: (identifier) @name
  !body) @definition.module

(type_item
  name: (type_identifier) @name) @definition.type

(associated_type
  name: (type_identifier) @name) @definition.type

(const_item
  name: (identifier) @name) @definition.constant

(static_item
  name: (identifier) @name) @definition.constant

(macro_definition
  name: (identifier) @name) @definition.macro
