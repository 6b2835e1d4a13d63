"""Every component ID in the app (STYLE B3 rule 6): constants, never inline strings."""

# shell
ROW_INPUT = "row-input"
ROW_RANDOM = "row-random"
ROW_STATUS = "row-status"
URL = "url"
NAVBAR = "navbar"
ROW_PICKER = "row-picker"
CLASS_SELECT = "class-select"
CLASS_STATUS = "class-status"
CLASS_SWITCHED = "class-switched"
ROW_URL_SYNC = "row-url-sync"
URL_NOTE = "url-note"  # the one-line note of ignored link parameters (app/shell/url_state.py)
URL_CLASS_NOTE = "url-class-note"  # a link made for another class than the server's (app/shell/url_state.py)
URL_CLASS_SWITCH = "url-class-switch"  # its button: switch the class for everyone (users who may)
URL_CLASS_WANTED = "url-class-wanted"  # the link's class, for that button
ROW_POOL = "row-pool"                    # store: the held-out row ids "Random row" picks from, in the browser


def row_status_data(page: str) -> dict:
    """Store of a row page: ``{"row", "text"}``, the navbar status its row callback sends with its panels."""
    return {"type": "row-status-data", "page": page}

# Model & data
SUMMARY = "overview-summary"
DATA_TABLE = "overview-table"
TABLE_COLUMNS = "overview-table-columns"
TABLE_COLUMNS_NOTE = "overview-table-columns-note"
EXPLAIN_LINKS = "overview-explain-links"
OVERVIEW_ROW_SHOWN = "overview-row-shown"      # store: {"row": r}, the row the links and status show
OVERVIEW_ROW_WANTED = "overview-row-wanted"    # store: {"row": r}, a row they must show instead

# Descriptive
GLOBAL_BAR = "descriptive-global-bar"
GLOBAL_BEESWARM = "descriptive-global-beeswarm"
GLOBAL_BEESWARM_SHOW = "descriptive-global-beeswarm-show"
GLOBAL_BEESWARM_BOX = "descriptive-global-beeswarm-box"
GLOBAL_NOTE = "descriptive-global-note"
GLOBAL_WAIT_TICK = "descriptive-global-wait-tick"  # interval asking again until the warm-up has global SHAP
GLOBAL_METHODS = "descriptive-global-methods"  # the table's global methods beside mean |SHAP|
GLOBAL_METHODS_TICK = "descriptive-global-methods-tick"  # asking again until the warm-up has them
SHAP_WATERFALL = "descriptive-shap-waterfall"
LIME_BAR = "descriptive-lime-bar"
LOCAL_AGREEMENT = "descriptive-agreement"
LOCAL_NOTES = "descriptive-notes"
SHAP_PLAYERS = "descriptive-shap-players"
SHAP_PLAYERS_BOX = "descriptive-shap-players-box"
STABILITY_RUN = "descriptive-stability-run"
STABILITY_CANCEL = "descriptive-stability-cancel"
STABILITY_PROGRESS = "descriptive-stability-progress"
STABILITY_CARD = "descriptive-stability-card"

# Surrogate
SURROGATE_SUMMARY = "surrogate-summary"
SURROGATE_RULES = "surrogate-rules"
SURROGATE_FRONTIER = "surrogate-frontier"
SURROGATE_CONFUSION = "surrogate-confusion"
SURROGATE_FOI = "surrogate-features-of-interest"
SURROGATE_MAX_RULES = "surrogate-max-rules"
SURROGATE_MAX_WIDTH = "surrogate-max-width"
SURROGATE_MAX_NBHD = "surrogate-max-neighborhoods"
SURROGATE_LAMBDAS = "surrogate-lambdas"
SURROGATE_FIT = "surrogate-fit"
SURROGATE_CANCEL = "surrogate-cancel"
SURROGATE_PROGRESS = "surrogate-progress"
SURROGATE_PROGRESS_LABEL = "surrogate-progress-label"  # beside the bar: a label inside it was cut off
SURROGATE_PROGRESS_BOX = "surrogate-progress-box"  # bar and label, shown only while a job runs
SURROGATE_ERROR = "surrogate-error"
SURROGATE_KEY = "surrogate-key"
SURROGATE_FRONTIER_KEY = "surrogate-frontier-key"
SURROGATE_WAIT = "surrogate-wait"            # what the page waits for while the warm-up runs
SURROGATE_WAIT_TICK = "surrogate-wait-tick"  # interval polling the warm-up until the default surrogates exist
SURROGATE_POINT = "surrogate-point"  # store: the link's chosen frontier point, "method|budget"

