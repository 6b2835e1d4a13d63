"""Each page's callbacks; importing this package registers them all."""
from . import attention, descriptive, overview, persuasive, shell, study, study_researcher, surrogate  # noqa: F401
from . import text  # noqa: F401,E402  (Text attention page, issue 5)
