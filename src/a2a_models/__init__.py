"""a2a-models: the A2A protocol's data layer (models, codec, JSON-RPC, errors)."""
from .models import *  # noqa: F403
from .models import __all__ as _models_all
from . import codec, errors
from .errors import *  # noqa: F403
from .errors import __all__ as _errors_all

__version__ = "0.1.0"
__all__ = [*_models_all, *_errors_all, "codec", "errors", "__version__"]