# Persuasive
K_SLIDER = "persuasive-k"
FULL_BAR = "persuasive-full-bar"
TOPK_BAR = "persuasive-topk-bar"
STATEMENT = "persuasive-statement"
COST = "persuasive-cost"
TRADEOFF = "persuasive-tradeoff"

# Attention
ATTN_HEATMAP = "attention-heatmap"
ATTN_IG = "attention-ig"
ATTN_SHAP = "attention-shap"
ATTN_AGREEMENT = "attention-agreement"
ATTN_NOTES = "attention-notes"

# ---- Text (issue 5: text models; owned by app/pages/text.py and app/callbacks/text.py) ----
TEXT_INPUT = "text-input"
TEXT_SUBMIT = "text-submit"
TEXT_CURRENT = "text-current"            # store: {"text": ..., "origin": ...}
TEXT_DATASET = "text-dataset"            # store: dataset description (hash, file name, columns), never the file
TEXT_UPLOAD = "text-upload"
TEXT_UPLOAD_STATUS = "text-upload-status"
TEXT_BUILTIN = "text-builtin"
TEXT_COLUMN = "text-column"
TEXT_LABEL_COLUMN = "text-label-column"
TEXT_ROW = "text-row"
TEXT_DATASET_NOTE = "text-dataset-note"
TEXT_NOTES = "text-notes"
TEXT_PREDICTION = "text-prediction"
TEXT_LAYER = "text-layer"
TEXT_HEADS = "text-heads"
TEXT_HEAD_VIEW = "text-head-view"
TEXT_MODEL_VIEW = "text-model-view"
TEXT_AGGREGATES = "text-aggregates"
TEXT_METHOD = "text-method"
TEXT_METRIC = "text-metric"
TEXT_QUERY = "text-query"
TEXT_AGREEMENT = "text-agreement"
TEXT_AGREEMENT_NOTE = "text-agreement-note"
TEXT_SLOW_RUN = "text-slow-run"
TEXT_SLOW_CANCEL = "text-slow-cancel"
TEXT_SLOW_PROGRESS = "text-slow-progress"
TEXT_SLOW_STATUS = "text-slow-status"
TEXT_SLOW_DONE = "text-slow-done"        # store: {"text": sha, "methods": [...]} after the job
TEXT_CONLLU_UPLOAD = "text-conllu-upload"
TEXT_CONLLU_STATUS = "text-conllu-status"
TEXT_CONLLU = "text-conllu"              # store: {"id", "name", "n_sentences"} of a CoNLL-U upload
TEXT_HEADS_SOURCE = "text-heads-source"
TEXT_HEADS_RUN = "text-heads-run"
TEXT_HEADS_CANCEL = "text-heads-cancel"
TEXT_HEADS_PROGRESS = "text-heads-progress"
TEXT_HEADS_SUMMARY = "text-heads-summary"
TEXT_ROLES = "text-roles"
TEXT_IMPORTANCE = "text-importance"
TEXT_PRUNING = "text-pruning"
TEXT_LOPARDO_RUN = "text-lopardo-run"        # Lopardo et al. 2024 single-layer attention classifier card
TEXT_LOPARDO_CANCEL = "text-lopardo-cancel"
TEXT_LOPARDO_PROGRESS = "text-lopardo-progress"
TEXT_LOPARDO_STATUS = "text-lopardo-status"
TEXT_LOPARDO_MODEL = "text-lopardo-model"    # store: {"key", "dataset"} of the trained model (on disk, never weights)
TEXT_LOPARDO_SUMMARY = "text-lopardo-summary"
TEXT_LOPARDO_SCORES = "text-lopardo-scores"
TEXT_LOPARDO_AGREEMENT = "text-lopardo-agreement"

# --- Persuasive, issue 4: operator controls, verification, guardrail, dropped panel, global tradeoff ---
ROUNDING = "persuasive-rounding"
GROUPING = "persuasive-grouping"
SENSITIVE = "persuasive-sensitive"
VERIFY = "persuasive-verify"
GUARDRAIL = "persuasive-guardrail"
DROPPED = "persuasive-dropped"
GLOBAL_TRADEOFF = "persuasive-global-tradeoff"

