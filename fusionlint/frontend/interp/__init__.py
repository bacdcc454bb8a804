"""The abstract interpreter: values followed through a translation unit's cursors.

- ``interpreter``  ``Interpreter``, the value-flow core (calls, objects, fields, macros, constants);
- its parts, mixed into ``Interpreter`` or called by it: ``frames`` (activation records), ``choices``
  (conditions it cannot decide), ``nullness`` (pointer tests), ``loops`` and ``loop_runs``,
  ``lambdas``, ``objects`` (smart pointers, bindings, delegating constructors), ``dead_ends``
  (paths that stop), ``sizes`` (``sizeof``), ``arith`` (C++ arithmetic), ``runtime_values`` (what
  is only known at run time, and how to say so), ``instantiation_roots`` (explicit instantiations
  as roots of a run);
- ``alternatives`` runs a root function once per combination of its finite run-time choices.
"""
