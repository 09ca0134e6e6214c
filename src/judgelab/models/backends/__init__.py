"""The judge backends, one module each; each registers its kind at import
(:func:`judgelab.models.registry.register_backend`) and :data:`judgelab.models.registry.BUILTIN_BACKENDS`
names the modules to import. Importing a backend module loads no heavy SDK (llama.cpp, openai):
each imports its SDK when a judge is built.

* :mod:`~judgelab.models.backends.local` — the embedded llama.cpp judge (its model file and CPU
  path in :mod:`~judgelab.models.backends.local_model`);
* :mod:`~judgelab.models.backends.openai_compatible` — any OpenAI-compatible endpoint (transports
  and error reading in :mod:`~judgelab.models.backends.openai_http`);
* :mod:`~judgelab.models.backends.scripted` — a test double answering from a JSON script.
"""