# --- Your model (upload), issue 7: model + data files stored server-side ---
UPLOAD_MODEL = "upload-model"
UPLOAD_DATA = "upload-data"
UPLOAD_MODEL_STATUS = "upload-model-status"
UPLOAD_DATA_STATUS = "upload-data-status"
UPLOAD_MODEL_TOKEN = "upload-model-token"  # store: the stored file's name in the upload folder, never its bytes
UPLOAD_DATA_TOKEN = "upload-data-token"
UPLOAD_TARGET = "upload-target"
UPLOAD_LOAD = "upload-load"
UPLOAD_RESULT = "upload-result"
UPLOAD_SAMPLE = "upload-sample"
UPLOAD_SAMPLE_RESULT = "upload-sample-result"
UPLOAD_SWITCHED = "upload-switched"  # store: what the last upload or "back to the sample" installed (redraws the navbar)
UPLOAD_FEATURES = "upload-features"  # an optional features file: display names and value formats
UPLOAD_FEATURES_STATUS = "upload-features-status"
UPLOAD_FEATURES_TOKEN = "upload-features-token"

# --- Persuasive, rules (issue 4): simplify a frontier surrogate ---
RULES_SOURCE = "persuasive-rules-source"
RULES_KEEP = "persuasive-rules-keep"
RULES_ROUND = "persuasive-rules-round"
RULES_PLAIN = "persuasive-rules-plain"
RULES_SHOWN = "persuasive-rules-shown"
RULES_COST = "persuasive-rules-cost"
RULES_TRADEOFF = "persuasive-rules-tradeoff"

# --- Performance (issue 25): ROC, precision-recall, calibration, confusion at a threshold; regression views ---
PERF_THRESHOLD = "performance-threshold"
PERF_THRESHOLD_TEXT = "performance-threshold-text"
PERF_CONFUSION = "performance-confusion"
PERF_RATES = "performance-rates"
PERF_ROC = "performance-roc"
PERF_PR = "performance-pr"
# --- Dependence (issue 25): SHAP dependence beside partial dependence and ICE curves ---
DEPENDENCE_FEATURE = "dependence-feature"
DEPENDENCE_SHAP = "dependence-shap"
DEPENDENCE_PDP = "dependence-pdp"
DEPENDENCE_NOTES = "dependence-notes"
DEPENDENCE_WAIT_TICK = "dependence-wait-tick"  # asking again until the warm-up has global SHAP
# --- Persuasive, issue 25: the story test and the row's counterfactuals (one background job) ---
STORY_IMMUTABLE = "persuasive-story-immutable"
STORY_RUN = "persuasive-story-run"
STORY_CANCEL = "persuasive-story-cancel"
STORY_PROGRESS = "persuasive-story-progress"
STORY_CARD = "persuasive-story-card"


# --- Cohorts (issue 25): a cohort by filters or an error-tree leaf, its figures, fairness ---
COHORT_FILTER = "cohort-filter"
COHORT_LEAF = "cohort-leaf"
COHORT_SENSITIVE = "cohort-sensitive"
COHORT_NOTE = "cohort-note"
COHORT_TABLE = "cohort-table"
COHORT_TREE = "cohort-tree"
COHORT_MISLEADS = "cohort-misleads"
COHORT_LEAVES = "cohort-leaves"
COHORT_FAIRNESS = "cohort-fairness"
COHORT_NOTES = "cohort-notes"
# --- What-if (issue 25): edit the shown row's features; Descriptive and Persuasive explain the edited row ---
WHATIF = "whatif-row"                  # shell store: {"row": N, "edits": {control name: value}} or None
WHATIF_URL_SYNC = "whatif-url-sync"    # shell store the URL writer outputs to (never holds data)


def whatif_part(page: str, part: str) -> str:
    """A part of a page's what-if editor (each page its own: a callback of one page never waits on another's):
    ``spec`` (store: each control's name, kind, range and options), ``base`` (store: ``{"row", "values"}``, the
    table row's control values), ``note`` (which features differ, or the one-line refusal), ``message`` (the
    browser's refusal of a value outside a control's range), ``reset`` ("Reset to row N"), ``open`` (the folded
    editor's summary: its clicks draw the controls) and ``controls`` (where they are drawn)."""
    return f"{page}-whatif-{part}"


def whatif_value(page: str, index) -> dict:
    """The page's what-if control of the ``index``-th editable feature (:func:`app.services.whatif.controls`)."""
    return {"type": "whatif-value", "page": page, "index": index}

# the Surrogate page's link (issue 25): the fit of the controls' settings, not the default, or a line saying so
SURROGATE_FRONTIER_GO = "surrogate-frontier-go"  # store: set once the page knows it shows the default frontier
SURROGATE_LINK_FIT = "surrogate-link-fit"        # store: set when a link's settings are to be fitted (a job)
SURROGATE_FITTING = "surrogate-fitting"          # store: True while "Fit MUSE" (or a link's fit) runs
SURROGATE_MATCH = "surrogate-match"              # the one line: the view shown is not of the controls' settings
RULES_LINK_NOTE = "persuasive-rules-link-note"    # the line when a link's ?rules= is not on the frontier
