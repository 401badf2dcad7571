"""Optional integrations of a2a-models with frameworks and services.

Each subpackage needs its extra and is imported only on request; importing
:mod:`a2a_models` never imports any of them:

* :mod:`a2a_models.adapters.http` - ASGI server (Starlette, uvicorn) and HTTP
  client (httpx) for the JSON-RPC and HTTP+JSON bindings (``pip install
  a2a-models[http]``).
"""
