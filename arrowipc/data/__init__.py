"""The kernel layer: functions over ArrayData, ArrayData in, ArrayData (or Python values) out,
never an Array, Table or other object of the model above.

cast (casts), text (value <-> text, for casts and printing), selection (take, filter and the
vector functions), sorting (sort indices), grouping (group ids and hash aggregations), compute
(comparisons, boolean logic, arithmetic), string_predicates (starts_with, ends_with,
match_substring; abs, negate), concat, to_python / from_python, interop (the C data interface
for ArrayData), cschema (C schema format strings <-> types, and the schema capsules of types,
fields and schemas), pretty (Arrow's printout), sizes (buffer size counting). They import only
arrowipc._core, errors, types, extension and validate, and each other (tests/docs/
test_layering.py holds the rule); the objects in arrowipc/array.py and arrowipc/table.py call
them and wrap what they return.
"""
