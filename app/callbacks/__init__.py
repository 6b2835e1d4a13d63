"""Each page's callbacks; importing this package registers them all."""
from . import attention, descriptive, overview, persuasive, shell, surrogate  # noqa: F401
