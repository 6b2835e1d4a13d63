"""Every fidelity figure of the explanation shown, logged with each trial phase (issue 16).

``trial_log.fidelity_measures``: JSON of the shown explanation's fidelity measures against its
descriptive parent (mass retained, Spearman, Kendall, sufficiency, comprehensiveness, AOPC,
deletion/insertion AUCs, restricted R², ...); ``fidelity`` keeps the headline (mass retained).
Adding a nullable column leaves the append-only triggers in place.

Revision ID: 0004_fidelity_measures
Revises: 0003_recruitment
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_fidelity_measures"
down_revision = "0003_recruitment"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("trial_log") as batch:
        batch.add_column(sa.Column("fidelity_measures", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("trial_log") as batch:
        batch.drop_column("fidelity_measures")
