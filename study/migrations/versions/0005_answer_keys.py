"""Idempotency keys of stored submissions (issue 26).

``answer_keys``: one row per stored submission, keyed by the id the browser made for that answer
(``key``, the primary key, so unique), with the participant and the step. It is written in the
same transaction as the answer and the step counter, so a submission resent after a database
outage (the first attempt stored or not) is stored once.

Revision ID: 0005_answer_keys
Revises: 0004_fidelity_measures
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_answer_keys"
down_revision = "0004_fidelity_measures"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "answer_keys",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("participant_id", sa.String(40), sa.ForeignKey("participants.id"), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_answer_keys_participant_id", "answer_keys", ["participant_id"])


def downgrade() -> None:
    op.drop_index("ix_answer_keys_participant_id", table_name="answer_keys")
    op.drop_table("answer_keys")
