"""What runs a graph: the session, the plan compiler and its passes (fusion, blocked regions,
code generation; ``plan_passes``: gradient-scale folding and update batching), the in-place update
kernels (``update_ops``, ``sparse_update_ops``, ``compiled``), the worker threads and the
allocator.

Builds on ``framework``, ``ops`` and ``autodiff``, never on the API packages (``train``, ``nn``,
``keras``, ``contrib``): a plan pass rewrites steps by the properties of their ops in the
registry. See ``engine/__init__.py`` for the layers.
"""
