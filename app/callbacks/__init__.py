"""Each page's callbacks; importing this package registers them all."""
from . import (  # noqa: F401
    attention, descriptive, overview, persuasive, persuasive_rules, shell, study, study_researcher, surrogate, upload,
)
from . import text  # noqa: F401,E402  (Text attention page, issue 5)
from . import text_lopardo  # noqa: F401,E402  (Lopardo et al. 2024 card of the Text page, issue 5)
from . import text_views  # noqa: F401,E402  (the Text page's views: one request per action, issue 14)
from . import stability  # noqa: F401,E402  (rank stability card of the Descriptive page, issue 13)
from . import links  # noqa: F401,E402  (every view's state in its URL, issue 15)
from . import report  # noqa: F401,E402  (the navbar's Export report, issue 15)
from . import performance  # noqa: F401,E402  (the Performance page, issue 25)
from . import dependence  # noqa: F401,E402  (SHAP dependence beside partial dependence and ICE, issue 25)
from . import counterfactuals  # noqa: F401,E402  (the Persuasive page's story test, issue 25)
from . import cohorts  # noqa: F401,E402  (the Cohorts page, issue 25)
from . import whatif  # noqa: F401,E402  (the what-if editor of the row pages, issue 25)
