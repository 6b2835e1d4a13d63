"""Every component ID in the app (STYLE B3 rule 6): constants, never inline strings."""

# shell
ROW_INPUT = "row-input"
ROW_RANDOM = "row-random"
ROW_STATUS = "row-status"
URL = "url"
NAVBAR = "navbar"

# Model & data
SUMMARY = "overview-summary"
DATA_TABLE = "overview-table"

# Descriptive
GLOBAL_BAR = "descriptive-global-bar"
GLOBAL_BEESWARM = "descriptive-global-beeswarm"
SHAP_WATERFALL = "descriptive-shap-waterfall"
LIME_BAR = "descriptive-lime-bar"
LOCAL_AGREEMENT = "descriptive-agreement"
LOCAL_NOTES = "descriptive-notes"

# Surrogate
SURROGATE_SUMMARY = "surrogate-summary"
SURROGATE_RULES = "surrogate-rules"
SURROGATE_CURVE = "surrogate-curve"

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
